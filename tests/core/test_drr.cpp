// Deficit round robin and flow credits: edge cases 1-4 (docs/fq-rules.md#activation-and-refill, #choosing-a-flow to #charging).
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

template <Scheduler S>
std::int32_t credit_of(const S& q, std::uint64_t key) {
  const auto f = find_flow(q, key);
  EXPECT_TRUE(f.has_value()) << "no flow with key " << key;
  return f ? f->credit : 0;
}

template <Scheduler S>
FlowState state_of(const S& q, std::uint64_t key) {
  const auto f = find_flow(q, key);
  EXPECT_TRUE(f.has_value()) << "no flow with key " << key;
  return f ? f->state : FlowState::detached;
}

// E1: a new flow with 3 x 1514 B (no timestamp, unpaced) sends them back to
// back: credit 15140 -> 13626 -> 12112 -> 10598 (15140 - k*1514), no throttle.
// The flow is then empty at the head of new_flows. A dequeue on the empty
// qdisc returns at once (docs/fq-rules.md#internal-queue) and leaves it there. The next dequeue that runs
// the selection (here: B holds a packet stamped +1 ms) finds it empty: 5.7
// detaches it (old_flows is empty); latest moves it to old_flows and detaches it
// when it reaches it again in the same call (B being throttled, nothing is
// sent in between). Either way: detached, credit kept.
// (Owners carry kHugeRate so that `latest` does not fast-path them; the gap
// would be 0 anyway and the credit stays positive, so no pacing update.)
TYPED_TEST(EdgeCases, E01_NewFlowBurstCredit) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &a}, kT0, &in);
    ASSERT_EQ(in.size(), 3U);
    EXPECT_EQ(credit_of(q, owner_key(1)), 15140);
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::new_list);

    const std::int32_t expect_credit[3] = {13626, 12112, 10598};
    for (int i = 0; i < 3; ++i) {
      Packet* p = q.dequeue(kT0);
      ASSERT_NE(p, nullptr) << i;
      EXPECT_EQ(p, in[static_cast<std::size_t>(i)]);
      EXPECT_EQ(credit_of(q, owner_key(1)), expect_credit[i]);
      expect_consistent(q, kT0);
    }
    // The flow is still at the head of new_flows with no packet. docs/fq-rules.md#statistics: latest
    // counts it inactive as soon as its qlen hits 0, 5.7 only once detached.
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::new_list);
    EXPECT_EQ(q.stats(kT0).inactive_flows, c == Compat::latest ? 1U : 0U);
    EXPECT_EQ(q.dequeue(kT0), nullptr);  // empty qdisc: nothing looked at
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::new_list);
    EXPECT_EQ(q.watchdog().request_count(), 0U);

    FlowOwner b = connected_owner(2);
    Packet& pb = pool.make({.len = 100, .owner = &b, .tstamp = kT0 + kMs});
    ASSERT_EQ(q.enqueue(pb, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::detached);
    EXPECT_EQ(credit_of(q, owner_key(1)), 10598);
    EXPECT_EQ(state_of(q, owner_key(2)), FlowState::throttled);
    const FqStats st = q.stats(kT0);
    EXPECT_EQ(st.throttled, 1U);
    EXPECT_EQ(st.packets, 3U);
    EXPECT_EQ(st.bytes, 3U * 1514U);
    EXPECT_EQ(st.inactive_flows, 1U);
    EXPECT_EQ(q.watchdog().request_count(), 1U);
    expect_consistent(q, kT0);
  }
}

// E1, second half: the emptied new flow goes to old_flows when old_flows is not
// empty (5.7), and always (latest). Setup: B sends 10 x 1514 (credit 15140 -> 0)
// and keeps an 11th packet; then A (3 packets) arrives.
//   dequeue: B at the head of new_flows has credit 0 -> +3028, to old_flows;
//            A sends A1 (then A2, A3);
//   dequeue: A empty at the head of new_flows -> old_flows [B, A]; B sends B11.
// latest: B and A are linked on band 0's new list (new flows), moved to band 1's
// old list (priority 0 -> band 1); same order.
TYPED_TEST(EdgeCases, E01_EmptyNewFlowJoinsOldFlows) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1), b = slow_owner(2);
    std::vector<Packet*> bin, ain;
    enqueue_n(q, pool, 11, {.len = 1514, .owner = &b}, kT0, &bin);
    auto first = drain(q, kT0, 10);
    ASSERT_EQ(first.size(), 10U);
    EXPECT_EQ(credit_of(q, owner_key(2)), 0);
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &a}, kT0, &ain);
    auto next = drain(q, kT0, 3);
    ASSERT_EQ(next.size(), 3U);
    EXPECT_EQ(cookies(next), cookies(ain));
    EXPECT_EQ(credit_of(q, owner_key(2)), 3028);
    EXPECT_EQ(state_of(q, owner_key(2)), FlowState::old_list);

    Packet* p = q.dequeue(kT0);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, bin[10]);
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::old_list);
    EXPECT_EQ(credit_of(q, owner_key(2)), 3028 - 1514);

    // qlen is 0: the next dequeue returns at once and both stay on old_flows;
    // a dequeue that runs the selection detaches both (docs/fq-rules.md#empty-flows, head is old_flows).
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::old_list);
    FlowOwner sentinel = connected_owner(kSentinelId);
    settle(q, pool, sentinel, kT0);
    EXPECT_EQ(state_of(q, owner_key(1)), FlowState::detached);
    EXPECT_EQ(state_of(q, owner_key(2)), FlowState::detached);
    expect_consistent(q, kT0);
  }
}

// E1, the 6.7 change: an empty flow at the head of a new list always goes to
// the old list first (latest), whereas 5.7 detaches it when old_flows is empty.
// After A's 3 packets, B (a new flow) gets one packet; the next dequeue finds A
// empty first and then sends B's packet. 5.7: A detached. latest: A sits on the
// old list (of its band 1), not reached again in this call.
TYPED_TEST(EdgeCases, E01_EmptyNewFlowOldListFirst) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = slow_owner(1), b = slow_owner(2);
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &a}, kT0);
    EXPECT_EQ(drain(q, kT0).size(), 3U);
    std::vector<Packet*> bin;
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &b}, kT0, &bin);
    EXPECT_EQ(q.dequeue(kT0), bin[0]);
    EXPECT_EQ(state_of(q, owner_key(1)),
              c == Compat::latest ? FlowState::old_list : FlowState::detached);
    expect_consistent(q, kT0);
  }
}

// E2: credit 3028 (initial_quantum 3028), one 65226-byte GSO packet: it is sent
// because the credit is positive, credit = 3028 - 65226 = -62198. Before the next
// packet the flow needs 21 quantum additions: -62198 + 21*3028 = 1390 > 0 (20
// would leave -1638). After the next 1514-byte packet: 1390 - 1514 = -124,
// which pins the number of additions to exactly 21.
TYPED_TEST(EdgeCases, E02_DeficitLargeGso) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.initial_quantum = 3028;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner a = slow_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 1, {.len = 65226, .owner = &a, .segments = 44}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &a}, kT0, &in);
    ASSERT_EQ(in.size(), 2U);

    EXPECT_EQ(q.dequeue(kT0), in[0]);
    EXPECT_EQ(credit_of(q, owner_key(1)), -62198);
    FqStats st = q.stats(kT0);
    EXPECT_EQ(st.packets, 44U);  // tc's "pkt" counts GSO segments
    EXPECT_EQ(st.bytes, 65226U);

    EXPECT_EQ(q.dequeue(kT0), in[1]);
    EXPECT_EQ(credit_of(q, owner_key(1)), -124);
    st = q.stats(kT0);
    EXPECT_EQ(st.packets, 45U);
    EXPECT_EQ(st.bytes, 65226U + 1514U);
    EXPECT_EQ(st.throttled, 0U);
    expect_consistent(q, kT0);
  }
}

// Detach flow `o` with a given credit: initial_quantum = credit + 1514, one
// packet, dequeue it, then settle() so that a dequeue finds the flow empty and
// detaches it at kT0 = jiffy 2500 (age = 2500|1 = 2501).
template <Scheduler S>
void detach_with_credit(S& q, PacketPool& pool, FlowOwner& o, FlowOwner& sentinel) {
  std::vector<Packet*> in;
  enqueue_n(q, pool, 1, {.len = 1514, .owner = &o}, kT0, &in);
  ASSERT_EQ(in.size(), 1U);
  ASSERT_EQ(q.dequeue(kT0), in[0]);
  settle(q, pool, sentinel, kT0);
  ASSERT_EQ(state_of(q, owner_key(o.id)), FlowState::detached);
}

// E3: detached with credit 500; a packet 50 ms later (> refill_delay 40 ms)
// refills to quantum 3028; 30 ms later the credit stays 500.
// Jiffies at HZ 250: detach at jiffy 2500 -> age 2501; refill_delay 40 ms = 10
// jiffies. +50 ms = jiffy 2512 > 2511 -> refill. +30 ms = jiffy 2507 -> no refill.
TYPED_TEST(EdgeCases, E03_RefillAfterIdle) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    for (const Time delay : {50 * kMs, 30 * kMs}) {
      SCOPED_TRACE(delay);
      FqConfig cfg = make_cfg(c);
      cfg.initial_quantum = 2014;  // 2014 - 1514 = 500
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner a = slow_owner(1), sentinel = connected_owner(kSentinelId);
      detach_with_credit(q, pool, a, sentinel);
      EXPECT_EQ(credit_of(q, owner_key(1)), 500);
      std::vector<Packet*> in;
      enqueue_n(q, pool, 1, {.len = 1514, .owner = &a}, kT0 + delay, &in);
      ASSERT_EQ(in.size(), 1U);
      EXPECT_EQ(credit_of(q, owner_key(1)), delay == 50 * kMs ? 3028 : 500);
      EXPECT_EQ(state_of(q, owner_key(1)), FlowState::new_list);
      expect_consistent(q, kT0 + delay);
    }
  }
}

// E3, at the jiffy boundary (derived from the jiffies model jiffies =
// floor(now / 4 ms) at HZ 250): refill needs jiffies > age + 10 = 2511.
// +44 ms -> jiffy 2511 (not after) -> 500; +48 ms -> jiffy 2512 -> 3028.
TYPED_TEST(EdgeCases, E03_RefillAfterIdleJiffyBoundary) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    for (const Time delay : {44 * kMs, 48 * kMs}) {
      SCOPED_TRACE(delay);
      FqConfig cfg = make_cfg(c);
      cfg.initial_quantum = 2014;
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner a = slow_owner(1), sentinel = connected_owner(kSentinelId);
      detach_with_credit(q, pool, a, sentinel);
      enqueue_n(q, pool, 1, {.len = 1514, .owner = &a}, kT0 + delay, nullptr);
      EXPECT_EQ(credit_of(q, owner_key(1)), delay == 48 * kMs ? 3028 : 500);
    }
  }
}

// E4 (positive half): detached with 15140 (> quantum), a packet 1 s later
// keeps 15140: the refill is max(credit, quantum) only.
TYPED_TEST(EdgeCases, E04_RefillKeepsLargeCredit) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.initial_quantum = 15140 + 1514;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner a = slow_owner(1), sentinel = connected_owner(kSentinelId);
    detach_with_credit(q, pool, a, sentinel);
    EXPECT_EQ(credit_of(q, owner_key(1)), 15140);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &a}, kT0 + kSec, nullptr);
    EXPECT_EQ(credit_of(q, owner_key(1)), 15140);
  }
}

// E4 (negative half), 5.7 only: the max is taken on the credits reinterpreted
// as u32, so a negative credit (huge as u32) survives the refill.
// A flow that is served is only ever detached with a positive credit (the
// credit test of docs/fq-rules.md#flow-credit comes before the emptiness test of docs/fq-rules.md#empty-flows), so the
// detached negative credit is built from initial_quantum = 2^32 - 1000
// (credit -1000; 5.7 accepts any u32, latest refuses > INT_MAX, see E34) and
// flow_limit 0: the first packet allocates the flow and is dropped by the
// flow limit, leaving a detached flow with credit -1000 (docs/fq-rules.md#lookup-allocation-and-socket-reuse then docs/fq-rules.md#flow-limit).
// 1 s later (flow_limit raised to 100 by change()) a packet keeps -1000.
// Its dequeue then needs one quantum: -1000 + 3028 = 2028 > 0, sent: 514.
TYPED_TEST(EdgeCases, E04_RefillKeepsNegativeCredit_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  cfg.initial_quantum = 0xFFFFFC18U;  // (int32)-1000
  cfg.flow_limit = 0;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner a = slow_owner(1);
  Packet& p0 = pool.make({.len = 1514, .owner = &a});
  EXPECT_EQ(q.enqueue(p0, kT0), Verdict::drop_flow_limit);
  ASSERT_EQ(state_of(q, owner_key(1)), FlowState::detached);
  EXPECT_EQ(credit_of(q, owner_key(1)), -1000);

  cfg.flow_limit = 100;
  EXPECT_EQ(q.change(cfg, kT0 + kSec), 0U);
  Packet& p1 = pool.make({.len = 1514, .owner = &a});
  ASSERT_EQ(q.enqueue(p1, kT0 + kSec), Verdict::queued);
  EXPECT_EQ(credit_of(q, owner_key(1)), -1000);
  EXPECT_EQ(q.dequeue(kT0 + kSec), &p1);
  EXPECT_EQ(credit_of(q, owner_key(1)), 514);
  expect_consistent(q, kT0 + kSec);
}

}  // namespace
}  // namespace ufq::test
