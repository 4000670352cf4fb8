// Churn: flows that live a while, fall silent for good and are replaced by
// flows with keys never seen before. fq must collect the idle flows (held
// flows stay bounded), its packet books must balance at every sample, and the
// run must stay deterministic. A short version of scripts/soak.sh.
#include <gtest/gtest.h>

#include <string>

#include "sim/report.hpp"
#include "ufq/sim/simulation.hpp"
#include "ufq/sim/simulation_reference.hpp"

namespace ufq::sim {
namespace {

constexpr std::uint32_t kAlive = 20'000;
constexpr double kRate = 20'000;                 // 1 packet/s per flow: a 1 s gap
constexpr Time kLifetime = 5 * kNsecPerSec;      // 4,000 flows end (and start) per second
constexpr double kGapS = kAlive / kRate;

SimConfig churn(Compat compat) {
  SimConfig c;
  c.traffic = "churn";
  c.flows = kAlive;
  c.rate_pps = kRate;
  c.traffic_settings["flow-lifetime"] = kLifetime;
  c.inflight = 1;
  c.duration = 30 * kNsecPerSec;
  c.interval = kNsecPerSec;
  c.queues = 2;
  c.cpus = 4;
  c.other_irq_per_s = 0;
  c.fq.compat = compat;
  c.fq.limit = 100'000;  // every alive flow keeps its next packet queued
  return c;
}

// An ended flow is idle once its last packet has left (within one gap), and
// collectable 3 s (plus two jiffies) later; fq then holds the alive flows plus the
// ended flows of that window. 1.5x covers the randomness of the end times.
double idle_window_flows() {
  const double ends_per_s = kAlive / (static_cast<double>(kLifetime) / 1e9);
  return 1.5 * ends_per_s * (kGapS + 3.0 + 2.0 / 250);
}

void expect_soak_properties(const SimResult& r, double held_bound) {
  ASSERT_EQ(r.samples.size(), 30u);
  std::uint64_t prev_gc = 0;
  for (const Sample& s : r.samples) {
    SCOPED_TRACE("t = " + std::to_string(static_cast<double>(s.end) / 1e9));
    EXPECT_TRUE(s.census.reconciled()) << s.census.offered << " offered, " << s.census.dequeued << " dequeued, "
                                       << s.census.drops << " drops, " << s.census.qlen << " queued";
    EXPECT_LE(static_cast<double>(s.census.flows), held_bound);
    EXPECT_GE(s.census.gc_flows, prev_gc);
    prev_gc = s.census.gc_flows;
  }
  // Far more flows were created than fq ever held at once: it collected them.
  const double created = static_cast<double>(r.flows_created);
  EXPECT_GT(created, kAlive + 0.8 * (30 - kGapS) * kAlive / 5.0);
  EXPECT_GT(static_cast<double>(r.qdisc.gc_flows), created - held_bound);
  EXPECT_EQ(r.qdisc.gc_flows, r.samples.back().census.gc_flows);
  EXPECT_EQ(r.packets_dropped, 0u);
  EXPECT_EQ(r.packets_offered, r.packets_sent + r.packets_dropped + r.packets_queued);
}

// Linux 6.x collects on every enqueue: fq holds the alive flows plus ~3 s of ended ones.
TEST(Churn, LatestCollectsIdleFlowsWithinTheirIdleTime) {
  const SimResult r = simulate(churn(Compat::latest));
  expect_soak_properties(r, kAlive + idle_window_flows());
}

// Linux 5.7 collects only once more than half the flows are idle: fq holds up
// to about twice the alive flows, but no more.
TEST(Churn, Linux57CollectsOnceHalfTheFlowsAreIdle) {
  const SimResult r = simulate(churn(Compat::linux_5_7));
  expect_soak_properties(r, 2.0 * kAlive + idle_window_flows());
  EXPECT_GT(r.qdisc.gc_flows, 0u);
}

TEST(Churn, SameSeedSameBytes) {
  SimConfig c = churn(Compat::latest);
  c.duration = 6 * kNsecPerSec;
  const std::string a = to_json(simulate(c));
  EXPECT_EQ(a, to_json(simulate(c)));
  c.seed = 2;
  EXPECT_NE(a, to_json(simulate(c)));
}

TEST(Churn, FastAndReferenceSchedulersGiveTheSameRun) {
  SimConfig c = churn(Compat::latest);
  c.flows = 2'000;
  c.rate_pps = 2'000;
  c.duration = 8 * kNsecPerSec;
  c.scheduler = SchedulerKind::reference;
  const std::string ref = to_json(simulate_reference(c));
  c.scheduler = SchedulerKind::fast;
  EXPECT_EQ(ref, to_json(simulate(c)));
}

// Each replacement is a new flow for fq, and only ended flows are collected.
TEST(Churn, EveryEndedFlowIsReplacedByANewKey) {
  SimConfig c = churn(Compat::latest);
  c.duration = 10 * kNsecPerSec;
  c.traffic_settings["flow-lifetime"] = Time{1'000 * kNsecPerSec};  // almost no ends: fq holds just the alive flows
  const SimResult few = simulate(c);
  EXPECT_LT(few.flows_created, kAlive + kAlive / 50);
  EXPECT_LE(few.samples.back().census.flows, few.flows_created);
  EXPECT_GE(few.samples.back().census.flows, kAlive - kAlive / 50);
  EXPECT_LE(few.qdisc.gc_flows, few.flows_created - kAlive);  // only ended flows are collected
}

TEST(Churn, RefusesAZeroLifetime) {
  SimConfig c = churn(Compat::latest);
  c.traffic_settings["flow-lifetime"] = Time{0};
  EXPECT_THROW(simulate(c), std::invalid_argument);
}

}  // namespace
}  // namespace ufq::sim
