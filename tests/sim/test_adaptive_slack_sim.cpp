// The adaptive slack (docs/fq-rules.md#adaptive-slack) in the simulator, on a
// small mixed workload (traffic model `mixed`): one 1 Gbit/s flow (a 1514-byte
// packet every 12 us) and 1000 flows at 1 Mbit/s (every 12 ms) over two
// transmit queues, so one queue carries only slow flows. The targets of
// docs/results.md: fewer wake-ups than a fixed 10 us slack, and no class of
// flows late at p99 by more than the fraction of its gap it was given.
#include <gtest/gtest.h>

#include <string>

#include "sim/report.hpp"
#include "ufq/sim/simulation.hpp"
#include "ufq/sim/simulation_reference.hpp"

namespace ufq::sim {
namespace {

constexpr double kFraction = 1.0;  // adaptive_slack 100%
constexpr Time kMax = kNsecPerMsec;

SimConfig mixed(bool adaptive) {
  SimConfig c;
  c.traffic = "mixed";
  c.traffic_settings["fast-flows"] = Time{1};
  c.flows = 1001;
  c.duration = 200 * kNsecPerMsec;
  c.interval = 100 * kNsecPerMsec;
  c.queues = 2;
  c.cpus = 2;
  c.fq = FqConfig{};
  c.fq.compat = Compat::latest;
  c.fq.timer_slack_ns = 10'000;
  if (adaptive) {
    c.fq.timer_slack_ns = 1'000;
    c.fq.adaptive_slack_ppm = static_cast<std::uint32_t>(kFraction * kPpm);
    c.fq.adaptive_slack_max_ns = static_cast<std::uint32_t>(kMax);
  }
  return c;
}

TEST(AdaptiveSlackSim, FewerWakeUpsThanFixed10usAndEveryClassWithinItsFraction) {
  const SimResult fixed = simulate(mixed(false));
  const SimResult adaptive = simulate(mixed(true));
  ASSERT_EQ(adaptive.classes.size(), 2u);
  EXPECT_EQ(adaptive.classes[0].name, "fast");
  EXPECT_EQ(adaptive.classes[0].flows, 1u);
  EXPECT_EQ(adaptive.classes[1].flows, 1000u);
  EXPECT_LT(adaptive.total.n.watchdog_fires, fixed.total.n.watchdog_fires);
  EXPECT_LT(adaptive.total.n.timer_interrupts, fixed.total.n.timer_interrupts);
  for (const ClassLateness& k : adaptive.classes) {
    ASSERT_GT(k.lateness.count(), 100u) << k.name;
    EXPECT_LE(k.of_gap(0.99), kFraction) << k.name;
  }
  // The slow flows are held to the maximum (plus the interrupt latency), not to their 12 ms.
  EXPECT_LE(adaptive.classes[1].lateness.quantile(0.99), kMax + mixed(true).irq_latency + kNsecPerUsec);
  // And they did use their slack: later than with the fixed 10 us, so fewer wake-ups.
  EXPECT_GT(adaptive.classes[1].lateness.quantile(0.99), fixed.classes[1].lateness.quantile(0.99));
  // The fast flow is more precise than under the fixed 10 us (which lets it be a whole gap late).
  EXPECT_LT(adaptive.classes[0].of_gap(0.99), fixed.classes[0].of_gap(0.99));
  EXPECT_EQ(adaptive.packets_offered, adaptive.packets_sent + adaptive.packets_dropped + adaptive.packets_queued);
}

// Both schedulers decide the adaptive window identically: the same run, byte for byte.
TEST(AdaptiveSlackSim, FastAndReferenceSchedulersGiveTheSameRun) {
  SimConfig c = mixed(true);
  c.duration = 50 * kNsecPerMsec;
  c.scheduler = SchedulerKind::reference;
  const std::string ref = to_json(simulate_reference(c));
  c.scheduler = SchedulerKind::fast;
  EXPECT_EQ(ref, to_json(simulate(c)));
  EXPECT_NE(ref.find("\"lateness_classes\""), std::string::npos);
}

}  // namespace
}  // namespace ufq::sim
