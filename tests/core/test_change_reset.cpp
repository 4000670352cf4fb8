// change() and reset(): edge cases 38 and 43 (docs/fq-rules.md#netlink-acceptance, #change-reset-resize), plus ufq's
// all-or-nothing change and the bucket-table resize.
#include <map>

#include "harness.hpp"

namespace ufq::test {
namespace {

template <Scheduler S>
class ChangeReset : public ::testing::Test {};

TYPED_TEST_SUITE(ChangeReset, Schedulers);
TYPED_TEST_SUITE(EdgeCases, Schedulers);

// Queue the same 10 unstamped packets (4 owners, mixed sizes) into a scheduler.
template <Scheduler S>
void fill_ten(S& q, PacketPool& pool, std::deque<FlowOwner>& owners, Time now,
              Time tstamp = 0) {
  for (std::uint64_t i = 1; i <= 4; ++i) owners.push_back(slow_owner(i));
  for (std::uint32_t i = 0; i < 10; ++i) {
    Packet& p = pool.make({.len = 100 + 100 * i, .owner = &owners[i % 4], .tstamp = tstamp});
    ASSERT_EQ(q.enqueue(p, now), Verdict::queued);
  }
}

// E38: 10 queued, change limit 1 -> the packets dequeue() would send are removed
// until qlen is 1; they are counted as sent (root qdisc: no drop anywhere) and
// in `trimmed`. The order is checked against a twin scheduler that dequeues.
TYPED_TEST(EdgeCases, E38_LowerLimitTrimsInDequeueOrder) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c)), twin(make_cfg(c));
    PacketPool pool, twin_pool;
    std::deque<FlowOwner> owners, twin_owners;
    fill_ten(q, pool, owners, kT0);
    fill_ten(twin, twin_pool, twin_owners, kT0);

    FqConfig cfg = make_cfg(c);
    cfg.limit = 1;
    std::vector<std::uint64_t> trimmed;
    std::uint64_t trimmed_bytes = 0;
    const std::size_t n = q.change(cfg, kT0, [&](Packet& p) {
      trimmed.push_back(p.cookie);
      trimmed_bytes += p.len;
    });
    EXPECT_EQ(n, 9U);
    EXPECT_EQ(cookies(drain(twin, kT0, 9)), trimmed);
    EXPECT_EQ(q.config().limit, 1U);
    const FqStats st = q.stats(kT0);
    EXPECT_EQ(st.qlen, 1U);
    EXPECT_EQ(st.packets, 9U);
    EXPECT_EQ(st.bytes, trimmed_bytes);
    EXPECT_EQ(st.drops, 0U);
    EXPECT_EQ(st.trimmed, 9U);
    EXPECT_EQ(st.dequeued, 9U);
    expect_consistent(q, kT0);
    // The remaining packet is the one the twin sends next.
    EXPECT_EQ(q.dequeue(kT0)->cookie, twin.dequeue(kT0)->cookie);
  }
}

// E38: throttled packets cannot be removed: trimming stops when dequeue returns
// nothing, leaving qlen > limit. 5 eligible + 5 stamped +1 s -> 5 trimmed.
TYPED_TEST(EdgeCases, E38_TrimStopsAtThrottled) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1), b = slow_owner(2);
    enqueue_n(q, pool, 5, {.len = 500, .owner = &a}, kT0);
    enqueue_n(q, pool, 5, {.len = 500, .owner = &b, .tstamp = kT0 + kSec}, kT0);
    FqConfig cfg = make_cfg(c);
    cfg.limit = 1;
    int handed = 0;
    EXPECT_EQ(q.change(cfg, kT0, [&](Packet& p) {
      EXPECT_EQ(p.owner, &a);
      ++handed;
    }), 5U);
    EXPECT_EQ(handed, 5);
    FqStats st = q.stats(kT0);
    EXPECT_EQ(st.qlen, 5U);
    EXPECT_EQ(st.trimmed, 5U);
    EXPECT_EQ(st.drops, 0U);
    // All throttled: nothing more can be trimmed.
    EXPECT_EQ(q.change(cfg, kT0), 0U);
    EXPECT_EQ(q.qlen(), 5U);
    expect_consistent(q, kT0);
    // Raising the limit trims nothing.
    cfg.limit = 10000;
    EXPECT_EQ(q.change(cfg, kT0), 0U);
  }
}

// ufq's change() is all or nothing (the kernel would apply limit 500 and still
// fail, docs/fq-rules.md#netlink-acceptance): {limit 500, quantum 0} throws ConfigError and leaves the
// configuration and the queue as they were.
TYPED_TEST(ChangeReset, InvalidChangeChangesNothing) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1);
    enqueue_n(q, pool, 3, {.len = 500, .owner = &a}, kT0);
    FqConfig bad = make_cfg(c);
    bad.limit = 1;
    bad.quantum = 0;
    EXPECT_THROW(q.change(bad, kT0), ConfigError);
    EXPECT_EQ(q.config(), make_cfg(c));
    EXPECT_EQ(q.qlen(), 3U);
    EXPECT_EQ(q.stats(kT0).trimmed, 0U);
  }
}

// The surroundings cannot change through change(): compat, hz and max_flows
// are refused (ConfigError) and nothing is applied.
TYPED_TEST(ChangeReset, SurroundingsCannotChange) {
  TypeParam q(make_cfg(Compat::latest));
  FqConfig c = make_cfg(Compat::linux_5_7);
  c.limit = 5;
  EXPECT_THROW(q.change(c, kT0), ConfigError);
  c = make_cfg(Compat::latest);
  c.hz = 1000;
  c.limit = 5;
  EXPECT_THROW(q.change(c, kT0), ConfigError);
  c = make_cfg(Compat::latest);
  c.max_flows = 7;
  c.limit = 5;
  EXPECT_THROW(q.change(c, kT0), ConfigError);
  EXPECT_EQ(q.config(), make_cfg(Compat::latest));
}

// docs/fq-rules.md#change-reset-resize resize: changing buckets_log moves every flow, keeping credits, lists and
// throttle state; GC candidates (idle > 3 s) are freed and counted.
TYPED_TEST(ChangeReset, ResizeKeepsFlowsAndCollectsIdle) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    std::deque<FlowOwner> idle;
    for (std::uint64_t i = 1; i <= 5; ++i) {
      idle.push_back(slow_owner(100 + i));
      enqueue_n(q, pool, 1, {.len = 100, .owner = &idle.back()}, kT0);
    }
    EXPECT_EQ(drain(q, kT0).size(), 5U);
    FlowOwner sentinel = connected_owner(kSentinelId);
    settle(q, pool, sentinel, kT0);  // detaches the 5 emptied flows (docs/fq-rules.md#internal-queue)
    EXPECT_EQ(q.stats(kT0).inactive_flows, 5U);
    const Time t = kT0 + 4 * kSec;
    // Enqueued while the idle flows are not yet GC candidates (latest collects
    // on every enqueue, the oldest idle > 3 s first).
    const Time t_enq = kT0 + 2 * kSec;
    FlowOwner busy = slow_owner(1), late = tcp_owner(2);
    enqueue_n(q, pool, 12, {.len = 1514, .owner = &busy}, t_enq);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &late, .tstamp = t + kMs}, t_enq);
    EXPECT_EQ(drain(q, t, 3).size(), 3U);
    // busy, late and the sentinel (due at kT0 + 1 ms: released, maybe already
    // sent and detached just now, which is not idle) must survive unchanged.
    std::map<std::uint64_t, FlowInfo> before;
    for (const FlowInfo& f : all_flows(q)) before[f.key] = f;
    EXPECT_EQ(before.size(), 8U);
    FqConfig cfg = make_cfg(c);
    cfg.buckets_log = 4;
    EXPECT_EQ(q.change(cfg, t), 0U);
    const FqStats st = q.stats(t);
    EXPECT_EQ(st.gc_flows, 5U);
    EXPECT_EQ(st.flows, 3U);
    for (const FlowInfo& f : all_flows(q)) {
      EXPECT_TRUE(f.key == owner_key(1) || f.key == owner_key(2) || f.key == owner_key(kSentinelId))
          << f.key;
      ASSERT_EQ(before.count(f.key), 1U) << f.key;
      const FlowInfo& b = before[f.key];
      EXPECT_EQ(f.credit, b.credit) << f.key;
      EXPECT_EQ(f.qlen, b.qlen) << f.key;
      EXPECT_EQ(f.state, b.state) << f.key;
      EXPECT_EQ(f.time_next_packet, b.time_next_packet) << f.key;
    }
    const std::size_t left = q.qlen();
    EXPECT_EQ(drain(q, t).size(), left - 1);  // all but late's
    EXPECT_EQ(drain(q, t + kMs).size(), 1U);
    expect_consistent(q, t + kMs);
  }
}

// E43 (derived): reset with a throttled flow frees packets and flows, keeps the
// statistics and does not reset time_next_delayed_flow. The next dequeue that
// finds a packet (an empty qdisc returns before reading the clock) takes one
// EWMA sample against the stale value: 1 s - 100 us = 999 900 000 ns ->
// ewma = 0 - 0 + 999900000/8 = 124 987 500.
TYPED_TEST(EdgeCases, E43_ResetLeavesStaleNextFlowTime) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1), b = slow_owner(2);
    enqueue_n(q, pool, 2, {.len = 700, .owner = &b}, kT0);
    EXPECT_EQ(drain(q, kT0).size(), 2U);
    enqueue_n(q, pool, 3, {.len = 1000, .owner = &a, .tstamp = kT0 + 100 * kUs}, kT0);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 100 * kUs);

    int purged = 0;
    q.reset([&](Packet& p) {
      EXPECT_EQ(p.owner, &a);
      ++purged;
    });
    EXPECT_EQ(purged, 3);
    FqStats st = q.stats(kT0);
    EXPECT_EQ(st.qlen, 0U);
    EXPECT_EQ(st.backlog, 0U);
    EXPECT_EQ(st.flows, 0U);
    EXPECT_EQ(st.inactive_flows, 0U);
    EXPECT_EQ(st.throttled_flows, 0U);
    EXPECT_EQ(st.purged, 3U);
    EXPECT_EQ(st.packets, 2U);  // statistics kept
    EXPECT_EQ(st.bytes, 1400U);
    EXPECT_EQ(st.throttled, 1U);
    EXPECT_EQ(st.band_pkt_count, (std::array<std::uint32_t, kBands>{0, 0, 0}));
    EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 100 * kUs);  // stale
    EXPECT_EQ(q.internal_qlen(), 0U);
    expect_consistent(q, kT0);

    const Time t = kT0 + kSec;
    EXPECT_EQ(q.dequeue(t), nullptr);  // empty: no clock read, no sample
    EXPECT_EQ(q.stats(t).unthrottle_latency_ns, 0U);
    Packet& p = pool.make({.len = 100, .owner = &b});
    ASSERT_EQ(q.enqueue(p, t), Verdict::queued);
    EXPECT_EQ(q.dequeue(t), &p);
    st = q.stats(t);
    EXPECT_EQ(st.unthrottle_latency_ns, 124'987'500U);
    EXPECT_EQ(q.time_next_delayed_flow(), kNever);
    expect_consistent(q, t);
  }
}

// reset() also hands back internal-queue packets (5.7 priority 7, latest fast
// path) and leaves the scheduler usable.
TYPED_TEST(ChangeReset, ResetPurgesInternalQueue) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner u = connected_owner(1);
    enqueue_n(q, pool, 3, {.len = 100, .owner = &u, .priority = 7}, kT0);
    EXPECT_EQ(q.internal_qlen(), 3U);
    int purged = 0;
    q.reset([&](Packet&) { ++purged; });
    EXPECT_EQ(purged, 3);
    EXPECT_EQ(q.internal_qlen(), 0U);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &u}, kT0);
    EXPECT_NE(q.dequeue(kT0), nullptr);
    const FqStats st = q.stats(kT0);
    EXPECT_EQ(st.purged, 3U);
    EXPECT_EQ(st.offered, 4U);
    expect_consistent(q, kT0);
  }
}

}  // namespace
}  // namespace ufq::test
