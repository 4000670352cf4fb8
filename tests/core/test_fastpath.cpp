// The latest fast path (docs/fq-rules.md#fast-path) against 5.7: edge cases 27 and 28.
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E27: connected UDP owner; a stamped now + 20 ms, then b unstamped, with a
// dequeue after each enqueue.
// latest: when b arrives the only flow is throttled (flows 1 = inactive 0 +
// throttled 1), the internal queue is empty and the throttled flow is not due
// yet -> b takes the fast path and leaves at once; a leaves at 20 ms.
// 5.7 (derived): b joins a's flow, sorts before it (time_to_send now < 20 ms),
// but the flow is throttled until 20 ms: both leave at 20 ms, b first.
TYPED_TEST(EdgeCases, E27_FastPathReorder) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    Packet& a = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 20 * kMs});
    Packet& b = pool.make({.len = 1000, .owner = &o});
    ASSERT_EQ(q.enqueue(a, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    ASSERT_EQ(q.enqueue(b, kT0), Verdict::queued);
    if (c == Compat::latest) {
      EXPECT_EQ(q.internal_qlen(), 1U);
      EXPECT_EQ(q.dequeue(kT0), &b);
      EXPECT_EQ(q.stats(kT0).fastpath_packets, 1U);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &a);
    } else {
      EXPECT_EQ(q.internal_qlen(), 0U);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + 20 * kMs - 1), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &b);
      EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &a);
    }
    expect_consistent(q, kT0 + 20 * kMs);
  }
}

// Throttle flow A (one packet stamped +20 ms) so that the qdisc holds only a
// throttled flow.
template <Scheduler S>
void throttle_one(S& q, PacketPool& pool, FlowOwner& a) {
  Packet& p = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 20 * kMs});
  ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
  ASSERT_EQ(q.dequeue(kT0), nullptr);
  ASSERT_EQ(q.stats(kT0).throttled_flows, 1U);
}

// E28 (latest): with only throttled flows, up to 8 unstamped packets use the
// fast path; the 9th finds 8 in the internal queue and goes to its flow. Once a
// flow holds an eligible packet (flows 2 != inactive 0 + throttled 1), the 10th
// goes to the flow as well.
TYPED_TEST(EdgeCases, E28_FastPathLimit_L) {
  TypeParam q(make_cfg(Compat::latest));
  PacketPool pool;
  FlowOwner a = connected_owner(1), b = connected_owner(2);
  throttle_one(q, pool, a);
  const auto v = enqueue_n(q, pool, 10, {.len = 100, .owner = &b}, kT0 + kMs);
  EXPECT_EQ(count_queued(v), 10U);
  const FqStats st = q.stats(kT0 + kMs);
  EXPECT_EQ(st.fastpath_packets, 8U);
  EXPECT_EQ(q.internal_qlen(), 8U);
  const auto fb = find_flow(q, owner_key(2));
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->qlen, 2U);
  EXPECT_EQ(st.band_pkt_count[1] + st.band_pkt_count[0] + st.band_pkt_count[2], 3U);
  expect_consistent(q, kT0 + kMs);
}

// E28 (latest): any maxrate -> fastpath stays 0, even on an empty qdisc.
TYPED_TEST(EdgeCases, E28_MaxrateDisablesFastPath_L) {
  for (const Rate maxrate : {Rate{4'000'000'000ULL}, Rate{125000}, Rate{0}}) {
    SCOPED_TRACE(maxrate);
    FqConfig cfg = make_cfg(Compat::latest);
    cfg.maxrate = maxrate;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner u = connected_owner(1), t = tcp_owner(2);
    enqueue_n(q, pool, 3, {.len = 100, .owner = &u}, kT0);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &t}, kT0);
    enqueue_n(q, pool, 1, {.len = 100}, kT0);
    EXPECT_EQ(q.stats(kT0).fastpath_packets, 0U);
    EXPECT_EQ(q.internal_qlen(), 0U);
  }
}

// docs/fq-rules.md#fast-path, remaining conditions (latest), each on an empty qdisc unless stated:
//  * unstamped from a non-TCP owner without a max pacing rate -> fast path;
//  * owner-less -> fast path;
//  * non-TCP owner with SO_MAX_PACING_RATE -> not;
//  * TCP owner with a max pacing rate -> fast path (the rule is for non-TCP);
//  * stamped in the past -> fast path; stamped in the future -> not;
//  * a throttled flow already due (time_next_delayed_flow <= now, "Tx behind
//    now") -> not;
//  * 5.7 never uses it.
TYPED_TEST(EdgeCases, E28_FastPathConditions) {
  struct Case {
    const char* name;
    FlowOwner owner;
    bool has_owner;
    Time tstamp;
    bool fast;
  };
  FlowOwner tcp_rated = tcp_owner(4);
  tcp_rated.max_pacing_rate = 125000;
  tcp_rated.pacing_rate = 125000;
  const Case cases[] = {
      {"udp", connected_owner(1), true, 0, true},
      {"ownerless", FlowOwner{}, false, 0, true},
      {"udp max rate", rated_owner(3, 125000), true, 0, false},
      {"tcp max rate", tcp_rated, true, 0, true},
      {"past stamp", tcp_owner(5), true, kT0 - kMs, true},
      {"future stamp", tcp_owner(6), true, kT0 + 1, false},
  };
  for (const Case& k : cases) {
    for (Compat c : kBothCompat) {
      SCOPED_TRACE(k.name);
      SCOPED_TRACE(compat_name(c));
      TypeParam q(make_cfg(c));
      PacketPool pool;
      FlowOwner o = k.owner;
      Packet& p = pool.make({.len = 100, .owner = k.has_owner ? &o : nullptr, .tstamp = k.tstamp});
      ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
      const bool fast = c == Compat::latest && k.fast;
      EXPECT_EQ(q.stats(kT0).fastpath_packets, fast ? 1U : 0U);
      EXPECT_EQ(q.internal_qlen(), fast ? 1U : 0U);
    }
  }
  // A flow holding an eligible packet (flows 1 != inactive 0 + throttled 0):
  // no fast path, even with an empty internal queue.
  {
    TypeParam q(make_cfg(Compat::latest));
    PacketPool pool;
    FlowOwner s = slow_owner(1), u = connected_owner(2);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &s}, kT0);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &u}, kT0);
    EXPECT_EQ(q.stats(kT0).fastpath_packets, 0U);
    EXPECT_EQ(q.internal_qlen(), 0U);
  }
  // Tx behind now: A is throttled until 20 ms; at 25 ms (no dequeue since) a
  // fast-path-eligible packet must go to its flow.
  TypeParam q(make_cfg(Compat::latest));
  PacketPool pool;
  FlowOwner a = connected_owner(1), b = connected_owner(2);
  throttle_one(q, pool, a);
  enqueue_n(q, pool, 1, {.len = 100, .owner = &b}, kT0 + 19 * kMs);
  EXPECT_EQ(q.stats(kT0 + 19 * kMs).fastpath_packets, 1U);
  enqueue_n(q, pool, 1, {.len = 100, .owner = &b}, kT0 + 25 * kMs);
  EXPECT_EQ(q.stats(kT0 + 25 * kMs).fastpath_packets, 1U);
  EXPECT_EQ(find_flow(q, owner_key(2))->qlen, 1U);
}

}  // namespace
}  // namespace ufq::test
