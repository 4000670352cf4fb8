// The fast scheduler decides exactly as the reference: both are driven with the
// same long randomized input (tests/core/differential.hpp) under every
// configuration family, and compared after every operation; the reference is
// also checked against the invariants of tests/core/invariants.hpp.
#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>
#include <span>
#include <stdexcept>
#include <string>

#include "burst.hpp"
#include "differential.hpp"
#include "ufq/reference/scheduler.hpp"

namespace ufq::test {
namespace {

// The fast scheduler's burst calls prefetch at any flow count while it
// lives, so that the prefetching code runs here (and under ASan) although
// these runs hold far fewer flows than the default threshold.
class PrefetchAlways {
 public:
  PrefetchAlways() : saved_(detail::burst_prefetch_min_flows()) { detail::set_burst_prefetch_min_flows(0); }
  ~PrefetchAlways() { detail::set_burst_prefetch_min_flows(saved_); }
  PrefetchAlways(const PrefetchAlways&) = delete;
  PrefetchAlways& operator=(const PrefetchAlways&) = delete;

 private:
  std::size_t saved_;
};

using Prng = diff::PrngSource;

struct Variant {
  const char* name;
  void (*tweak)(FqConfig&);
};

const Variant kVariants[] = {
    {"defaults", [](FqConfig&) {}},
    {"small_limits", [](FqConfig& c) { c.limit = 40; c.flow_limit = 6; }},
    {"ce_maxrate", [](FqConfig& c) { c.ce_threshold_us = 20; c.maxrate = 50'000'000; }},
    {"horizon_cap", [](FqConfig& c) { c.horizon_drop = false; c.horizon_us = 1'000'000; }},
    {"tiny_table_gc", [](FqConfig& c) { c.buckets_log = 1; c.orphan_mask = 63; }},
    {"max_flows", [](FqConfig& c) { c.max_flows = 12; }},
    {"offload", [](FqConfig& c) { c.max_offload_horizon_us = 1000; c.offload_horizon_us = 200; }},
    {"no_pacing_quantum", [](FqConfig& c) { c.pacing = false; c.quantum = 600; c.initial_quantum = 0; }},
    // A ufq extension, latest only (docs/fq-rules.md#adaptive-slack); 5.7 runs the defaults here.
    {"adaptive_slack", [](FqConfig& c) {
       if (c.compat != Compat::latest) return;
       c.adaptive_slack_ppm = 250'000;
       c.adaptive_slack_max_ns = 1'000'000;
     }},
};

void run_case(Compat compat, std::uint32_t slack, const Variant& v, std::uint64_t seed, std::size_t ops,
              FqStats& total) {
  FqConfig cfg;
  cfg.compat = compat;
  cfg.timer_slack_ns = slack;
  v.tweak(cfg);
  if (compat == Compat::linux_5_7) cfg.offload_horizon_us = 0;
  if (validate(cfg)) GTEST_SKIP() << v.name << ": not valid";
  Prng src(seed);
  diff::Rig rig(cfg, src, [](const std::string& what) { ADD_FAILURE() << what; });
  rig.run(ops);
  EXPECT_FALSE(rig.failed()) << v.name;
  EXPECT_EQ(rig.ops(), ops);
  const FqStats& s = rig.last_stats();
  total.gc_flows += s.gc_flows;
  total.horizon_drops += s.horizon_drops;
  total.horizon_caps += s.horizon_caps;
  total.ce_mark += s.ce_mark;
  total.fastpath_packets += s.fastpath_packets;
  total.flows_plimit += s.flows_plimit;
  total.drops += s.drops;
  total.trimmed += s.trimmed;
  total.purged += s.purged;
  total.allocation_errors += s.allocation_errors;
  total.highprio_packets += s.highprio_packets;
  total.throttled += s.throttled;
  total.pkts_too_long += s.pkts_too_long;
  total.dequeued += s.dequeued;
}

TEST(Differential, FastEqualsReferenceEverywhere) {
  const PrefetchAlways prefetch;
  FqStats total;
  std::uint64_t seed = 1;
  for (Compat c : {Compat::latest, Compat::linux_5_7}) {
    for (std::uint32_t slack : {0U, 10'000U}) {
      for (const Variant& v : kVariants) {
        SCOPED_TRACE(std::string(to_string(c)) + " slack " + std::to_string(slack) + " " + v.name);
        run_case(c, slack, v, seed++, 25'000, total);
        if (HasFailure()) return;
      }
    }
  }
  // The input reached every feature the comparison is meant to cover.
  EXPECT_GT(total.gc_flows, 0U);
  EXPECT_GT(total.horizon_drops, 0U);
  EXPECT_GT(total.horizon_caps, 0U);
  EXPECT_GT(total.ce_mark, 0U);
  EXPECT_GT(total.fastpath_packets, 0U);
  EXPECT_GT(total.flows_plimit, 0U);
  EXPECT_GT(total.trimmed, 0U);
  EXPECT_GT(total.purged, 0U);
  EXPECT_GT(total.allocation_errors, 0U);
  EXPECT_GT(total.highprio_packets, 0U);
  EXPECT_GT(total.throttled, 0U);
  EXPECT_GT(total.pkts_too_long, 0U);
  EXPECT_GT(total.dequeued, 100'000U);
}

// Configurations drawn over the whole valid range (random_config.hpp) for
// each seed, with change() to valid and refused configurations, reset, packets
// of every shape and wake-ups inside and outside the watchdog window; the
// reference also passes the invariant checker after every operation.
TEST(Differential, RandomConfigurations) {
  const PrefetchAlways prefetch;
  FqStats total;
  std::size_t refused = 0, accepted = 0, wakes = 0, old_kernel = 0, adaptive = 0;
  for (std::uint64_t seed = 1000; seed < 1040; ++seed) {
    SCOPED_TRACE(seed);
    Prng src(seed);
    const FqConfig cfg = diff::random_config(src);
    ASSERT_FALSE(validate(cfg).has_value()) << validate(cfg)->what();
    old_kernel += cfg.compat == Compat::linux_5_7;
    adaptive += cfg.adaptive_slack();
    diff::Rig rig(cfg, src, [](const std::string& what) { ADD_FAILURE() << what; }, 16, 512);
    rig.run(3000);
    ASSERT_FALSE(rig.failed());
    refused += rig.refused_changes();
    accepted += rig.accepted_changes();
    wakes += rig.window_wakes();
    const FqStats& s = rig.last_stats();
    total.dequeued += s.dequeued;
    total.trimmed += s.trimmed;
    total.purged += s.purged;
    total.horizon_caps += s.horizon_caps;
    total.ce_mark += s.ce_mark;
    total.fastpath_packets += s.fastpath_packets;
  }
  EXPECT_GT(old_kernel, 0U);
  EXPECT_GT(adaptive, 0U);
  EXPECT_GT(refused, 0U);
  EXPECT_GT(accepted, 0U);
  EXPECT_GT(wakes, 0U);
  EXPECT_GT(total.dequeued, 10'000U);
  EXPECT_GT(total.trimmed, 0U);
  EXPECT_GT(total.purged, 0U);
  EXPECT_GT(total.horizon_caps, 0U);
  EXPECT_GT(total.ce_mark, 0U);
  EXPECT_GT(total.fastpath_packets, 0U);
}

// Long single runs, one per compat mode, many seeds of the defaults (burst
// calls with the default prefetch threshold: plain loops at these sizes).
TEST(Differential, LongRuns) {
  FqStats total;
  for (Compat c : {Compat::latest, Compat::linux_5_7})
    for (std::uint64_t seed = 100; seed < 104; ++seed) {
      SCOPED_TRACE(seed);
      run_case(c, seed % 2 ? 0 : 10'000, kVariants[0], seed, 100'000, total);
      if (HasFailure()) return;
    }
}

// A verdict span shorter than the packet span is refused, with both sizes
// named, before any packet is touched; an empty out span dequeues nothing.
template <class S>
void check_burst_arguments() {
  S q{FqConfig{}};
  FlowOwner o{.id = 7};
  Packet a{.len = 100, .owner = &o}, b{.len = 100, .owner = &o};
  std::array<Packet*, 2> in{&a, &b};
  std::array<Verdict, 1> verdicts{};
  try {
    q.enqueue_burst(in, kNsecPerSec, verdicts);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 packets but room for 1 verdicts"), std::string::npos) << e.what();
  }
  EXPECT_EQ(q.qlen(), 0U);
  EXPECT_EQ(q.stats(kNsecPerSec).offered, 0U);
  std::array<Verdict, 2> room{};
  EXPECT_EQ(q.enqueue_burst(in, kNsecPerSec, room), 2U);
  EXPECT_EQ(q.dequeue_burst(kNsecPerSec, std::span<Packet*>{}), 0U);
  EXPECT_EQ(q.qlen(), 2U);
  std::array<Packet*, 4> out{};
  EXPECT_EQ(q.dequeue_burst(kNsecPerSec, out), 2U);
  EXPECT_EQ(out[0], &a);
  EXPECT_EQ(out[1], &b);
}

// The benchmarks' shuffled workload (bench/paced_burst.hpp) at 50,016 flows:
// every flow paced by EDT, visited in a new random order every round, so half
// the throttles miss the lane and the throttled heap grows past the size from
// which a pop prefetches (4096 entries), the flow array is on huge pages and the
// burst calls prefetching (more than 4096 flows). The fast scheduler's bursts
// against the reference's single calls: the same packets leave in the same
// order at the same wake-ups, and the counters agree.
TEST(Bursts, ShuffledManyFlowsAsTheReference) {
  constexpr std::size_t kFlows = 50016, kBurst = 32, kRounds = 3;  // whole bursts per round
  FqConfig cfg;
  cfg.limit = 0xFFFFFFFF;
  cfg.horizon_us = 0xFFFFFFFF;
  cfg.buckets_log = 15;
  FqScheduler fast(cfg);
  reference::FqScheduler ref(cfg);
  std::vector<FlowOwner> fo(kFlows), ro(kFlows);
  for (std::size_t i = 0; i < kFlows; ++i) fo[i].id = ro[i].id = i + 1;
  std::vector<Packet> fp(kFlows * kRounds), rp(kFlows * kRounds);
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> order(kFlows);
  std::iota(order.begin(), order.end(), 0U);
  Time now = kNsecPerSec;
  const Time gap = kFlows * 1000;
  std::size_t next = 0, sent = 0;
  std::array<Packet*, kBurst> in_fast{}, in_ref{};
  std::array<Verdict, kBurst> verdicts{};
  std::array<Packet*, 64> out{};
  for (std::size_t round = 0; round < kRounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t first = 0; first < kFlows; first += kBurst) {
      for (std::size_t k = 0; k < kBurst; ++k, ++next) {
        const std::uint32_t f = order[first + k];
        for (auto [pk, own, in] : {std::tuple{&fp[next], &fo[f], &in_fast}, std::tuple{&rp[next], &ro[f], &in_ref}}) {
          pk->len = 1514;
          pk->owner = own;
          pk->tstamp = now + k * 1000 + gap;
          pk->cookie = next;
          (*in)[k] = pk;
        }
      }
      now += kBurst * 1000;
      ASSERT_EQ(fast.enqueue_burst(in_fast, now, verdicts), kBurst);
      for (Packet* p : in_ref) ASSERT_EQ(ref.enqueue(*p, now), Verdict::queued);
      for (std::size_t n; (n = fast.dequeue_burst(now, out)) > 0;) {
        for (std::size_t i = 0; i < n; ++i, ++sent) {
          Packet* r = ref.dequeue(now);
          ASSERT_NE(r, nullptr) << "packet " << sent;
          ASSERT_EQ(out[i]->cookie, r->cookie) << "packet " << sent;
          ASSERT_EQ(out[i]->due, r->due) << "packet " << sent;
        }
        if (n < out.size()) break;
      }
      ASSERT_EQ(ref.dequeue(now), nullptr);
    }
  }
  EXPECT_GT(sent, kFlows);  // rounds 2 and 3 send round 1 and half of round 2
  const FqStats a = fast.stats(now), b = ref.stats(now);
  EXPECT_EQ(a.throttled, b.throttled);
  EXPECT_EQ(a.qlen, b.qlen);
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_GT(a.throttled_flows, 4096U);
  fast.reset();
  ref.reset();
}

TEST(Bursts, ArgumentsChecked) {
  check_burst_arguments<FqScheduler>();
  check_burst_arguments<reference::FqScheduler>();
}

}  // namespace
}  // namespace ufq::test
