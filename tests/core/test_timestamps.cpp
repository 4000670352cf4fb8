// EDT timestamps, horizon, CE marking, nopacing: edge cases 8, 9, 10, 11, 15, 17
// (docs/fq-rules.md#departure-time-and-horizon, #packet-order-in-a-flow, #throttling, #sending-and-ce-marking).
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E8 (latest): default horizon 10 s with horizon_drop. A timestamp now + 11 s
// is dropped (horizon_drops 1, drops 1); now + 10 s exactly is accepted.
TYPED_TEST(EdgeCases, E08_HorizonDrop_L) {
  TypeParam q(make_cfg(Compat::latest));
  PacketPool pool;
  FlowOwner o = tcp_owner(1);
  Packet& far = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 + 11 * kSec});
  EXPECT_EQ(q.enqueue(far, kT0), Verdict::drop_horizon);
  Packet& edge = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 + 10 * kSec});
  EXPECT_EQ(q.enqueue(edge, kT0), Verdict::queued);
  EXPECT_EQ(edge.tstamp, kT0 + 10 * kSec);
  FqStats st = q.stats(kT0);
  EXPECT_EQ(st.horizon_drops, 1U);
  EXPECT_EQ(st.horizon_caps, 0U);
  EXPECT_EQ(st.drops, 1U);
  EXPECT_EQ(st.qlen, 1U);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.dequeue(kT0 + 10 * kSec - 1), nullptr);
  EXPECT_EQ(q.dequeue(kT0 + 10 * kSec), &edge);
  expect_consistent(q, kT0 + 10 * kSec);
}

// E8 (5.7): no horizon. The now + 11 s packet is queued and leaves at 11 s.
TYPED_TEST(EdgeCases, E08_NoHorizon_S) {
  TypeParam q(make_cfg(Compat::linux_5_7));
  PacketPool pool;
  FlowOwner o = tcp_owner(1);
  Packet& far = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 + 11 * kSec});
  EXPECT_EQ(q.enqueue(far, kT0), Verdict::queued);
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  EXPECT_EQ(q.dequeue(kT0 + 11 * kSec - 1), nullptr);
  EXPECT_EQ(q.dequeue(kT0 + 11 * kSec), &far);
  const FqStats st = q.stats(kT0 + 11 * kSec);
  EXPECT_EQ(st.horizon_drops, 0U);
  EXPECT_EQ(st.drops, 0U);
  expect_consistent(q, kT0 + 11 * kSec);
}

// E9: horizon_cap. latest: the packet is queued with its timestamp rewritten to
// now + 10 s, horizon_caps 1, and the flow is throttled until then. 5.7: no
// horizon, the timestamp is kept and the packet leaves at 11 s.
TYPED_TEST(EdgeCases, E09_HorizonCap) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.horizon_drop = false;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    Packet& p = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 + 11 * kSec});
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
    const Time due = c == Compat::latest ? kT0 + 10 * kSec : kT0 + 11 * kSec;
    EXPECT_EQ(p.tstamp, due);
    EXPECT_EQ(q.stats(kT0).horizon_caps, c == Compat::latest ? 1U : 0U);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.stats(kT0).throttled, 1U);
    const auto f = find_flow(q, owner_key(1));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->state, FlowState::throttled);
    EXPECT_EQ(f->time_next_packet, due);
    ASSERT_TRUE(q.watchdog().queued());
    EXPECT_EQ(q.watchdog().soft_expiry(), due);
    EXPECT_EQ(q.dequeue(due - 1), nullptr);
    EXPECT_EQ(q.dequeue(due), &p);
    expect_consistent(q, due);
  }
}

// E10: a timestamp 1 ms in the past is eligible at once. CE compares the
// lateness against that time: (now - t) - ce_threshold = 1 ms - thr must be > 0.
//   ce_threshold 999 us  -> 1 us > 0 -> CE set, ce_mark 1
//   ce_threshold 1000 us -> 0, not > 0 -> no mark
// A non-TCP owner with a rate keeps `latest` off the fast path (which would skip
// CE marking altogether, see the next test).
TYPED_TEST(EdgeCases, E10_PastTimestamp) {
  for (Compat c : kBothCompat) {
    for (const std::uint32_t thr : {999U, 1000U}) {
      SCOPED_TRACE(compat_name(c));
      SCOPED_TRACE(thr);
      FqConfig cfg = make_cfg(c);
      cfg.ce_threshold_us = thr;
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner o = slow_owner(1);
      Packet& p = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 - kMs, .ect = true});
      ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), &p);
      const bool marked = thr == 999U;
      EXPECT_EQ(p.ce, marked);
      const FqStats st = q.stats(kT0);
      EXPECT_EQ(st.ce_mark, marked ? 1U : 0U);
      EXPECT_EQ(st.throttled, 0U);
    }
  }
}

// E10 (latest, derived from docs/fq-rules.md#fast-path): the same past-stamped packet from a TCP
// owner on an empty qdisc takes the fast path, which skips CE marking.
TYPED_TEST(EdgeCases, E10_PastTimestampFastPathNoCe_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.ce_threshold_us = 999;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner o = tcp_owner(1);
  Packet& p = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 - kMs, .ect = true});
  ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
  EXPECT_EQ(q.internal_qlen(), 1U);
  EXPECT_EQ(q.dequeue(kT0), &p);
  EXPECT_FALSE(p.ce);
  EXPECT_EQ(q.stats(kT0).ce_mark, 0U);
  EXPECT_EQ(q.stats(kT0).fastpath_packets, 1U);
}

// E11: ce_threshold 4 ms; unpaced packets (t = enqueue time) dequeued 5 ms later:
// 5 - 4 = 1 ms > 0 -> an ECT packet gets CE and ce_mark +1; a non-ECT packet is
// not marked but still counts in ce_mark (derived). At exactly 4 ms: 0, no mark;
// at 3 ms: no mark.
TYPED_TEST(EdgeCases, E11_CeMarking) {
  for (Compat c : kBothCompat) {
    for (const Time wait : {5 * kMs, 4 * kMs, 3 * kMs}) {
      SCOPED_TRACE(compat_name(c));
      SCOPED_TRACE(wait);
      FqConfig cfg = make_cfg(c);
      cfg.ce_threshold_us = 4000;
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner o = slow_owner(1);
      Packet& ect = pool.make({.len = 1514, .owner = &o, .ect = true});
      Packet& plain = pool.make({.len = 1514, .owner = &o, .ect = false});
      ASSERT_EQ(q.enqueue(ect, kT0), Verdict::queued);
      ASSERT_EQ(q.enqueue(plain, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0 + wait), &ect);
      EXPECT_EQ(q.dequeue(kT0 + wait), &plain);
      const bool late = wait == 5 * kMs;
      EXPECT_EQ(ect.ce, late);
      EXPECT_FALSE(plain.ce);
      EXPECT_EQ(q.stats(kT0 + wait).ce_mark, late ? 2U : 0U);
    }
  }
}

// E11 in bursts near time 0 (derived): before `now` reaches ce_threshold no
// due packet can be late by it (the fast scheduler's 5.7 burst then leaves
// the test out), after it packets can. ce_threshold 4 ms; 4 flows of 4
// ECT packets (1514 B, two per DRR visit), enqueued at 1 ms and due at 1
// (unstamped), 1.5, 2.5 and 5 ms. Bursts of 3 at 3 ms and of 1 at 4 ms - 1
// ns (no mark possible), at 4 ms exactly (late by 3 ms at most: none), at
// 6 ms (due 1 or 1.5 ms: marked; 2.5: not), then at 10 ms the rest (due 5
// ms: late by 5 ms, marked). The packets, their order, CE bits, due times
// and ce_mark equal those of the same dequeues made one dequeue() at a time.
TYPED_TEST(EdgeCases, E11_CeMarkingInBurstNearTimeZero) {
  struct Left {
    std::uint64_t cookie;
    Time at, due;
    bool ce;
    bool operator==(const Left&) const = default;
  };
  constexpr Time kThr = 4 * kMs;
  const std::array<std::pair<Time, std::size_t>, 5> steps = {
      {{3 * kMs, 3}, {kThr - 1, 1}, {kThr, 2}, {6 * kMs, 64}, {10 * kMs, 64}}};
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    const auto run = [&](bool bursts, std::uint64_t& ce_mark) {
      FqConfig cfg = make_cfg(c);
      cfg.ce_threshold_us = 4000;
      TypeParam q(cfg);
      PacketPool pool;
      std::array<FlowOwner, 4> owners;
      for (std::size_t i = 0; i < owners.size(); ++i) owners[i] = tcp_owner(i + 1);
      for (FlowOwner& o : owners)
        for (const Time t : {Time{0}, 1500 * kUs, 2500 * kUs, 5 * kMs})
          EXPECT_EQ(q.enqueue(pool.make({.len = 1514, .owner = &o, .tstamp = t, .ect = true}), kMs), Verdict::queued);
      std::vector<Left> left;
      for (const auto& [now, cap] : steps) {
        std::vector<Packet*> out(cap);
        if (bursts)
          out.resize(q.dequeue_burst(now, out));
        else
          out = drain(q, now, cap);
        for (const Packet* p : out) left.push_back({p->cookie, now, p->due, p->ce});
      }
      EXPECT_EQ(q.qlen(), 0U);
      ce_mark = q.stats(10 * kMs).ce_mark;
      return left;
    };
    std::uint64_t burst_marks = 0, single_marks = 0;
    const std::vector<Left> burst = run(true, burst_marks);
    const std::vector<Left> single = run(false, single_marks);
    EXPECT_EQ(burst, single);
    EXPECT_EQ(burst_marks, single_marks);
    ASSERT_EQ(burst.size(), 16U);
    // The rule itself, on either side of the threshold.
    std::uint64_t marked = 0, before_thr = 0;
    for (const Left& l : burst) {
      EXPECT_EQ(l.ce, l.at - l.due > kThr) << l.cookie;
      marked += l.ce;
      before_thr += l.at < kThr;
    }
    EXPECT_EQ(before_thr, 4U);
    EXPECT_EQ(marked, burst_marks);
    EXPECT_GE(marked, 4U);  // the 5 ms packets at 10 ms at least
    EXPECT_LT(marked, 16U);
  }
}

// E15: nopacing still honours timestamps: stamped now + 5 ms -> held 5 ms,
// throttled +1. And an owner rate is ignored (no gap after a burst).
TYPED_TEST(EdgeCases, E15_NopacingHonoursTimestamps) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.pacing = false;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    Packet& p = pool.make({.len = 1514, .owner = &o, .tstamp = kT0 + 5 * kMs});
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.stats(kT0).throttled, 1U);
    ASSERT_TRUE(q.watchdog().queued());
    EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 5 * kMs);
    EXPECT_EQ(q.dequeue(kT0 + 5 * kMs - 1), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 5 * kMs), &p);

    // A low-rate owner (50 000 B/s) would be paced 30.28 ms per packet with
    // pacing on; with nopacing its 3 packets leave together.
    FlowOwner r = rated_owner(2, 50000);
    const Time t = kT0 + 10 * kMs;
    enqueue_n(q, pool, 3, {.len = 1514, .owner = &r}, t, nullptr);
    EXPECT_EQ(drain(q, t).size(), 3U);
    EXPECT_EQ(q.stats(t).throttled, 1U);
    expect_consistent(q, t);
  }
}

// E17 (kernel selftest so_txtime): a connected UDP owner sends a@+20 ms then
// b@+10 ms, the driver running dequeue after each enqueue (as qdisc_run does).
// The first dequeue throttles the flow until 20 ms (time_next_packet = 20 ms);
// b then sorts before a in the flow, but the flow stays throttled until 20 ms:
// both leave at 20 ms, b first.
TYPED_TEST(EdgeCases, E17_OutOfOrderEdt) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    Packet& a = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 20 * kMs});
    Packet& b = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 10 * kMs});
    ASSERT_EQ(q.enqueue(a, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    ASSERT_EQ(q.enqueue(b, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs - 1), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &b);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &a);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), nullptr);
    expect_consistent(q, kT0 + 20 * kMs);
  }
}

// E17 variant (docs/fq-rules.md#packet-order-in-a-flow): when both are queued before any dequeue, the flow's queue
// is ordered by time_to_send, so b leaves at 10 ms and a at 20 ms.
TYPED_TEST(EdgeCases, E17_OutOfOrderEdtNoIntermediateDequeue) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    Packet& a = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 20 * kMs});
    Packet& b = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 10 * kMs});
    Packet& c2 = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 10 * kMs});
    ASSERT_EQ(q.enqueue(a, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(b, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(c2, kT0), Verdict::queued);  // equal keys keep arrival order
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), &b);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), &c2);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &a);
    expect_consistent(q, kT0 + 20 * kMs);
  }
}

// docs/fq-rules.md#packet-order-in-a-flow ties: peek takes the tree minimum only when it is strictly earlier than
// the FIFO head. FIFO [x@10, y@20]; z@10 arrives (earlier than the tail y) and
// goes to the tree. Peek: z (10) is not earlier than x (10) -> x; then z (10 <
// y 20); then y.
TYPED_TEST(EdgeCases, E17_TiesFavourFifo) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    Packet& x = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 10 * kMs});
    Packet& y = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 20 * kMs});
    Packet& z = pool.make({.len = 1000, .owner = &o, .tstamp = kT0 + 10 * kMs});
    ASSERT_EQ(q.enqueue(x, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(y, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(z, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), &x);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), &z);
    EXPECT_EQ(q.dequeue(kT0 + 10 * kMs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 20 * kMs), &y);
  }
}

}  // namespace
}  // namespace ufq::test
