// Statistics: edge cases 23, 24, 45 (docs/fq-rules.md#releasing-throttled-flows, #statistics).
#include <set>

#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E23: one flow throttled until now + 40 us, slack 10 us -> the stat
// time_next_delayed_flow = 40 + 10 - 0 = 50 us ("next_packet_delay 50us");
// 15 us later: 35 us. Nothing throttled -> the stored value is ~0 and the stat
// is negative (tc omits the field).
TYPED_TEST(EdgeCases, E23_NextPacketDelay) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    EXPECT_LT(q.stats(kT0).time_next_delayed_flow, 0);
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    Packet& p = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 40 * kUs});
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.stats(kT0).time_next_delayed_flow, 50000);
    EXPECT_EQ(q.stats(kT0 + 15 * kUs).time_next_delayed_flow, 35000);
    EXPECT_EQ(q.dequeue(kT0 + 40 * kUs), &p);
    EXPECT_LT(q.stats(kT0 + 40 * kUs).time_next_delayed_flow, 0);

    FqConfig s0 = make_cfg(c);
    s0.timer_slack_ns = 0;
    TypeParam z(s0);
    Packet& p2 = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 40 * kUs});
    ASSERT_EQ(z.enqueue(p2, kT0), Verdict::queued);
    EXPECT_EQ(z.dequeue(kT0), nullptr);
    EXPECT_EQ(z.stats(kT0).time_next_delayed_flow, 40000);
  }
}

// E24: EWMA of the release lateness, ewma = ewma - ewma/8 + sample/8.
//   first release 80 us late: 0 - 0 + 80000/8 = 10000 ns ("latency 10us")
//   next release exactly on time (sample 0): 5.7 updates: 10000 - 1250 + 0 =
//   8750; latest (6.13+) skips zero samples: stays 10000.
//   then 16 us late: from 8750: 8750 - 1093 + 2000 = 9657 (5.7);
//                    from 10000: 10000 - 1250 + 2000 = 10750 (latest).
TYPED_TEST(EdgeCases, E24_LatencyEwma) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 1, {.len = 1000, .owner = &o, .tstamp = kT0 + 100 * kUs}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 1000, .owner = &o, .tstamp = kT0 + 300 * kUs}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 1000, .owner = &o, .tstamp = kT0 + 500 * kUs}, kT0, &in);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 180 * kUs), in[0]);
    EXPECT_EQ(q.stats(kT0 + 180 * kUs).unthrottle_latency_ns, 10000U);
    EXPECT_EQ(q.dequeue(kT0 + 180 * kUs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 300 * kUs), in[1]);
    const bool s = c == Compat::linux_5_7;
    EXPECT_EQ(q.stats(kT0 + 300 * kUs).unthrottle_latency_ns, s ? 8750U : 10000U);
    EXPECT_EQ(q.dequeue(kT0 + 300 * kUs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 516 * kUs), in[2]);
    EXPECT_EQ(q.stats(kT0 + 516 * kUs).unthrottle_latency_ns, s ? 9657U : 10750U);
  }
}

// E45: counters reconcile at all times: queued packets = sum of flow qlen +
// internal qlen; backlog = sum of queued pkt_len; latest: sum band_pkt_count =
// queued - internal. A scripted mix touching every path: internal queue (5.7
// priority 7 / latest fast path), several bands, throttled flows, flow-limit,
// horizon and band-limit drops, change() trimming and reset(); checked after
// every operation.
TYPED_TEST(EdgeCases, E45_CountersReconcile) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.flow_limit = 5;
    cfg.limit = 12;
    TypeParam q(cfg);
    PacketPool pool;
    std::set<Packet*> held;
    std::uint64_t backlog = 0;
    std::uint64_t offered = 0;
    std::uint64_t dequeued = 0;  // counted here: the fast scheduler derives its own from the identity
    FlowOwner udp = connected_owner(1), tcp = tcp_owner(2), paced = rated_owner(3, 50000),
              lst = kind_owner(4, FlowOwner::Kind::listener);
    auto put = [&](const PktSpec& s, Time now) {
      Packet& p = pool.make(s);
      ++offered;
      if (q.enqueue(p, now) == Verdict::queued) {
        held.insert(&p);
        backlog += p.len;
      } else {
        pool.release(p);
      }
      expect_consistent(q, now, backlog);
    };
    auto take = [&](Packet& p) {
      ASSERT_EQ(held.count(&p), 1U) << "returned a packet it did not hold";
      held.erase(&p);
      backlog -= p.len;
      pool.release(p);
    };
    auto get = [&](Time now) {
      Packet* p = q.dequeue(now);
      if (p != nullptr) {
        take(*p);
        ++dequeued;
      }
      expect_consistent(q, now, backlog);
      return p != nullptr;
    };
    Time t = kT0;
    put({.len = 100, .owner = &udp}, t);                    // latest: fast path
    put({.len = 200, .owner = &udp, .priority = 7}, t);     // 5.7: internal
    for (int i = 0; i < 7; ++i) put({.len = 300, .owner = &paced, .priority = 6}, t);  // 2 flow-limit drops
    put({.len = 400, .owner = &tcp, .tstamp = t + 2 * kMs, .priority = 1}, t);
    put({.len = 500, .owner = &tcp, .tstamp = t + 20 * kSec}, t);  // latest: horizon drop
    put({.len = 600, .owner = &lst, .hash = 5}, t);
    for (int i = 0; i < 4; ++i) put({.len = 700, .hash = static_cast<std::uint32_t>(i)}, t);  // limit drops
    while (get(t)) {
    }
    t += kMs;
    put({.len = 800, .owner = &udp}, t);
    t += 2 * kMs;
    while (get(t)) {
    }
    FqConfig smaller = cfg;
    smaller.limit = 2;
    put({.len = 900, .owner = &lst, .hash = 6}, t);
    put({.len = 900, .owner = &lst, .hash = 7}, t);
    put({.len = 900, .owner = &lst, .hash = 8}, t);
    q.change(smaller, t, [&](Packet& p) {
      take(p);
      ++dequeued;  // trimmed packets count as dequeued
    });
    expect_consistent(q, t, backlog);
    q.reset([&](Packet& p) { take(p); });
    expect_consistent(q, t, backlog);
    EXPECT_TRUE(held.empty());
    // After reset() the backlog and the dequeued count go on from there.
    t += kMs;
    put({.len = 1000, .owner = &udp}, t);
    put({.len = 1100, .owner = &tcp}, t);
    EXPECT_TRUE(get(t));
    const FqStats st = q.stats(t);
    EXPECT_EQ(st.offered, offered);
    EXPECT_GT(st.drops, 0U);
    EXPECT_EQ(st.dequeued, dequeued);
    EXPECT_EQ(st.backlog, backlog);
    EXPECT_GT(st.purged, 0U);
  }
}

}  // namespace
}  // namespace ufq::test
