// Classification, socket reuse and garbage collection: edge cases 25, 26, 44
// (docs/fq-rules.md#classification, #garbage-collection, #lookup-allocation-and-socket-reuse).
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E25: the same owner key with a different hash generation (socket memory
// reused) resets the flow: credit = initial_quantum (15140), time_next_packet 0,
// out of the throttled set onto old_flows (throttled_flows--, the cached
// time_next_delayed_flow is not recomputed).
// Setup: owner 7 gen 1 at 50 000 B/s: p1 leaves, the flow is throttled until
// T + 30.28 ms with credit 0 + 3028. A new packet from gen 1 changes nothing;
// one from gen 2 at T + 1 ms resets the flow, so p2 leaves at T + 1 ms.
TYPED_TEST(EdgeCases, E25_SocketReuse) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner gen1 = rated_owner(7, 50000);
    gen1.hash_generation = 1;
    std::vector<Packet*> in;
    enqueue_n(q, pool, 2, {.len = 1514, .owner = &gen1}, kT0, &in);
    EXPECT_EQ(q.dequeue(kT0), in[0]);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    auto f = find_flow(q, owner_key(7));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->state, FlowState::throttled);
    EXPECT_EQ(f->credit, 3028);
    EXPECT_EQ(f->time_next_packet, kT0 + 30'280'000);

    enqueue_n(q, pool, 1, {.len = 1514, .owner = &gen1}, kT0, &in);
    f = find_flow(q, owner_key(7));
    EXPECT_EQ(f->state, FlowState::throttled);
    EXPECT_EQ(f->credit, 3028);

    FlowOwner gen2 = slow_owner(7);
    gen2.hash_generation = 2;
    const Time t = kT0 + kMs;
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &gen2}, t, &in);
    ASSERT_EQ(in.size(), 4U);
    EXPECT_EQ(q.internal_qlen(), 0U);
    f = find_flow(q, owner_key(7));
    EXPECT_EQ(f->state, FlowState::old_list);
    EXPECT_EQ(f->credit, 15140);
    EXPECT_EQ(f->time_next_packet, 0U);
    EXPECT_EQ(f->qlen, 3U);
    const FqStats st = q.stats(t);
    EXPECT_EQ(st.throttled_flows, 0U);
    EXPECT_EQ(st.flows, 1U);
    EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 30'280'000);  // stale, not recomputed
    EXPECT_EQ(q.dequeue(t), in[1]);
    expect_consistent(q, t);
  }
}

// E26: packets of a listener (SYN-ACKs) are hashed and orphaned: its max pacing
// rate (50 000 B/s, which would force a 30.28 ms gap per packet) does not apply.
// Three 1514-byte packets leave back to back: credit 15140 -> 10598, key
// (9 & 1023) << 1 | 1 = 19. A connected owner with the same rate sends one.
// maxrate 4e9 B/s (not unlimited) keeps latest off the fast path and adds no
// gap while the credit is positive.
TYPED_TEST(EdgeCases, E26_OrphansNotPaced) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 4'000'000'000ULL;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner listener = kind_owner(3, FlowOwner::Kind::listener, 50000, true);
    FlowOwner conn = rated_owner(4, 50000);
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &listener, .hash = 9}, kT0);
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &conn, .hash = 9}, kT0);
    EXPECT_EQ(q.internal_qlen(), 0U);
    const auto hashed = find_flow(q, hashed_key(9, 1023));
    ASSERT_TRUE(hashed.has_value());
    EXPECT_EQ(hashed->key, 19U);
    EXPECT_EQ(hashed->qlen, 3U);
    EXPECT_FALSE(find_flow(q, owner_key(3)).has_value());
    int from_listener = 0, from_conn = 0;
    for (Packet* p : drain(q, kT0)) (p->owner == &listener ? from_listener : from_conn)++;
    EXPECT_EQ(from_listener, 3);
    EXPECT_EQ(from_conn, 1);
    EXPECT_EQ(find_flow(q, 19)->credit, 10598);
    expect_consistent(q, kT0);
  }
}

// E26: orphan_mask 0 puts all hashed traffic (owner-less here) in one flow, key 1.
TYPED_TEST(EdgeCases, E26_OrphanMaskZero) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.orphan_mask = 0;
    cfg.maxrate = 4'000'000'000ULL;  // latest: keep them off the fast path
    TypeParam q(cfg);
    PacketPool pool;
    for (std::uint32_t h : {1U, 2U, 3U, 0xDEADBEEFU})
      enqueue_n(q, pool, 1, {.len = 100, .hash = h}, kT0);
    const auto flows = all_flows(q);
    ASSERT_EQ(flows.size(), 1U);
    EXPECT_EQ(flows[0].key, 1U);
    EXPECT_EQ(flows[0].qlen, 4U);
    expect_consistent(q, kT0);
  }
}

// E26 / docs/fq-rules.md#classification: which owners are hashed. Default orphan_mask 1023, hash 1030 ->
// 1030 & 1023 = 6 -> key 13. Owner-less, listener and unconnected are hashed
// in both versions; TIME_WAIT is hashed (orphaned) in latest (6.13+) but keyed
// by the owner (id 5 -> key 10) in 5.7; connected is keyed by the owner.
TYPED_TEST(EdgeCases, E26_ClassificationKeys) {
  using K = FlowOwner::Kind;
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 4'000'000'000ULL;
    struct Case {
      std::optional<K> kind;
      std::uint64_t key_s, key_l;
    };
    const Case cases[] = {
        {std::nullopt, 13, 13}, {K::listener, 13, 13}, {K::unconnected, 13, 13},
        {K::time_wait, 10, 13}, {K::connected, 10, 10},
    };
    for (const Case& k : cases) {
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner o = kind_owner(5, k.kind.value_or(K::connected), kUnlimitedRate, true);
      enqueue_n(q, pool, 1, {.len = 100, .owner = k.kind ? &o : nullptr, .hash = 1030}, kT0);
      const auto flows = all_flows(q);
      ASSERT_EQ(flows.size(), 1U);
      EXPECT_EQ(flows[0].key, c == Compat::latest ? k.key_l : k.key_s)
          << "kind " << (k.kind ? static_cast<int>(*k.kind) : -1);
    }
  }
}

// E44 (5.7): with 1024 buckets GC runs only when flows >= 2048 and more than
// half are detached, and then frees at most 8 flows idle > 3 s per enqueue,
// oldest detach first (ufq's structure-independent rule, docs/features.md).
// (settle() makes the flows emptied by a drain actually detached, see docs/fq-rules.md#internal-queue;
// its sentinel flow counts as one of the flows.)
//  * 2046 flows + the sentinel = 2047, all but the sentinel detached and idle
//    for 4 s: enqueues to them never collect (flows < 2048);
//  * the 2048th flow is allocated by an enqueue that sees 2047 -> no GC;
//  * from then on, each enqueue of a new flow that sees flows >= 2048 and
//    inactive > flows/2 frees exactly 8 of the 2046 idle flows (the oldest),
//    and one that does not frees none.
TYPED_TEST(EdgeCases, E44_GcTrigger_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner sentinel = connected_owner(kSentinelId);
  std::deque<FlowOwner> owners;
  for (std::uint64_t i = 1; i <= 2200; ++i) owners.push_back(slow_owner(i));
  for (std::size_t i = 0; i < 2046; ++i) enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, kT0);
  EXPECT_EQ(drain(q, kT0).size(), 2046U);
  settle(q, pool, sentinel, kT0);
  FqStats st = q.stats(kT0);
  EXPECT_EQ(st.flows, 2047U);
  EXPECT_EQ(st.inactive_flows, 2046U);

  const Time t1 = kT0 + 4 * kSec;
  for (std::size_t i = 0; i < 2046; ++i) enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, t1);
  EXPECT_EQ(q.stats(t1).gc_flows, 0U);
  EXPECT_EQ(drain(q, t1).size(), 2047U);  // the sentinel's packet is due too
  settle(q, pool, sentinel, t1);
  st = q.stats(t1);
  EXPECT_EQ(st.flows, 2047U);
  EXPECT_EQ(st.inactive_flows, 2046U);
  EXPECT_EQ(st.gc_flows, 0U);

  const Time t2 = t1 + 4 * kSec;
  enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[2046]}, t2);
  st = q.stats(t2);
  EXPECT_EQ(st.gc_flows, 0U);
  EXPECT_EQ(st.flows, 2048U);

  std::uint64_t gc = 0;
  std::uint32_t allocated = 2048;
  for (std::size_t i = 2047; i < 2147; ++i) {
    const bool collects = st.flows >= 2048 && st.inactive_flows > st.flows / 2;
    enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, t2);
    ++allocated;
    st = q.stats(t2);
    EXPECT_EQ(st.gc_flows - gc, collects ? 8U : 0U) << "enqueue " << i;
    gc = st.gc_flows;
    EXPECT_EQ(st.flows, allocated - gc);
  }
  EXPECT_GE(gc, 1U);
  expect_consistent(q, t2);
}

// E44 (5.7): the cap of 8 per enqueue. buckets_log 1 (2 buckets, GC from 4
// flows on), 1000 flows idle for 4 s, all candidates: every enqueue of a new
// flow frees exactly 8 (the kernel: at most 8 of those on its search path).
TYPED_TEST(EdgeCases, E44_GcCap8_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  cfg.buckets_log = 1;
  TypeParam q(cfg);
  PacketPool pool;
  std::deque<FlowOwner> owners;
  for (std::uint64_t i = 1; i <= 1000; ++i) owners.push_back(slow_owner(i * 7919));
  for (FlowOwner& o : owners) enqueue_n(q, pool, 1, {.len = 100, .owner = &o}, kT0);
  EXPECT_EQ(drain(q, kT0).size(), 1000U);
  FlowOwner sentinel = connected_owner(kSentinelId);
  settle(q, pool, sentinel, kT0);
  ASSERT_EQ(q.stats(kT0).inactive_flows, 1000U);
  const Time t = kT0 + 4 * kSec;
  std::uint64_t gc = 0, max_step = 0;
  std::deque<FlowOwner> fresh;
  for (std::uint64_t i = 0; i < 30; ++i) {
    fresh.push_back(slow_owner(1'000'000 + i * 104729));
    enqueue_n(q, pool, 1, {.len = 100, .owner = &fresh.back()}, t);
    const std::uint64_t now_gc = q.stats(t).gc_flows;
    EXPECT_EQ(now_gc - gc, 8U) << "enqueue " << i;
    max_step = std::max(max_step, now_gc - gc);
    gc = now_gc;
  }
  EXPECT_EQ(max_step, 8U);
  EXPECT_EQ(q.stats(t).flows, 1031U - gc);
  expect_consistent(q, t);
}

// E44 (5.7): more flows than 2 x buckets, but not more than half detached -> no
// GC. buckets_log 1 (threshold 4 flows): 4 idle flows + 6 flows holding
// (throttled) packets; 20 new flows 5 s later: inactive stays 4 <= flows/2.
TYPED_TEST(EdgeCases, E44_NoGcWhenMostlyActive_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  cfg.buckets_log = 1;
  TypeParam q(cfg);
  PacketPool pool;
  std::deque<FlowOwner> owners;
  for (std::uint64_t i = 1; i <= 30; ++i) owners.push_back(slow_owner(i));
  for (std::size_t i = 0; i < 4; ++i) enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, kT0);
  EXPECT_EQ(drain(q, kT0).size(), 4U);
  for (std::size_t i = 4; i < 10; ++i)
    enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i], .tstamp = kT0 + 9 * kSec}, kT0);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  const Time t = kT0 + 5 * kSec;
  for (std::size_t i = 10; i < 30; ++i) enqueue_n(q, pool, 1, {.len = 100, .owner = &owners[i]}, t);
  const FqStats st = q.stats(t);
  EXPECT_EQ(st.gc_flows, 0U);
  EXPECT_EQ(st.flows, 30U);
  EXPECT_EQ(st.inactive_flows, 4U);
}

// E44 contrast (latest, docs/fq-rules.md#garbage-collection): GC on every enqueue that reaches the lookup, and
// the early-2026 mainline frees every idle candidate on the search path (no cap
// of 8); ufq frees the oldest idle flows, at most 64 per enqueue. 1000 flows
// idle for 4 s: the first 15 new flows free 64 each, the 16th the remaining
// 40. Flows idle for only 2 s are never collected.
TYPED_TEST(EdgeCases, E44_GcEveryEnqueue_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.buckets_log = 1;
  for (const Time idle : {2 * kSec, 4 * kSec}) {
    SCOPED_TRACE(idle);
    TypeParam q(cfg);
    PacketPool pool;
    std::deque<FlowOwner> owners;
    for (std::uint64_t i = 1; i <= 1000; ++i) owners.push_back(slow_owner(i * 7919));
    for (FlowOwner& o : owners) enqueue_n(q, pool, 1, {.len = 100, .owner = &o}, kT0);
    EXPECT_EQ(drain(q, kT0).size(), 1000U);
    FlowOwner sentinel = connected_owner(kSentinelId);
    settle(q, pool, sentinel, kT0);
    ASSERT_EQ(q.stats(kT0).flows, 1001U);
    ASSERT_EQ(q.stats(kT0).inactive_flows, 1000U);
    const Time t = kT0 + idle;
    std::uint64_t gc = 0, max_step = 0;
    std::deque<FlowOwner> fresh;
    for (std::uint64_t i = 0; i < 30; ++i) {
      fresh.push_back(slow_owner(1'000'000 + i * 104729));
      enqueue_n(q, pool, 1, {.len = 100, .owner = &fresh.back()}, t);
      const std::uint64_t now_gc = q.stats(t).gc_flows;
      max_step = std::max(max_step, now_gc - gc);
      gc = now_gc;
    }
    const FqStats st = q.stats(t);
    EXPECT_EQ(st.flows, 1031U - gc);
    if (idle == 2 * kSec) {
      EXPECT_EQ(gc, 0U);
    } else {
      EXPECT_EQ(gc, 1000U);
      EXPECT_EQ(max_step, 64U) << "latest frees up to 64 per enqueue";
    }
    expect_consistent(q, t);
  }
}

// E44 (both): the order and the exception of ufq's GC rule. Flows detached at
// kT0 (a), kT0 + 1 s (b) and kT0 + 2 s (c); at kT0 + 3.5 s only a is idle
// > 3 s and is freed first; at kT0 + 5.5 s an enqueue to b frees c but not b
// (the flow looked up is never freed, as in the kernel where the search stops
// at it), and b keeps its state.
TYPED_TEST(EdgeCases, E44_GcOldestFirstNeverTheLookedUp) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.buckets_log = 1;  // 5.7 collects from 4 flows on
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner a = slow_owner(1), b = slow_owner(2), cc = slow_owner(3);
    FlowOwner s1 = connected_owner(kSentinelId), s2 = connected_owner(kSentinelId + 1);
    FlowOwner s3 = connected_owner(kSentinelId + 2);
    // Each flow sends one packet, then a later enqueue of its own sentinel
    // makes the drain detach it; sentinels stay busy (throttled far out).
    const std::array<FlowOwner*, 3> flows = {&a, &b, &cc};
    const std::array<FlowOwner*, 3> sentinels = {&s1, &s2, &s3};
    for (int i = 0; i < 3; ++i) {
      const Time t = kT0 + static_cast<Time>(i) * kSec;
      enqueue_n(q, pool, 1, {.len = 100, .owner = flows[i]}, t);
      EXPECT_EQ(drain(q, t).size(), 1U);
      enqueue_n(q, pool, 1, {.len = 100, .owner = sentinels[i], .tstamp = t + 9 * kSec}, t);
      EXPECT_EQ(q.dequeue(t), nullptr);  // detaches the emptied flow
    }
    ASSERT_EQ(q.stats(kT0 + 2 * kSec).inactive_flows, 3U);
    ASSERT_EQ(q.stats(kT0 + 2 * kSec).flows, 6U);
    FlowOwner d = slow_owner(4);
    // 5.7 needs inactive > flows / 2: not the case here (3 of 6), so only latest collects.
    enqueue_n(q, pool, 1, {.len = 100, .owner = &d, .tstamp = kT0 + 9 * kSec}, kT0 + 3500 * kMs);
    if (c == Compat::latest) {
      EXPECT_EQ(q.stats(kT0 + 3500 * kMs).gc_flows, 1U);
      EXPECT_FALSE(find_flow(q, owner_key(1)).has_value());
      EXPECT_TRUE(find_flow(q, owner_key(2)).has_value());
      const std::int32_t credit_b = find_flow(q, owner_key(2))->credit;
      enqueue_n(q, pool, 1, {.len = 100, .owner = &b, .tstamp = kT0 + 9 * kSec}, kT0 + 5500 * kMs);
      EXPECT_EQ(q.stats(kT0 + 5500 * kMs).gc_flows, 2U);
      EXPECT_FALSE(find_flow(q, owner_key(3)).has_value());
      ASSERT_TRUE(find_flow(q, owner_key(2)).has_value());
      EXPECT_EQ(find_flow(q, owner_key(2))->credit, credit_b);
    } else {
      EXPECT_EQ(q.stats(kT0 + 3500 * kMs).gc_flows, 0U);
    }
    expect_consistent(q, kT0 + 5500 * kMs);
  }
}

}  // namespace
}  // namespace ufq::test
