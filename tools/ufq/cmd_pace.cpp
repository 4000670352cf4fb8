// `ufq pace`: run the real-time pacer on real UDP and measure it the way the
// seed's experiment did (vmstat every 2 s next to the pacer's own wake-ups).
//
//   ufq pace [--flows N] [--rate PPS] [--packet-size B] [--duration T]
//            [--timer nanosleep|epoll|timerfd|busy|hybrid|tick] [--spin T] [--tick T]
//            [--egress shared|per-flow|sink] [--no-gso] [--netns] [--dest HOST:PORT] [--queues N]
//            [--compare KEY=V1,V2,...] [--json] [--quiet] [fq [FQ OPTIONS...]]
//
// The words after `fq` go to the tc-fq parser, as in `ufq show`. --compare
// runs the same workload once per value: KEY is an fq option keyword
// (timer_slack=0,10us,50us), `timer` or `egress`.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "memory_budget.hpp"
#include "ufq/rt/clock.hpp"
#include "pace/pace_run.hpp"
#include "pace/report.hpp"
#include "pace/stop_signal.hpp"
#include "pace/wire.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::cli {
namespace {

struct PaceArgs {
  std::uint32_t flows = 1000;
  std::string rate = "100000";
  std::uint32_t packet_size = 1200;
  std::string duration = "10s";
  std::string interval = "2s";
  std::string timer = "nanosleep";
  std::string spin = "50us";
  std::string tick = "1ms";
  std::string lead = "5ms";
  std::string egress = "shared";
  bool no_gso = false;
  bool netns = false;
  std::string dest;
  bool json = false;
  bool quiet = false;
  bool pin = false;
  int nice = 0;
  bool no_probe = false;
  std::string compare;
  std::uint64_t seed = 1;
  std::string compat = "latest";
  std::uint32_t queues = 1;
};

// 100000, 100k, 1.5M
std::optional<double> parse_pps(const std::string& word) {
  if (word.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(word.c_str(), &end);
  const std::string suffix = end ? end : "";
  if (suffix == "k" || suffix == "K") v *= 1e3;
  else if (suffix == "m" || suffix == "M") v *= 1e6;
  else if (!suffix.empty()) return std::nullopt;
  if (!(v > 0) || v > 1e8) return std::nullopt;
  return v;
}

struct RunPlan {
  std::string label;
  rt::PaceOptions opt;
};

// Refusal text for a run that could not get its sockets or memory, checked
// before any socket, namespace or thread exists; empty when it fits.
std::string check_pace_plan(const rt::PaceOptions& o) {
  const std::uint32_t flows = o.workload.flows;
  if (o.blast && o.queues > 1)
    return "--timer blast sends from one thread: it excludes --queues " + std::to_string(o.queues) +
           " (use --queues 1)";
  if (o.egress == rt::EgressKind::udp_per_flow) {
    // One socket per flow, plus the receiver's, the /proc readers' and stdio.
    constexpr std::uint64_t kOtherFiles = 64;
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY && flows + kOtherFiles > r.rlim_cur)
      return "--egress per-flow opens one socket per flow: --flows " + std::to_string(flows) +
             " needs more than the " + std::to_string(r.rlim_cur) +
             " open files allowed (ulimit -n); lower --flows or raise ulimit -n";
  }
  // The packet pool as run_pace sizes it (the lead time plus 100 ms of
  // packets, at most 4M), and per-flow state on both ends; measured on the
  // release build at about 170 bytes per flow and 120 per pooled packet,
  // plus the packet's payload buffer.
  const double pool =
      std::min(4e6, o.workload.rate_pps * (static_cast<double>(o.workload.lead_ns) / 1e9 + 0.1) + 4096.0);
  // Each pooled datagram also has its own payload buffer (not with the sink).
  const double payload = o.egress == rt::EgressKind::sink ? 0.0 : static_cast<double>(o.workload.payload);
  // Each further queue: its pool's 4096 spare packets and its ring.
  const double per_queue = 4096.0 * (128.0 + payload) + 16.0 * (1U << 16);
  const double bytes = 64.0 * 1024 * 1024 + flows * 256.0 + pool * (128.0 + payload) +
                       (o.queues - 1) * per_queue;
  return check_memory(bytes, "--flows, --rate x --lead, --packet-size", "lower them");
}

int pace(const PaceArgs& a, CLI::App& sub) {
  rt::PaceOptions base;
  base.workload.flows = a.flows;
  const auto rate = parse_pps(a.rate);
  if (!rate)
    return fail("--rate: \"" + a.rate + "\" is not a packet rate above 0 and up to 100M (e.g. 100000, 100k, 1M)");
  base.workload.rate_pps = *rate;
  if (a.packet_size < rt::kWireHeaderSize || a.packet_size > 65000)
    return fail("--packet-size: " + std::to_string(a.packet_size) + " is outside 24..65000 bytes");
  base.workload.payload = a.packet_size;
  base.workload.seed = a.seed;
  if (a.flows == 0 || a.flows > 1'000'000) return fail("--flows: must be 1..1000000");
  if (1e9 * a.flows / *rate > 1e11)
    return fail("--rate: each flow would send less than one packet per 100 s");
  const auto duration = parse_time_arg(a.duration, 1e9);
  if (!duration || *duration == 0 || *duration > 86400 * kNsecPerSec)
    return fail("--duration: \"" + a.duration + "\" is not a time up to a day (e.g. 10, 10s, 500ms)");
  base.duration_ns = *duration;
  const auto interval = parse_time_arg(a.interval, 1e9);
  if (!interval || *interval < 100 * kNsecPerMsec || *interval > 86400 * kNsecPerSec)
    return fail("--interval: \"" + a.interval + "\" is not a time from 100ms to a day");
  base.interval_ns = *interval;
  const auto spin = parse_time_arg(a.spin, 1e3);
  if (!spin || *spin > kNsecPerSec) return fail("--spin: \"" + a.spin + "\" is not a time up to 1s");
  const auto tick = parse_time_arg(a.tick, 1e3);
  if (!tick || *tick < kNsecPerUsec || *tick > kNsecPerSec)
    return fail("--tick: \"" + a.tick + "\" is not a time in 1us..1s");
  const auto lead = parse_time_arg(a.lead, 1e3);
  if (!lead || *lead > kNsecPerSec) return fail("--lead: \"" + a.lead + "\" is not a time up to 1s");
  base.workload.lead_ns = *lead;
  // `blast` is not a wake-up strategy: the same packets unpaced (pace_run.hpp).
  const auto timer = a.timer == "blast" ? std::optional{rt::TimerKind::nanosleep}
                                        : rt::parse_timer_kind(a.timer);
  if (!timer)
    return fail("--timer: \"" + a.timer + "\" is not one of " + rt::timer_kind_names() + "|blast");
  base.sleeper.kind = *timer;
  base.blast = a.timer == "blast";
  base.sleeper.spin_ns = *spin;
  base.sleeper.tick_ns = *tick;
  const auto egress = rt::parse_egress_kind(a.egress);
  if (!egress) return fail("--egress: \"" + a.egress + "\" is not one of shared|per-flow|sink");
  base.egress = *egress;
  base.gso = !a.no_gso;
  base.netns = a.netns;
  if (!a.dest.empty()) {
    std::string why;
    const auto d = rt::Address::parse(a.dest, &why);
    if (!d) return fail("--dest: " + why + "; expected HOST:PORT or [IPv6]:PORT");
    if (a.netns) return fail("--dest sends to a receiver you run: it excludes --netns");
    if (*egress == rt::EgressKind::sink) return fail("--dest needs a UDP egress (shared or per-flow), not sink");
    base.dest = *d;
  }
  base.probe_timer = !a.no_probe;
  if (a.queues < 1 || a.queues > 64) return fail("--queues: " + std::to_string(a.queues) + " is outside 1..64");
  base.queues = a.queues;
  if (a.nice < -20 || a.nice > 19) return fail("--nice: must be -20..19");
  base.pacer_nice = a.nice;
  if (a.pin && rt::cpu_count() >= 2) {
    base.pacer_cpu = rt::cpu_count() - 1;
    base.helper_cpu = 0;
  }

  // fq options after the word `fq`.
  FqConfig fq_base;
  fq_base.compat = a.compat == "5.7" ? Compat::linux_5_7 : Compat::latest;
  std::vector<std::string> words = sub.remaining();
  if (!words.empty()) {
    if (words[0] != "fq")
      return fail("unexpected \"" + words[0] +
                  "\": expected `fq [OPTIONS...]` (ufq options go before `fq`)");
    words.erase(words.begin());
  }
  std::vector<std::string> notes;
  tc::ParseOptions popt;
  popt.notes = &notes;
  const auto cfg = tc::parse_fq_options(words, fq_base, popt);
  if (!cfg) return fail(cfg.error().message);
  for (const auto& n : notes) note(n);
  base.fq = *cfg;

  // The runs: one, or one per --compare value.
  std::vector<RunPlan> plans;
  if (a.compare.empty()) {
    plans.push_back({"", base});
  } else {
    const auto eq = a.compare.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.compare.size())
      return fail("--compare: expected KEY=V1,V2,... (e.g. timer_slack=0,10us,50us)");
    const std::string key = a.compare.substr(0, eq);
    for (const std::string& v : split_list(a.compare.substr(eq + 1), ',')) {
      if (v.empty()) return fail("--compare: empty value in \"" + a.compare + "\"");
      RunPlan p{key + "=" + v, base};
      if (key == "timer") {
        const auto k = v == "blast" ? std::optional{rt::TimerKind::nanosleep} : rt::parse_timer_kind(v);
        if (!k)
          return fail("--compare timer: \"" + v + "\" is not one of " + rt::timer_kind_names() + "|blast");
        p.opt.sleeper.kind = *k;
        p.opt.blast = v == "blast";
      } else if (key == "egress") {
        const auto k = rt::parse_egress_kind(v);
        if (!k) return fail("--compare egress: \"" + v + "\" is not one of shared|per-flow|sink");
        p.opt.egress = *k;
      } else {
        std::vector<std::string> w = words;
        w.push_back(key);
        w.push_back(v);
        const auto c = tc::parse_fq_options(w, fq_base);
        if (!c) return fail("--compare " + key + "=" + v + ": " + c.error().message);
        p.opt.fq = *c;
      }
      p.opt.label = p.label;
      plans.push_back(std::move(p));
    }
  }

  for (const RunPlan& p : plans)
    if (const std::string refusal = check_pace_plan(p.opt); !refusal.empty()) return fail(refusal);

  rt::StopSignal signals;
  std::ostream& human = a.json ? std::cerr : std::cout;
  std::vector<rt::PaceReport> reports;
  for (RunPlan& p : plans) {
    if (signals.requested()) break;
    p.opt.stop = &rt::StopSignal::flag();
    if (!a.quiet) {
      p.opt.on_probe = [&human](const rt::TimerLatency& t) {
        human << rt::format_timer_latency(t) << std::flush;
      };
      p.opt.on_interval = [&human](const rt::IntervalReport& r) {
        human << rt::format_interval(r) << std::flush;
      };
      human << "ufq pace" << (p.label.empty() ? "" : " [" + p.label + "]") << ": "
            << p.opt.workload.flows << " flows, " << p.opt.workload.rate_pps << " pkt/s, timer "
            << rt::to_string(p.opt.sleeper.kind)
            << (p.opt.queues > 1 ? ", " + std::to_string(p.opt.queues) + " queues" : std::string())
            << ", fq timer_slack "
            << tc::format_time64_ns(static_cast<std::int64_t>(p.opt.fq.timer_slack_ns)) << "\n"
            << std::flush;
    }
    if (!a.quiet) {
      // The header goes out just before the first interval line.
      auto first = std::make_shared<bool>(true);
      auto inner = p.opt.on_interval;
      p.opt.on_interval = [first, inner, &human](const rt::IntervalReport& r) {
        if (*first) human << rt::format_interval_header();
        *first = false;
        inner(r);
      };
    }
    reports.push_back(rt::run_pace(p.opt));
    if (!a.quiet) human << rt::format_summary(reports.back()) << std::flush;
  }
  if (reports.size() > 1 && !a.quiet) human << "\n" << rt::format_comparison(reports) << std::flush;
  if (a.json) {
    std::cout << "[";
    for (std::size_t i = 0; i < reports.size(); ++i)
      std::cout << (i ? ",\n" : "") << rt::format_json(reports[i]);
    std::cout << "]\n" << std::flush;
  }
  // Every packet must be sent, dropped with a reason, failed with an errno or
  // still queued; a run that cannot say where a packet went is not a success.
  for (const rt::PaceReport& r : reports) {
    if (!r.accounting.balanced()) {
      std::cerr << "ufq: pace: packet accounting unbalanced (" << r.accounting.produced << " produced, "
                << r.accounting.accounted() << " accounted for)\n";
      return kExitInvariant;
    }
    if (r.packets_extra > 0) {
      std::cerr << "ufq: pace: the receiver got " << r.packets_extra
                << " datagrams more than were sent (duplicated on the path?)\n";
      return kExitInvariant;
    }
  }
  return kExitOk;
}

}  // namespace

void add_pace_command(Commands& commands) {
  auto a = std::make_shared<PaceArgs>();
  CLI::App* sub = commands.add(
      "pace", "Pace N UDP flows through fq on a real-time pacer thread and measure wake-ups",
      [a](CLI::App& self) { return pace(*a, self); });
  sub->footer(
      "Usage: ufq pace [OPTIONS] [fq [FQ OPTIONS...]]\n"
      "Sends real UDP packets to a receiver on 127.0.0.1 (or across a veth pair with --netns,\n"
      "or to any IPv4/IPv6 receiver of yours with --dest HOST:PORT)\n"
      "and prints, every 2 s, system interrupts/s, context switches/s and CPU from /proc next to\n"
      "the pacer's wake-ups/s, packets per wake-up and packets/s; then a summary.\n"
      "Everything after `fq` is read as tc-fq(8) options:\n  fq " +
      std::string(tc::fq_usage()));
  sub->prefix_command();
  sub->add_option("--flows", a->flows, "paced flows")->check(integer_in(1, 1'000'000))->capture_default_str();
  sub->add_option("--rate", a->rate, "total packets/s over all flows (100000, 100k, 1M)")
      ->capture_default_str();
  sub->add_option("--packet-size", a->packet_size, "UDP payload bytes (24..65000)")
      ->check(integer_in(rt::kWireHeaderSize, 65000))
      ->capture_default_str();
  sub->add_option("--duration", a->duration, "how long to send (bare number: seconds)")
      ->capture_default_str();
  sub->add_option("--interval", a->interval, "report interval (bare number: seconds)")
      ->capture_default_str();
  sub->add_option("--timer", a->timer,
                  std::string("wake-up strategy: ") + rt::timer_kind_names() +
                      ", or blast: the same packets unpaced, as fast as the socket takes them")
      ->capture_default_str();
  sub->add_option("--spin", a->spin, "hybrid: spin this long before the window (bare: us)")
      ->capture_default_str();
  sub->add_option("--tick", a->tick, "tick: the timer grid (bare: us)")->capture_default_str();
  sub->add_option("--lead", a->lead, "hand packets to the pacer this early (bare: us)")
      ->capture_default_str();
  sub->add_option("--egress", a->egress,
                  "shared (one socket, sendmmsg across flows), per-flow (connected sockets), sink")
      ->capture_default_str();
  sub->add_flag("--no-gso", a->no_gso, "never use UDP GSO");
  sub->add_flag("--netns", a->netns,
                "send across a veth pair between two network namespaces created for the run (root)");
  sub->add_option("--dest", a->dest,
                  "send to this receiver instead of the built-in one (HOST:PORT, [IPv6]:PORT); "
                  "only send-side figures are reported");
  sub->add_option("--compare", a->compare,
                  "run once per value: KEY=V1,V2,... with KEY an fq option, `timer` or `egress`");
  sub->add_flag("--json", a->json, "print a JSON array (one object per run) on stdout");
  sub->add_flag("-q,--quiet", a->quiet, "no interval lines or summaries");
  sub->add_flag("--pin", a->pin,
                "pin the pacer to the last CPU, producer and receiver to CPU 0; with --queues N, "
                "queue q's pacer and producer to CPU q mod the CPU count");
  sub->add_option("--queues", a->queues,
                  "pacer queues, one pacer thread, fq, producer and socket each (1..64); flows "
                  "steered by the hash of their owner; reported per queue and in total (tc -s mq)")
      ->check(integer_in(1, 64))
      ->capture_default_str();
  sub->add_option("--nice", a->nice, "nice value of the pacer and receiver threads (-20..19; <0 needs root)")
      ->check(integer_in(-20, 19))
      ->capture_default_str();
  sub->add_flag("--no-probe", a->no_probe, "skip the timer-latency measurement at start");
  sub->add_option("--seed", a->seed, "flow phases' random seed")
      ->check(integer_in(0, UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--compat", a->compat, "kernel whose fq to run")
      ->check(CLI::IsMember({"latest", "5.7"}))
      ->capture_default_str();
}

}  // namespace ufq::cli
