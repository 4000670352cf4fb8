// Pacing (docs/fq-rules.md#pacing-gap): edge cases 12, 13, 14, 16, 18.
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

template <Scheduler S>
FlowInfo flow_of(const S& q, std::uint64_t key) {
  const auto f = find_flow(q, key);
  EXPECT_TRUE(f.has_value()) << "no flow with key " << key;
  return f.value_or(FlowInfo{});
}

// E12: a (connected or unconnected) UDP owner with max pacing rate 50 000 B/s
// (400 kbit/s) <= low_rate_threshold 68 750: every packet forces credit 0 and a
// gap of its own length: 1514 * 1e9 / 50000 = 30 280 000 ns.
//   dequeue(T)            -> p1, credit 15140-1514 -> forced 0, next = T + 30.28 ms
//   dequeue(T)            -> nothing: credit 0 -> +3028 (old list), p2 not due -> throttled
//   dequeue(T + 30.28 ms) -> p2, credit 3028-1514 -> forced 0, next = +30.28 ms
//                            (drift: now - time_next_packet = 0)
// The unconnected owner is keyed by its packets' hash (docs/fq-rules.md#classification step 3) but its rate
// still applies.
TYPED_TEST(EdgeCases, E12_LowRatePacing) {
  constexpr Time kGap = 30'280'000;
  for (Compat c : kBothCompat) {
    for (const auto kind : {FlowOwner::Kind::connected, FlowOwner::Kind::unconnected}) {
      SCOPED_TRACE(compat_name(c));
      SCOPED_TRACE(kind == FlowOwner::Kind::connected ? "connected" : "unconnected");
      TypeParam q(make_cfg(c));
      PacketPool pool;
      FlowOwner o = kind_owner(5, kind, 50000);
      const std::uint64_t key =
          kind == FlowOwner::Kind::connected ? owner_key(5) : hashed_key(77, 1023);
      std::vector<Packet*> in;
      enqueue_n(q, pool, 3, {.len = 1514, .owner = &o, .hash = 77}, kT0, &in);
      ASSERT_EQ(in.size(), 3U);
      EXPECT_EQ(q.internal_qlen(), 0U);

      EXPECT_EQ(q.dequeue(kT0), in[0]);
      FlowInfo f = flow_of(q, key);
      EXPECT_EQ(f.credit, 0);
      EXPECT_EQ(f.time_next_packet, kT0 + kGap);

      EXPECT_EQ(q.dequeue(kT0), nullptr);
      f = flow_of(q, key);
      EXPECT_EQ(f.state, FlowState::throttled);
      EXPECT_EQ(f.credit, 3028);
      EXPECT_EQ(q.stats(kT0).throttled, 1U);
      ASSERT_TRUE(q.watchdog().queued());
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + kGap);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + kGap + 10 * kUs);

      EXPECT_EQ(q.dequeue(kT0 + kGap - 1), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + kGap), in[1]);
      f = flow_of(q, key);
      EXPECT_EQ(f.credit, 0);
      EXPECT_EQ(f.time_next_packet, kT0 + 2 * kGap);
      EXPECT_EQ(q.dequeue(kT0 + kGap), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + 2 * kGap), in[2]);
      EXPECT_EQ(q.stats(kT0 + 2 * kGap).pkts_too_long, 0U);
      expect_consistent(q, kT0 + 2 * kGap);
    }
  }
}

// E12 at the threshold: "rate <= low_rate_threshold" is inclusive. An owner at
// exactly 68 750 B/s gets credit 0 and a per-packet gap (1514e9 / 68750 =
// 22 021 818 ns); at 68 751 B/s it is quantum-paced (credit 13626 after the
// first packet, no gap yet).
TYPED_TEST(EdgeCases, E12_LowRateThresholdInclusive) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    for (const Rate r : {Rate{68750}, Rate{68751}}) {
      SCOPED_TRACE(r);
      TypeParam q(make_cfg(c));
      PacketPool pool;
      FlowOwner o = rated_owner(1, r);
      enqueue_n(q, pool, 2, {.len = 1514, .owner = &o}, kT0);
      ASSERT_NE(q.dequeue(kT0), nullptr);
      const FlowInfo f = flow_of(q, owner_key(1));
      if (r == 68750) {
        EXPECT_EQ(f.credit, 0);
        EXPECT_EQ(f.time_next_packet, kT0 + 22'021'818);
      } else {
        EXPECT_EQ(f.credit, 13626);
        EXPECT_EQ(f.time_next_packet, 0U);
      }
    }
  }
}

// E13: rate 1 250 000 B/s (10 Mbit/s), above the low-rate threshold. A new flow
// sends 10 x 1514 B back to back (credit 15140 -> 0); the 10th packet leaves
// credit 0 (not > 0), so a gap of max(1514, quantum 3028) bytes is applied:
// 3028 * 1e9 / 1.25e6 = 2 422 400 ns. Afterwards each release refills +3028 and
// lets 2 packets out (credit 3028 -> 1514 (> 0, no gap) -> 0 (gap again)); drift
// is 0 when woken exactly on time, so bursts of 2 every 2.4224 ms.
// Three ways to get the rate: the owner's rate; min(pacing_rate, max_pacing_rate);
// maxrate with an unpaced owner.
TYPED_TEST(EdgeCases, E13_QuantumPacing) {
  constexpr Time kGap = 2'422'400;
  enum class How { owner, owner_min, maxrate };
  for (Compat c : kBothCompat) {
    for (How how : {How::owner, How::owner_min, How::maxrate}) {
      SCOPED_TRACE(compat_name(c));
      SCOPED_TRACE(static_cast<int>(how));
      FqConfig cfg = make_cfg(c);
      FlowOwner o = rated_owner(1, 1'250'000);
      if (how == How::owner_min) o = connected_owner(1, 5'000'000, 1'250'000);
      if (how == How::maxrate) {
        o = connected_owner(1);
        cfg.maxrate = 1'250'000;
      }
      TypeParam q(cfg);
      PacketPool pool;
      std::vector<Packet*> in;
      enqueue_n(q, pool, 30, {.len = 1514, .owner = &o}, kT0, &in);
      ASSERT_EQ(in.size(), 30U);
      ASSERT_EQ(q.internal_qlen(), 0U);

      auto burst = drain(q, kT0);
      EXPECT_EQ(burst.size(), 10U);
      FlowInfo f = flow_of(q, owner_key(1));
      EXPECT_EQ(f.time_next_packet, kT0 + kGap);
      EXPECT_EQ(f.state, FlowState::throttled);
      EXPECT_EQ(f.credit, 3028);

      std::size_t sent = burst.size();
      for (int k = 1; k <= 5; ++k) {
        const Time now = kT0 + static_cast<Time>(k) * kGap;
        EXPECT_EQ(q.dequeue(now - 1), nullptr) << k;
        auto b = drain(q, now);
        EXPECT_EQ(b.size(), 2U) << "burst " << k;
        for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i], in[sent + i]);
        sent += b.size();
        f = flow_of(q, owner_key(1));
        EXPECT_EQ(f.time_next_packet, now + kGap);
        ASSERT_TRUE(q.watchdog().queued());
        EXPECT_EQ(q.watchdog().soft_expiry(), now + kGap);
        q.watchdog().expire();
      }
      expect_consistent(q, kT0 + 5 * kGap);
    }
  }
}

// E14: timestamped (TCP-like) packets with maxrate 1 mbit (125 000 B/s): each
// packet is followed by a gap of its own length, regardless of credit and of
// low_rate_threshold (raised to 200 000 here so that an unstamped packet would
// have its credit forced to 0):
//   1514 B -> 1514e9 / 125000 = 12 112 000 ns;  500 B -> 4 000 000 ns.
// The credit just decreases: 15140 - 1514 = 13626, - 500 = 13126.
TYPED_TEST(EdgeCases, E14_EdtWithMaxrate) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 125000;
    cfg.low_rate_threshold = 200000;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &o, .tstamp = kT0}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 500, .owner = &o, .tstamp = kT0}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &o, .tstamp = kT0}, kT0, &in);
    ASSERT_EQ(in.size(), 3U);
    EXPECT_EQ(q.stats(kT0).fastpath_packets, 0U);  // maxrate set: no fast path

    EXPECT_EQ(q.dequeue(kT0), in[0]);
    FlowInfo f = flow_of(q, owner_key(1));
    EXPECT_EQ(f.time_next_packet, kT0 + 12'112'000);
    EXPECT_EQ(f.credit, 13626);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    const Time t1 = kT0 + 12'112'000;
    EXPECT_EQ(q.dequeue(t1 - 1), nullptr);
    EXPECT_EQ(q.dequeue(t1), in[1]);
    f = flow_of(q, owner_key(1));
    EXPECT_EQ(f.time_next_packet, t1 + 4'000'000);
    EXPECT_EQ(f.credit, 13126);
    EXPECT_EQ(q.dequeue(t1), nullptr);
    EXPECT_EQ(q.dequeue(t1 + 4'000'000), in[2]);
    expect_consistent(q, t1 + 4'000'000);
  }
}

// E16: maxrate 8 kbit (1000 B/s), unstamped 1514 B: rate <= low_rate_threshold,
// so credit 0 and plen stays 1514: gap = 1514e9/1000 = 1.514 s > 1 s -> 1 s,
// pkts_too_long +1.
TYPED_TEST(EdgeCases, E16_OneSecondCap) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 1000;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 2, {.len = 1514, .owner = &o}, kT0, &in);
    EXPECT_EQ(q.dequeue(kT0), in[0]);
    FlowInfo f = flow_of(q, owner_key(1));
    EXPECT_EQ(f.time_next_packet, kT0 + kSec);
    EXPECT_EQ(f.credit, 0);
    EXPECT_EQ(q.stats(kT0).pkts_too_long, 1U);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + kSec - 1), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + kSec), in[1]);
    EXPECT_EQ(q.stats(kT0 + kSec).pkts_too_long, 2U);
    expect_consistent(q, kT0 + kSec);
  }
}

// E16 at the cap: a gap of exactly 1 s (maxrate 1514 B/s, 1514-byte packet:
// 1514e9 / 1514 = 1e9) is not "too long" (> 1 s is).
TYPED_TEST(EdgeCases, E16_ExactlyOneSecondNotCounted) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 1514;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = connected_owner(1);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = &o}, kT0);
    ASSERT_NE(q.dequeue(kT0), nullptr);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, kT0 + kSec);
    EXPECT_EQ(q.stats(kT0).pkts_too_long, 0U);
  }
}

// E16, maxrate 0 (derived): the division is skipped, gap = plen * 1e9 > 1 s ->
// capped at 1 s and counted, for unstamped (credit forced 0, since 0 <= the
// low-rate threshold) and stamped packets (credit untouched) alike. maxrate 0
// is not "unlimited", so the fast path stays unused in latest.
TYPED_TEST(EdgeCases, E16_MaxrateZero) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 0;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner u = connected_owner(1);
    FlowOwner t = tcp_owner(2);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 1, {.len = 100, .owner = &u}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &t, .tstamp = kT0}, kT0, &in);
    enqueue_n(q, pool, 1, {.len = 100, .owner = &t, .tstamp = kT0}, kT0, &in);
    ASSERT_EQ(in.size(), 3U);
    EXPECT_EQ(q.internal_qlen(), 0U);
    EXPECT_EQ(q.dequeue(kT0), in[0]);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, kT0 + kSec);
    EXPECT_EQ(flow_of(q, owner_key(1)).credit, 0);
    EXPECT_EQ(q.stats(kT0).pkts_too_long, 1U);
    EXPECT_EQ(q.dequeue(kT0), in[1]);
    EXPECT_EQ(flow_of(q, owner_key(2)).time_next_packet, kT0 + kSec);
    EXPECT_EQ(flow_of(q, owner_key(2)).credit, 15140 - 100);
    EXPECT_EQ(q.stats(kT0).pkts_too_long, 2U);
    EXPECT_EQ(q.dequeue(kT0), nullptr);  // in[2] waits for its flow's 1 s gap
    EXPECT_EQ(q.dequeue(kT0 + kSec), in[2]);
    EXPECT_EQ(q.stats(kT0 + kSec).pkts_too_long, 3U);
    EXPECT_EQ(q.stats(kT0 + kSec).fastpath_packets, 0U);
    expect_consistent(q, kT0 + kSec);
  }
}

// E18: drift compensation. Stamped 1000-byte packets with maxrate 1e7 B/s: gap =
// 1000e9/1e7 = 100 000 ns after every packet.
//   dequeue(T)          -> p1, next = T + 100 us (first pacing: no drift term)
//   dequeue(T + 120 us) -> p2, 20 us late: gap = 100 - min(50, 20) = 80 -> next = T + 200 us
//   dequeue(T + 500 us) -> p3, 300 us late: gap = 100 - min(50, 300) = 50 -> next = T + 550 us
TYPED_TEST(EdgeCases, E18_DriftCompensation) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    FqConfig cfg = make_cfg(c);
    cfg.maxrate = 10'000'000;
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = tcp_owner(1);
    std::vector<Packet*> in;
    enqueue_n(q, pool, 3, {.len = 1000, .owner = &o, .tstamp = kT0}, kT0, &in);
    ASSERT_EQ(in.size(), 3U);
    EXPECT_EQ(q.dequeue(kT0), in[0]);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, kT0 + 100 * kUs);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 120 * kUs), in[1]);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, kT0 + 200 * kUs);
    EXPECT_EQ(q.dequeue(kT0 + 120 * kUs), nullptr);
    EXPECT_EQ(q.dequeue(kT0 + 500 * kUs), in[2]);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, kT0 + 550 * kUs);
    expect_consistent(q, kT0 + 500 * kUs);
  }
}

// E18 with quantum pacing (unstamped, 10 Mbit owner as in E13): a release 1 ms
// late is compensated by min(gap/2, lateness) = min(1 211 200, 1 000 000), so the
// next due time stays on the original grid: T1 + 1 ms + 2 422 400 - 1 000 000.
TYPED_TEST(EdgeCases, E18_DriftCompensationQuantumPacing) {
  constexpr Time kGap = 2'422'400;
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner o = rated_owner(1, 1'250'000);
    enqueue_n(q, pool, 20, {.len = 1514, .owner = &o}, kT0, nullptr);
    EXPECT_EQ(drain(q, kT0).size(), 10U);
    const Time t1 = kT0 + kGap;
    EXPECT_EQ(drain(q, t1 + kMs).size(), 2U);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, t1 + kGap);
    // 2 ms late: min(1 211 200, 2 000 000) = 1 211 200 -> next = now + 1 211 200.
    const Time late = t1 + kGap + 2 * kMs;
    EXPECT_EQ(drain(q, late).size(), 2U);
    EXPECT_EQ(flow_of(q, owner_key(1)).time_next_packet, late + kGap / 2);
  }
}

}  // namespace
}  // namespace ufq::test
