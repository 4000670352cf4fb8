// Late-departure compensation with an offload horizon (docs/fq-rules.md#late-departure-compensation,
// docs/features.md "Kernel fixes of 2025-2026"). Both schedulers share the rule
// (src/core/fq_rules.hpp), so each test runs against both.
//
// With offload_horizon H a throttled flow is released, and its packet sent, as
// soon as now + H reaches its time_next_packet: up to H *before* it. The old rule
// `gap -= min(gap/2, now - time_next_packet)` then takes an unsigned difference
// that wraps to ~2^64 and halves the gap; the 2026 kernel compensates only when
// the flow is really late.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/reference/scheduler.hpp"
#include "ufq/scheduler.hpp"

namespace ufq {
namespace {

constexpr Time kUs = kNsecPerUsec;
constexpr Time kT0 = 10 * kNsecPerSec;
// 1514-byte packets of a 50 000 B/s owner (<= low_rate_threshold): a gap after
// every packet of 1514e9 / 50000 = 30 280 000 ns.
constexpr Rate kRate = 50'000;
constexpr Time kGap = 30'280'000;

template <class Q>
std::optional<FlowInfo> flow_of(const Q& q, std::uint64_t key) {
  std::optional<FlowInfo> out;
  q.for_each_flow([&](const FlowInfo& f) {
    if (f.key == key) out = f;
  });
  return out;
}

FqConfig offload_cfg() {
  FqConfig cfg;
  cfg.compat = Compat::latest;
  cfg.max_offload_horizon_us = 1000;
  cfg.offload_horizon_us = 200;
  return cfg;
}

template <class Q>
class PacingOffload : public ::testing::Test {};
using Schedulers = ::testing::Types<FqScheduler, reference::FqScheduler>;
TYPED_TEST_SUITE(PacingOffload, Schedulers);

// Sent 100 us before its time_next_packet (inside the 200 us offload horizon):
//   dequeue(T0)                 -> p1, credit forced 0, next = T0 + G
//   dequeue(T0 + G - 100 us)    -> p2 (now + H >= T0 + G), early by 100 us
//     fixed rule: no compensation          -> next = now + G
//     old rule:   min(G/2, 2^64 - 100 us)  -> next = now + G/2  (the bug)
TYPED_TEST(PacingOffload, EarlyReleaseKeepsTheWholeGap) {
  TypeParam q(offload_cfg());
  FlowOwner o;
  o.id = 7;
  o.pacing_rate = o.max_pacing_rate = kRate;  // non-TCP with a rate: never the fast path
  std::vector<Packet> pk(3);
  for (auto& p : pk) {
    p.len = 1514;
    p.owner = &o;
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
  }
  const std::uint64_t key = o.id << 1;

  ASSERT_EQ(q.dequeue(kT0), &pk[0]);
  ASSERT_TRUE(flow_of(q, key).has_value());
  EXPECT_EQ(flow_of(q, key)->time_next_packet, kT0 + kGap);

  EXPECT_EQ(q.dequeue(kT0 + kGap - 201 * kUs), nullptr);  // outside the horizon: held
  const Time early = kT0 + kGap - 100 * kUs;
  ASSERT_EQ(q.dequeue(early), &pk[1]);
  EXPECT_EQ(flow_of(q, key)->time_next_packet, early + kGap)
      << "halved gap (old rule) would give " << early + kGap / 2;

  // A really late departure is still compensated (at most by half).
  const Time late = early + kGap + 40 * kUs;
  ASSERT_EQ(q.dequeue(late), &pk[2]);
  EXPECT_EQ(flow_of(q, key)->time_next_packet, late + kGap - 40 * kUs);
}

// The same flow over many packets: with early releases every time, the old rule
// paced at about twice the owner's rate; the fixed rule keeps each gap >= G - H.
TYPED_TEST(PacingOffload, EarlyReleasesDoNotDoubleTheRate) {
  TypeParam q(offload_cfg());
  FlowOwner o;
  o.id = 9;
  o.pacing_rate = o.max_pacing_rate = kRate;
  constexpr int kN = 20;
  std::vector<Packet> pk(kN);
  for (auto& p : pk) {
    p.len = 1514;
    p.owner = &o;
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
  }
  // Poll every 50 us, as a NIC with EDT offload would let the driver do.
  std::vector<Time> sent;
  for (Time now = kT0; sent.size() < kN && now < kT0 + 2 * kN * kGap; now += 50 * kUs)
    while (Packet* p = q.dequeue(now)) {
      (void)p;
      sent.push_back(now);
    }
  ASSERT_EQ(sent.size(), static_cast<std::size_t>(kN));
  for (std::size_t i = 1; i < sent.size(); ++i)
    EXPECT_GE(sent[i] - sent[i - 1], kGap - 200 * kUs) << "packet " << i;
}

// 5.7 has no offload horizon (it is ignored there), so a flow never leaves early
// and the unguarded rule gives the same figures: E18's arithmetic is unchanged.
TYPED_TEST(PacingOffload, LinuxFiveSevenUnchanged) {
  FqConfig cfg = offload_cfg();
  cfg.compat = Compat::linux_5_7;
  cfg.offload_horizon_us = 0;
  TypeParam q(cfg);
  FlowOwner o;
  o.id = 7;
  o.pacing_rate = o.max_pacing_rate = kRate;
  std::vector<Packet> pk(2);
  for (auto& p : pk) {
    p.len = 1514;
    p.owner = &o;
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
  }
  ASSERT_EQ(q.dequeue(kT0), &pk[0]);
  EXPECT_EQ(q.dequeue(kT0 + kGap - 1), nullptr);
  const Time late = kT0 + kGap + 30 * kUs;
  ASSERT_EQ(q.dequeue(late), &pk[1]);
  EXPECT_EQ(flow_of(q, o.id << 1)->time_next_packet, late + kGap - 30 * kUs);
}

}  // namespace
}  // namespace ufq
