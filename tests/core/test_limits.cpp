// Admission limits: edge cases 5, 6, 7 (docs/fq-rules.md#admission-limit, #flow-limit).
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E5: the 101st packet for a flow holding 100 (default flow_limit) is dropped:
// flows_plimit 1, drops 1.
TYPED_TEST(EdgeCases, E05_FlowLimit) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = slow_owner(1);
    const auto v = enqueue_n(q, pool, 100, {.len = 1514, .owner = &o}, kT0);
    EXPECT_EQ(count_queued(v), 100U);
    Packet& extra = pool.make({.len = 1514, .owner = &o});
    EXPECT_EQ(q.enqueue(extra, kT0), Verdict::drop_flow_limit);
    const FqStats st = q.stats(kT0);
    EXPECT_EQ(st.flows_plimit, 1U);
    EXPECT_EQ(st.drops, 1U);
    EXPECT_EQ(st.qlen, 100U);
    EXPECT_EQ(st.band_drops, (std::array<std::uint64_t, kBands>{0, 0, 0}));
    EXPECT_EQ(find_flow(q, owner_key(1))->qlen, 100U);
    // Another flow is not affected.
    FlowOwner o2 = slow_owner(2);
    Packet& other = pool.make({.len = 1514, .owner = &o2});
    EXPECT_EQ(q.enqueue(other, kT0), Verdict::queued);
    // Once one leaves, the flow accepts one more.
    ASSERT_NE(q.dequeue(kT0), nullptr);
    Packet& again = pool.make({.len = 1514, .owner = &o});
    EXPECT_EQ(q.enqueue(again, kT0), Verdict::queued);
    expect_consistent(q, kT0);
  }
}

// E6 (5.7): limit 10 counts every queued packet, the priority-7 internal queue
// included. 5 priority-7 packets + 5 packets of 5 flows fill it; the 11th (a
// sixth flow) is dropped with the generic drop counter only.
TYPED_TEST(EdgeCases, E06_GlobalLimit_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  cfg.limit = 10;
  TypeParam q(cfg);
  PacketPool pool;
  std::vector<FlowOwner> owners;
  for (std::uint64_t i = 1; i <= 7; ++i) owners.push_back(connected_owner(i));
  EXPECT_EQ(count_queued(enqueue_n(q, pool, 5, {.len = 100, .owner = &owners[0], .priority = 7}, kT0)), 5U);
  for (std::size_t i = 1; i <= 5; ++i)
    EXPECT_EQ(count_queued(enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, kT0)), 1U);
  EXPECT_EQ(q.internal_qlen(), 5U);
  Packet& p = pool.make({.len = 100, .owner = &owners[6]});
  EXPECT_EQ(q.enqueue(p, kT0), Verdict::drop_limit);
  // A priority-7 packet is refused too.
  Packet& p7 = pool.make({.len = 100, .owner = &owners[6], .priority = 7});
  EXPECT_EQ(q.enqueue(p7, kT0), Verdict::drop_limit);
  FqStats st = q.stats(kT0);
  EXPECT_EQ(st.drops, 2U);
  EXPECT_EQ(st.flows_plimit, 0U);
  EXPECT_EQ(st.band_drops, (std::array<std::uint64_t, kBands>{0, 0, 0}));
  EXPECT_EQ(st.highprio_packets, 5U);
  EXPECT_EQ(st.qlen, 10U);
  ASSERT_NE(q.dequeue(kT0), nullptr);
  Packet& p2 = pool.make({.len = 100, .owner = &owners[6]});
  EXPECT_EQ(q.enqueue(p2, kT0), Verdict::queued);
  expect_consistent(q, kT0);
}

// E7 (latest, kernel selftest fq_band_pktlimit): limit 10 per band.
//   20 packets, band 1 (priority 0), stamped +100 ms -> 10 queued, dropped 10
//   20 more                                           -> all dropped (30)
//   20 with priority 7 (band 0)                       -> 10 queued (40 dropped)
//   after 100 ms: Sent 20 pkt (dropped 40)
TYPED_TEST(EdgeCases, E07_PerBandLimit_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.limit = 10;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner o = connected_owner(1);
  const Time due = kT0 + 100 * kMs;
  EXPECT_EQ(count_queued(enqueue_n(q, pool, 20, {.len = 1000, .owner = &o, .tstamp = due}, kT0)), 10U);
  FqStats st = q.stats(kT0);
  EXPECT_EQ(st.drops, 10U);
  EXPECT_EQ(st.band_drops, (std::array<std::uint64_t, kBands>{0, 10, 0}));
  EXPECT_EQ(count_queued(enqueue_n(q, pool, 20, {.len = 1000, .owner = &o, .tstamp = due}, kT0)), 0U);
  EXPECT_EQ(q.stats(kT0).drops, 30U);
  const auto v = enqueue_n(q, pool, 20, {.len = 1000, .owner = &o, .tstamp = due, .priority = 7}, kT0);
  EXPECT_EQ(count_queued(v), 10U);
  EXPECT_EQ(v[10], Verdict::drop_limit);
  st = q.stats(kT0);
  EXPECT_EQ(st.drops, 40U);
  EXPECT_EQ(st.band_drops, (std::array<std::uint64_t, kBands>{10, 30, 0}));
  EXPECT_EQ(st.band_pkt_count, (std::array<std::uint32_t, kBands>{10, 10, 0}));
  EXPECT_EQ(st.qlen, 20U);
  EXPECT_EQ(st.fastpath_packets, 0U);
  expect_consistent(q, kT0);

  EXPECT_EQ(drain(q, kT0).size(), 0U);
  EXPECT_EQ(drain(q, due).size(), 20U);
  st = q.stats(due);
  EXPECT_EQ(st.packets, 20U);
  EXPECT_EQ(st.drops, 40U);
  EXPECT_EQ(st.band_pkt_count, (std::array<std::uint32_t, kBands>{0, 0, 0}));
  expect_consistent(q, due);
}

// E7 corollary (latest, docs/fq-rules.md#admission-limit): fast-path packets are not counted in any band,
// so the total queue can exceed `limit`. limit 1: an unstamped packet on the
// empty qdisc takes the fast path; a stamped band-1 packet still fits its
// band; a second one does not. qlen 2 > limit 1.
TYPED_TEST(EdgeCases, E07_FastPathNotCountedInBands_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.limit = 1;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner u = connected_owner(1), t = tcp_owner(2);
  Packet& fast = pool.make({.len = 100, .owner = &u});
  EXPECT_EQ(q.enqueue(fast, kT0), Verdict::queued);
  EXPECT_EQ(q.internal_qlen(), 1U);
  Packet& s1 = pool.make({.len = 100, .owner = &t, .tstamp = kT0 + kMs});
  EXPECT_EQ(q.enqueue(s1, kT0), Verdict::queued);
  Packet& s2 = pool.make({.len = 100, .owner = &t, .tstamp = kT0 + kMs});
  EXPECT_EQ(q.enqueue(s2, kT0), Verdict::drop_limit);
  const FqStats st = q.stats(kT0);
  EXPECT_EQ(st.qlen, 2U);
  EXPECT_EQ(st.band_pkt_count, (std::array<std::uint32_t, kBands>{0, 1, 0}));
  EXPECT_EQ(st.band_drops, (std::array<std::uint64_t, kBands>{0, 1, 0}));
  expect_consistent(q, kT0);
}

}  // namespace
}  // namespace ufq::test
