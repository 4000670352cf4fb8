// The simulator set up as the kernel-fq guest (ufq/sim/guest.hpp) against
// every recorded Linux 6.1 run (tests/data/kernel-6.1/runs/*.json; the model's
// options and its fitting set in tests/data/kernel-6.1/guest-model.json;
// docs/results.md §3). On the runs not used for fitting: timer interrupts per
// second over the sender's send period within 10 % of the kernel's, and fq's
// throttled, packets and flows within 1 % (packets and flows less the one
// packet of the guest's own that fq carried in every run). The runs that miss
// the 10 % are listed in kKnownMisses with the bound they do meet. And event
// by event against the three traced runs (GuestModelEvents).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {
namespace {

const std::string kData = std::string(UFQ_TEST_DATA_DIR) + "/kernel-6.1";

// Hold-out runs whose timer interrupts are more than 10 % off, and the bound
// each does meet (docs/results.md §3 says why). None at present; the closest
// is pace-f50-p400-s0 at 1.0996.
const std::map<std::string, double> kKnownMisses = {};

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f) << path;
  return nlohmann::json::parse(f);
}

Time parse_time(const std::string& w) {
  std::size_t n = 0;
  const double v = std::stod(w, &n);
  const std::string unit = w.substr(n);
  const double mul = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 1e9;
  return static_cast<Time>(std::llround(v * mul));
}

std::vector<std::string> recorded_runs() {
  std::vector<std::string> runs;
  for (const auto& e : std::filesystem::directory_iterator(kData + "/runs")) {
    const std::string name = e.path().filename().string();
    if (name.size() > 5 && name.ends_with(".json") && !name.ends_with("-trace.json"))
      runs.push_back(name.substr(0, name.size() - 5));
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

// The guest model of guest-model.json with the run's workload, as
// scripts/kernel_compare.py sets it up. `guest` false: the model before issue
// 15 (refill on completion, a tick that never stops).
SimConfig config_for(const nlohmann::json& k, bool guest) {
  const nlohmann::json model = read_json(kData + "/guest-model.json");
  SimConfig c;
  const auto flows = static_cast<std::uint32_t>(k["FLOWS"].get<double>());
  const double pps = k["PPS"].get<double>();
  const auto dur = static_cast<Time>(k["DUR"].get<double>()) * kNsecPerSec;
  const bool edt = k["MODE"].get<std::string>() == "txtime";
  c.traffic = edt ? "edt" : "rate";
  c.flows = flows;
  c.rate_pps = flows * pps;
  c.interval = kNsecPerSec;
  c.queues = 1;
  c.cpus = 1;
  c.nic.dummy = true;
  c.other_irq_per_s = 0;
  c.fq = FqConfig{};  // latest
  c.fq.timer_slack_ns = static_cast<std::uint32_t>(k["fq_options"]["timer_slack"].get<std::uint64_t>());
  if (!guest) {
    c.packet_size = static_cast<std::uint32_t>(k["SIZE"].get<double>()) + 42;
    c.irq_latency = 2'000;
    c.nic.irq_latency = 20'000;
    c.inflight = 5;
    c.duration = dur;
    return c;
  }
  for (const auto& [opt, val] : model["options"].items()) {
    const std::string v = val.get<std::string>();
    if (opt == "--packet-size-extra") c.packet_size = static_cast<std::uint32_t>(k["SIZE"].get<double>() + std::stod(v));
    else if (opt == "--irq-latency") c.irq_latency = parse_time(v);
    else if (opt == "--nic-latency") c.nic.irq_latency = parse_time(v);
    else if (opt == "--guest-sender") c.guest.sender = true;
    else if (opt == "--guest-sndbuf") c.guest.sndbuf = static_cast<std::uint32_t>(std::stoul(v));
    else if (opt == "--guest-wake-at") c.guest.wake_at = static_cast<std::uint32_t>(std::stoul(v));
    else if (opt == "--guest-burst") c.guest.burst = static_cast<std::uint32_t>(std::stoul(v));
    else if (opt == "--guest-send-cost") c.guest.send_cost = parse_time(v);
    else if (opt == "--guest-epoll-cost") c.guest.epoll_cost = parse_time(v);
    else if (opt == "--guest-wake-latency") c.guest.wake_latency_min = parse_time(v);
    else if (opt == "--guest-wake-latency-mean") c.guest.wake_latency_mean = parse_time(v);
    else if (opt == "--nohz-idle") c.guest.nohz_idle = true;
    else if (opt == "--wheel-timers") c.guest.wheel_timers_per_s = std::stod(v);
    else if (opt == "--softirq-cost") c.guest.softirq_cost = parse_time(v);
    else if (opt == "--queues" || opt == "--cpus" || opt == "--nic-dummy" || opt == "--other-irq-rate" || opt == "--compat")
      continue;  // set above, as the file says
    else
      ADD_FAILURE() << "guest-model.json: option " << opt << " unknown to this test";
  }
  c.guest.send_for = dur;
  if (edt) c.guest.lead = parse_time(model["txtime_lead"].get<std::string>());
  c.duration = dur + 2 * kNsecPerSec;  // the send period, its lead and the drain
  return c;
}

bool fitted_on(const std::string& run) {
  const nlohmann::json model = read_json(kData + "/guest-model.json");
  const auto& fit = model["fit"];
  return std::find(fit.begin(), fit.end(), run) != fit.end();
}

struct Agreement {
  double irq, throttled, packets, flows;  // sim / kernel
};

Agreement compare(const nlohmann::json& k, bool guest) {
  const SimResult r = simulate(config_for(k, guest));
  const double kernel_irq = k["LOC_per_s"].get<double>();
  double sim_irq = r.per_s(r.total.n.timer_interrupts);
  if (guest) {
    const double span = static_cast<double>(r.guest.window_end - r.guest.window_start) / 1e9;
    sim_irq = static_cast<double>(r.guest.window.timer_interrupts) / span;
  }
  const double own = k["fq_packets"].get<double>() - k["sent"].get<double>();  // not fqload's
  return {sim_irq / kernel_irq, static_cast<double>(r.qdisc.throttled) / k["fq_throttled"].get<double>(),
          static_cast<double>(r.qdisc.packets) / (k["fq_packets"].get<double>() - own),
          static_cast<double>(r.qdisc.flows) / (k["fq_flows"].get<double>() - (own > 0 ? 1 : 0))};
}

class GuestModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GuestModel, AgreesWithTheKernel) {
  const std::string& run = GetParam();
  const nlohmann::json k = read_json(kData + "/runs/" + run + ".json");
  const Agreement a = compare(k, true);
  EXPECT_NEAR(a.throttled, 1.0, 0.01) << run;
  EXPECT_NEAR(a.packets, 1.0, 0.01) << run;
  EXPECT_NEAR(a.flows, 1.0, 0.01) << run;
  if (fitted_on(run)) {
    // Fitted on: the fit's own residual, within 10 % too.
    EXPECT_NEAR(a.irq, 1.0, 0.10) << run << " (fit)";
    return;
  }
  const auto miss = kKnownMisses.find(run);
  const double bound = miss == kKnownMisses.end() ? 0.10 : miss->second;
  EXPECT_NEAR(a.irq, 1.0, bound) << run << " timer interrupts sim/kernel";
  if (miss != kKnownMisses.end()) {
    EXPECT_GT(std::abs(a.irq - 1.0), 0.10) << run << " now within 10 %: drop it from kKnownMisses";
  }
}

INSTANTIATE_TEST_SUITE_P(Linux61, GuestModel, ::testing::ValuesIn(recorded_runs()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(GuestModelData, EveryRunIsCompared) {
  // 48 recorded runs (the 4 traced ones are summaries, not compared), 4 fitted on.
  EXPECT_EQ(recorded_runs().size(), 48u);
  std::size_t fit = 0;
  for (const std::string& r : recorded_runs()) fit += fitted_on(r);
  EXPECT_EQ(fit, 4u);
}

// Event by event, against the traced kernel runs reduced by
// scripts/event_compare.py (tests/data/kernel-6.1/events/*.json): watchdog
// expiries per second, packets per expiry (their mean) and tick expiries per
// second. The tracer slows the guest a little, hence 15 % (docs/results.md §3
// has the distributions side by side).
TEST(GuestModelEvents, AgreeWithTheTracedKernel) {
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(kData + "/events")) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const nlohmann::json d = read_json(e.path().string());
    nlohmann::json k = d["workload"];
    k["fq_options"] = d["workload"]["fq_options"];
    const SimResult r = simulate(config_for(k, true));
    const auto& w = r.guest.window;
    const double span = static_cast<double>(r.guest.window_end - r.guest.window_start) / 1e9;
    const nlohmann::json& kern = d["kernel"];
    const double wd = static_cast<double>(w.watchdog_fires) / span;
    const double per_expiry = static_cast<double>(w.packets) / static_cast<double>(w.watchdog_fires);
    const double ticks = static_cast<double>(w.timers_run - w.watchdog_fires) / span;
    EXPECT_NEAR(wd / kern["watchdog_expiries_per_s"].get<double>(), 1.0, 0.15) << e.path() << " watchdog " << wd;
    EXPECT_NEAR(per_expiry / kern["packets_per_expiry"]["mean"].get<double>(), 1.0, 0.15)
        << e.path() << " packets per expiry " << per_expiry;
    EXPECT_NEAR(ticks / kern["tick_expiries_per_s"].get<double>(), 1.0, 0.15) << e.path() << " ticks " << ticks;
  }
  EXPECT_EQ(files, 3u);
}

// The test can fail: the model before issue 15 misses the kernel by far more
// than 10 % from 100 us of slack up (its tick never stops) and at 10-20 us.
TEST(GuestModelData, TheOldModelFails) {
  for (const char* run : {"pace-f1000-p20-s500us", "txtime-f1000-p20-s20us"}) {
    const Agreement a = compare(read_json(kData + "/runs/" + std::string(run) + ".json"), false);
    EXPECT_GT(std::abs(a.irq - 1.0), 0.25) << run;
  }
}

}  // namespace
}  // namespace ufq::sim
