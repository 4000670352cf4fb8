// The adaptive timer slack, a ufq extension (docs/fq-rules.md#adaptive-slack):
// each throttled flow allows a fraction of its wait, within [timer_slack, max],
// and the watchdog window ends at the earliest allowance of the flows due in
// it. Both schedulers share the rule (src/core/fq_rules.hpp), so each test runs
// against both.
#include <gtest/gtest.h>

#include <vector>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/reference/scheduler.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/watchdog.hpp"

namespace ufq {
namespace {

constexpr Time kUs = kNsecPerUsec;
constexpr Time kMs = kNsecPerMsec;
constexpr Time kT0 = 10 * kNsecPerSec;

// 10 % of the wait, at least 1 us, at most 1 ms.
FqConfig adaptive_cfg() {
  FqConfig cfg;
  cfg.compat = Compat::latest;
  cfg.timer_slack_ns = 1000;
  cfg.adaptive_slack_ppm = 100'000;
  cfg.adaptive_slack_max_ns = 1'000'000;
  return cfg;
}

// One EDT-stamped packet per owner (TCP-like: no rate, fq honours the stamp).
struct Flows {
  std::vector<FlowOwner> owners = std::vector<FlowOwner>(8);
  std::vector<Packet> packets = std::vector<Packet>(8);
  template <class Q>
  void send(Q& q, std::size_t i, Time now, Time stamp) {
    owners[i].id = i + 1;
    owners[i].tcp = true;
    packets[i] = Packet{};
    packets[i].len = 1514;
    packets[i].owner = &owners[i];
    packets[i].tstamp = stamp;
    ASSERT_EQ(q.enqueue(packets[i], now), Verdict::queued);
  }
};

template <class Q>
class AdaptiveSlack : public ::testing::Test {};
using Schedulers = ::testing::Types<FqScheduler, reference::FqScheduler>;
TYPED_TEST_SUITE(AdaptiveSlack, Schedulers);

// A slow flow (5 ms wait) gets 10 % of it: a 500 us window, not timer_slack's 1 us.
TYPED_TEST(AdaptiveSlack, SlowFlowGetsItsFraction) {
  TypeParam q(adaptive_cfg());
  Flows f;
  f.send(q, 0, kT0, kT0 + 5 * kMs);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  const Watchdog& w = q.watchdog();
  ASSERT_TRUE(w.queued());
  EXPECT_EQ(w.soft_expiry(), kT0 + 5 * kMs);
  EXPECT_EQ(w.hard_expiry(), kT0 + 5 * kMs + 500 * kUs);
}

// A fast flow (20 us wait) keeps its precision: 2 us.
TYPED_TEST(AdaptiveSlack, FastFlowKeepsItsPrecision) {
  TypeParam q(adaptive_cfg());
  Flows f;
  f.send(q, 0, kT0, kT0 + 20 * kUs);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 20 * kUs);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 22 * kUs);
}

// Never below timer_slack (5 us wait: 10 % is 500 ns, the floor 1 us), never above max.
TYPED_TEST(AdaptiveSlack, FloorAndMaxBound) {
  {
    TypeParam q(adaptive_cfg());
    Flows f;
    f.send(q, 0, kT0, kT0 + 5 * kUs);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 6 * kUs);
  }
  {
    TypeParam q(adaptive_cfg());
    Flows f;
    f.send(q, 0, kT0, kT0 + 100 * kMs);  // 10 % would be 10 ms
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 101 * kMs);
  }
}

// A slow flow due first (window [5 ms, 5.5 ms]); then a fast flow throttled
// 20 us before it is due, inside that window: the window must end at the fast
// flow's allowance (2 us after it is due), not at the slow flow's. The
// kernel's keep rule would have kept the first timer (its soft expiry is
// inside the new request's range) and woken the fast flow up to 488 us late.
TYPED_TEST(AdaptiveSlack, HardEndNeverPastTheEarliestAllowance) {
  TypeParam q(adaptive_cfg());
  Flows f;
  f.send(q, 0, kT0, kT0 + 5 * kMs);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5500 * kUs);
  const Time now = kT0 + 5 * kMs - 10 * kUs;
  f.send(q, 1, now, kT0 + 5 * kMs + 10 * kUs);
  EXPECT_EQ(q.dequeue(now), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5 * kMs + 12 * kUs);
  // Once the slow flow has gone, the fast one alone: [its due time, + 2 us].
  ASSERT_EQ(q.dequeue(kT0 + 5 * kMs + 1 * kUs), &f.packets[0]);
  EXPECT_EQ(q.dequeue(kT0 + 5 * kMs + 2 * kUs), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs + 10 * kUs);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5 * kMs + 12 * kUs);
}

// Flows due after the window's end cannot shorten it (their deadline is
// later still); one due inside it with a short allowance does.
TYPED_TEST(AdaptiveSlack, OnlyFlowsDueInsideTheWindowCount) {
  TypeParam q(adaptive_cfg());
  Flows f;
  f.send(q, 0, kT0, kT0 + 5 * kMs);              // window [5 ms, 5.5 ms]
  f.send(q, 1, kT0, kT0 + 5 * kMs + 600 * kUs);  // due after it
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5500 * kUs);
  // Throttled 400 us before it is due at 5.3 ms: allowance 40 us, deadline 5.34 ms.
  const Time now = kT0 + 4900 * kUs;
  f.send(q, 2, now, kT0 + 5300 * kUs);
  EXPECT_EQ(q.dequeue(now), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5340 * kUs);
}

// Off (the default): the kernel's window and keep rule, exactly.
TYPED_TEST(AdaptiveSlack, OffIsTheKernelsFixedWindow) {
  FqConfig cfg = adaptive_cfg();
  cfg.adaptive_slack_ppm = 0;
  TypeParam q(cfg);
  Flows f;
  f.send(q, 0, kT0, kT0 + 5 * kMs);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5 * kMs + 1000);
  // A request whose range holds the queued soft expiry keeps the timer (E21).
  f.send(q, 1, kT0 + 1 * kMs, kT0 + 5 * kMs - 500);
  EXPECT_EQ(q.dequeue(kT0 + 1 * kMs), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs);
}

// change() gives the flows already throttled the new floor as their allowance.
TYPED_TEST(AdaptiveSlack, ChangeResetsAllowancesToTheFloor) {
  FqConfig cfg = adaptive_cfg();
  TypeParam q(cfg);
  Flows f;
  f.send(q, 0, kT0, kT0 + 5 * kMs);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  cfg.timer_slack_ns = 3000;
  q.change(cfg, kT0 + 1 * kMs, {});
  EXPECT_EQ(q.dequeue(kT0 + 1 * kMs), nullptr);
  EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs);
  EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 5 * kMs + 3000);
}

TEST(AdaptiveSlackConfig, RefusedWhereNoKernelHasIt) {
  FqConfig cfg = adaptive_cfg();
  cfg.compat = Compat::linux_5_7;
  const auto err = validate(cfg);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->field(), "adaptive_slack");
  EXPECT_EQ(err->value(), "10%");
  EXPECT_NE(err->valid().find("5.7"), std::string::npos) << err->valid();
  EXPECT_THROW(reference::FqScheduler{cfg}, ConfigError);
  EXPECT_THROW(FqScheduler{cfg}, ConfigError);
}

TEST(AdaptiveSlackConfig, Ranges) {
  FqConfig cfg = adaptive_cfg();
  EXPECT_FALSE(validate(cfg).has_value());
  cfg.adaptive_slack_ppm = kPpm + 1;
  ASSERT_TRUE(validate(cfg).has_value());
  EXPECT_EQ(validate(cfg)->value(), "100.0001%");
  cfg = adaptive_cfg();
  cfg.adaptive_slack_max_ns = 999;  // below timer_slack 1000
  ASSERT_TRUE(validate(cfg).has_value());
  EXPECT_EQ(validate(cfg)->field(), "adaptive_slack max");
  EXPECT_EQ(validate(cfg)->value(), "999ns");
  cfg.adaptive_slack_ppm = 0;  // off: max is not looked at
  EXPECT_FALSE(validate(cfg).has_value());
  EXPECT_EQ(format_ppm_percent(1), "0.0001%");
  EXPECT_EQ(format_ppm_percent(125'000), "12.5%");
  EXPECT_EQ(format_ppm_percent(kPpm), "100%");
}

// The watchdog's request for the extension keeps a queued timer only when its
// whole window lies inside the new one.
TEST(AdaptiveSlackWatchdog, ScheduleWithinKeepsOnlyANestedWindow) {
  Watchdog w;
  EXPECT_TRUE(w.schedule_within(105, 1000));  // [105, 1105]
  EXPECT_TRUE(w.schedule_within(100, 10));    // soft inside [100, 110], hard 1105 not: re-armed
  EXPECT_EQ(w.soft_expiry(), 100u);
  EXPECT_EQ(w.hard_expiry(), 110u);
  EXPECT_FALSE(w.schedule_within(95, 20));    // [100, 110] inside [95, 115]: kept
  EXPECT_EQ(w.hard_expiry(), 110u);
  Watchdog k;                                  // the kernel's rule keeps it
  k.schedule_range(105, 1000);
  EXPECT_FALSE(k.schedule_range(100, 10));
  EXPECT_EQ(k.hard_expiry(), 1105u);
}

}  // namespace
}  // namespace ufq
