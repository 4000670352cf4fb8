#include "sim_budget.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "memory_budget.hpp"

namespace ufq::cli {
namespace {

// Measured on the release build (peak RSS over --flows and --inflight
// sweeps): about 220 bytes per flow (its state, start event and fq's flow
// record), 100 per pooled packet, 20 KiB per transmit queue and 32 per
// bucket of the reference scheduler's flow table. Rounded up for headroom.
constexpr double kBytesPerFlow = 320;
constexpr double kBytesPerPacket = 128;
constexpr double kBytesPerQueue = 32 * 1024;
constexpr double kBytesPerReferenceBucket = 40;
constexpr double kBaseBytes = 16 * 1024 * 1024;
// A run on a thread of its own (--jobs): the thread's stack.
constexpr double kBytesPerThread = 8 * 1024 * 1024;

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

struct Term {
  double amount;
  std::string what;  // the options that drive it
};

// "what (--a, --b)": a model's work, the settings that drive it named as options.
Term term(const sim::TrafficWork& w) {
  std::string t = w.what;
  if (!w.settings.empty()) {
    t += " (";
    for (std::size_t i = 0; i < w.settings.size(); ++i) t += (i ? ", --" : "--") + w.settings[i];
    t += ")";
  }
  return {w.per_s, t};
}

// Packets per second the traffic can offer: an upper bound, not a forecast.
Term packet_rate(const sim::SimConfig& c) {
  const double wire_pps = c.nic.dummy ? 1e300
                                      : static_cast<double>(c.queues) * static_cast<double>(c.nic.line_rate_bps) /
                                            (8.0 * (c.packet_size + c.nic.wire_overhead));
  const sim::TrafficModelInfo* m = sim::find_traffic_model(c.traffic);
  Term t = m && m->packets ? term(m->packets(c)) : term({c.rate_pps, "packets", {"rate", "duration"}});
  if (wire_pps < t.amount) {
    t.amount = wire_pps;
    if (!m || !m->packets) t.what = "packets (--nic-rate x --queues / --packet-size)";
  }
  return t;
}

}  // namespace

std::string check_sim_plan(const sim::SimConfig& c, std::size_t runs, std::size_t concurrent) {
  const double seconds = static_cast<double>(c.duration) / 1e9;
  const double samples = static_cast<double>(c.duration) / static_cast<double>(c.interval);
  if (samples > kMaxSimSamples)
    return "--interval: --duration / --interval is " + sci(samples) + " samples, more than " + sci(kMaxSimSamples) +
           " per run; give a longer --interval";

  // Work: the events the run would simulate, the biggest term named.
  std::vector<Term> work;
  const Term rate = packet_rate(c);
  work.push_back({rate.amount * seconds, rate.what});
  if (const sim::TrafficModelInfo* m = sim::find_traffic_model(c.traffic); m && m->work) {
    Term w = term(m->work(c));
    w.amount *= seconds;
    work.push_back(w);
  }
  work.push_back(
      {static_cast<double>(c.tick_hz) * c.queues * seconds, "timer ticks (--tick-hz x --queues x --duration)"});
  work.push_back({c.other_irq_per_s * seconds, "other interrupts (--other-irq-rate x --duration)"});
  work.push_back({static_cast<double>(c.flows), "flows (--flows)"});
  double events = 0;
  const Term* biggest = &work.front();
  for (const Term& t : work) {
    events += t.amount;
    if (t.amount > biggest->amount) biggest = &t;
  }
  events *= static_cast<double>(runs);
  if (!(events <= kMaxSimEvents))
    return "the run would simulate about " + sci(events) + " events, mostly " + biggest->what + ", more than " +
           sci(kMaxSimEvents) + " (hours of CPU)" +
           (runs > 1 ? " over " + std::to_string(runs) + " --compare runs" : "") +
           "; shorten --duration or scale the workload down";

  // Memory: the flows, packets and tables of the runs at once (--jobs), every
  // run's samples.
  const auto at_once = static_cast<double>(std::max<std::size_t>(concurrent, 1));
  const std::string jobs = concurrent > 1 ? " x --jobs " + std::to_string(concurrent) : std::string();
  std::vector<Term> memory;
  memory.push_back({static_cast<double>(c.flows) * kBytesPerFlow * at_once, "--flows" + jobs});
  if (c.guest.sender)  // the guest's sockets hold --guest-sndbuf each instead
    memory.push_back({static_cast<double>(c.flows) * c.guest.sndbuf * kBytesPerPacket * at_once,
                      "--flows x --guest-sndbuf" + jobs});
  else
    memory.push_back(
        {static_cast<double>(c.flows) * c.inflight * kBytesPerPacket * at_once, "--flows x --inflight" + jobs});
  memory.push_back({static_cast<double>(c.queues) * kBytesPerQueue * at_once, "--queues" + jobs});
  if (c.scheduler == sim::SchedulerKind::reference)
    memory.push_back({static_cast<double>(c.queues) * static_cast<double>(c.fq.buckets()) * kBytesPerReferenceBucket *
                          at_once,
                      "--queues x fq buckets (--scheduler reference)" + jobs});
  memory.push_back({samples * sizeof(sim::Sample) * 2 * static_cast<double>(runs), "--duration / --interval"});
  double bytes = kBaseBytes + (concurrent > 1 ? kBytesPerThread * at_once : 0);
  const Term* largest = &memory.front();
  for (const Term& t : memory) {
    bytes += t.amount;
    if (t.amount > largest->amount) largest = &t;
  }
  return check_memory(bytes, largest->what, "lower it");
}

std::size_t sim_runs_that_fit(const std::vector<sim::SimConfig>& configs, std::size_t wanted) {
  const auto fits = [&](std::size_t at_once) {
    return std::all_of(configs.begin(), configs.end(), [&](const sim::SimConfig& c) {
      return check_sim_plan(c, configs.size(), at_once).empty();
    });
  };
  // The memory grows with the runs at once, so what fits is a prefix of 1..wanted.
  std::size_t lo = 1, hi = std::max<std::size_t>(wanted, 1);
  if (fits(hi)) return hi;
  while (hi - lo > 1) {  // fits(lo) or lo == 1; !fits(hi)
    const std::size_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace ufq::cli
