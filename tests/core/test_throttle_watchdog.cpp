// Throttled set, release order and the watchdog request: edge cases 19, 20, 21,
// 22 (watchdog part only) and 47 (docs/fq-rules.md#internal-queue, #releasing-throttled-flows, #arming-the-watchdog, #watchdog-range-rule).
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E19: flows throttled in the order A (due 100 us), B (100 us), C (90 us) are
// released in order C, A, B (ascending time, ties in throttle order), appended
// to old_flows in that order, and therefore sent C, A, B.
TYPED_TEST(EdgeCases, E19_ThrottledReleaseOrder) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = connected_owner(1), b = connected_owner(2), cc = connected_owner(3);
    Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 100 * kUs});
    Packet& pb = pool.make({.len = 1000, .owner = &b, .tstamp = kT0 + 100 * kUs});
    Packet& pc = pool.make({.len = 1000, .owner = &cc, .tstamp = kT0 + 90 * kUs});
    ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(pb, kT0), Verdict::queued);
    ASSERT_EQ(q.enqueue(pc, kT0), Verdict::queued);
    // One dequeue throttles them in new_flows order A, B, C.
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    FqStats st = q.stats(kT0);
    EXPECT_EQ(st.throttled, 3U);
    EXPECT_EQ(st.throttled_flows, 3U);
    EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 90 * kUs);
    EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 90 * kUs);

    const Time t = kT0 + 100 * kUs;
    EXPECT_EQ(q.dequeue(t), &pc);
    // All three were released by that call and sit on old_flows.
    EXPECT_EQ(q.stats(t).throttled_flows, 0U);
    EXPECT_EQ(find_flow(q, owner_key(1))->state, FlowState::old_list);
    EXPECT_EQ(find_flow(q, owner_key(2))->state, FlowState::old_list);
    EXPECT_EQ(q.dequeue(t), &pa);
    EXPECT_EQ(q.dequeue(t), &pb);
    EXPECT_EQ(q.dequeue(t), nullptr);
    EXPECT_EQ(q.time_next_delayed_flow(), kNever);
    expect_consistent(q, t);
  }
}

struct DriverRun {
  int wakeups = 0;
  std::vector<std::pair<Time, std::uint64_t>> departures;  // (time, cookie)
};

// A driver that only wakes when the watchdog fires, at its hard expiry (what an
// otherwise idle CPU does), and then dequeues until nothing is returned.
template <Scheduler S>
DriverRun run_at_hard_expiry(S& q) {
  DriverRun r;
  while (q.watchdog().queued()) {
    const Time t = q.watchdog().hard_expiry();
    q.watchdog().expire();
    ++r.wakeups;
    for (Packet* p : drain(q, t)) r.departures.emplace_back(t, p->cookie);
    if (r.wakeups > 100) break;
  }
  return r;
}

// E20: flows due at 100 us and 105 us. Slack 10 us: one request [100, 110], one
// wake-up at 110 us releases and sends both. Slack 0: [100, 100] then [105, 105],
// two wake-ups.
TYPED_TEST(EdgeCases, E20_WatchdogSlackBatching) {
  for (Compat c : kBothCompat) {
    for (const std::uint32_t slack : {10000U, 0U}) {
      SCOPED_TRACE(compat_name(c));
      SCOPED_TRACE(slack);
      FqConfig cfg = make_cfg(c);
      cfg.timer_slack_ns = slack;
      TypeParam q(cfg);
      PacketPool pool;
      FlowOwner a = connected_owner(1), b = connected_owner(2);
      Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 100 * kUs});
      Packet& pb = pool.make({.len = 1000, .owner = &b, .tstamp = kT0 + 105 * kUs});
      ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
      ASSERT_EQ(q.enqueue(pb, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      ASSERT_TRUE(q.watchdog().queued());
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 100 * kUs);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 100 * kUs + slack);
      EXPECT_EQ(q.watchdog().arm_count(), 1U);

      const DriverRun r = run_at_hard_expiry(q);
      if (slack == 10000U) {
        EXPECT_EQ(r.wakeups, 1);
        ASSERT_EQ(r.departures.size(), 2U);
        EXPECT_EQ(r.departures[0], std::make_pair(kT0 + 110 * kUs, pa.cookie));
        EXPECT_EQ(r.departures[1], std::make_pair(kT0 + 110 * kUs, pb.cookie));
        EXPECT_EQ(q.watchdog().arm_count(), 1U);
      } else {
        EXPECT_EQ(r.wakeups, 2);
        ASSERT_EQ(r.departures.size(), 2U);
        EXPECT_EQ(r.departures[0], std::make_pair(kT0 + 100 * kUs, pa.cookie));
        EXPECT_EQ(r.departures[1], std::make_pair(kT0 + 105 * kUs, pb.cookie));
        EXPECT_EQ(q.watchdog().arm_count(), 2U);
      }
      expect_consistent(q, kT0 + 110 * kUs);
    }
  }
}

// E21 on the Watchdog itself (docs/fq-rules.md#watchdog-range-rule): queued soft 105 (hard 115).
//   request (100, 10): 105 - 100 = 5 <= 10 -> kept, fires by 115 (2 x slack late)
//   request (110, 10): 105 - 110 wraps (u64) -> re-armed [110, 120] (later!)
//   request (90, 10):  110 - 90 = 20 > 10 -> re-armed [90, 100]
//   slack 0: queued soft 105, request (105, 0) -> kept.
TEST(EdgeCases, E21_KeepVsRearmRule) {
  Watchdog w;
  EXPECT_FALSE(w.queued());
  EXPECT_TRUE(w.schedule_range(105, 10));
  EXPECT_TRUE(w.queued());
  EXPECT_EQ(w.soft_expiry(), 105U);
  EXPECT_EQ(w.hard_expiry(), 115U);

  EXPECT_FALSE(w.schedule_range(100, 10));
  EXPECT_EQ(w.soft_expiry(), 105U);
  EXPECT_EQ(w.hard_expiry(), 115U);

  EXPECT_TRUE(w.schedule_range(110, 10));
  EXPECT_EQ(w.soft_expiry(), 110U);
  EXPECT_EQ(w.hard_expiry(), 120U);

  EXPECT_TRUE(w.schedule_range(90, 10));
  EXPECT_EQ(w.soft_expiry(), 90U);
  EXPECT_EQ(w.hard_expiry(), 100U);
  EXPECT_EQ(w.arm_count(), 3U);
  EXPECT_EQ(w.request_count(), 4U);

  Watchdog z;
  EXPECT_TRUE(z.schedule_range(105, 0));
  EXPECT_FALSE(z.schedule_range(105, 0));
  EXPECT_TRUE(z.schedule_range(104, 0));  // soft 105 - 104 = 1 > 0
  EXPECT_EQ(z.soft_expiry(), 104U);
  EXPECT_EQ(z.hard_expiry(), 104U);

  // The edges of the window: soft == expires + delta is kept, one more is not.
  Watchdog e;
  e.schedule_range(115, 10);
  EXPECT_FALSE(e.schedule_range(105, 10));
  EXPECT_TRUE(e.schedule_range(104, 10));

  // Not queued (fired): any request arms.
  Watchdog f;
  f.schedule_range(105, 10);
  f.expire();
  EXPECT_FALSE(f.queued());
  EXPECT_TRUE(f.schedule_range(105, 10));
  EXPECT_EQ(f.arm_count(), 2U);

  // Hard expiry saturates.
  Watchdog s;
  s.schedule_range(kNever - 5, 10);
  EXPECT_EQ(s.hard_expiry(), kNever);

  // Deactivated: nothing happens.
  Watchdog d;
  d.set_deactivated(true);
  EXPECT_FALSE(d.schedule_range(100, 10));
  EXPECT_FALSE(d.queued());
  EXPECT_EQ(d.arm_count(), 0U);
}

// E21 through the scheduler (slack 10 us).
//  * keep: armed [105, 115] for A; a new flow B due 100 -> request (100, 10) is
//    kept; the wake-up at 115 sends B then A.
//  * move later: armed [105, 115]; a dequeue at 105 (not from the timer, which
//    stays queued) sends A; the next due flow C at 110 re-arms to [110, 120].
//  * move earlier: armed [105, 115], flow D due 90 -> [90, 100].
TYPED_TEST(EdgeCases, E21_KeepVsRearmThroughScheduler) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    PacketPool pool;
    FlowOwner a = connected_owner(1), b = connected_owner(2), cc = connected_owner(3),
              d = connected_owner(4);
    {
      TypeParam q(make_cfg(c));
      Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 105 * kUs});
      ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      Packet& pb = pool.make({.len = 1000, .owner = &b, .tstamp = kT0 + 100 * kUs});
      ASSERT_EQ(q.enqueue(pb, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 105 * kUs);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 115 * kUs);
      EXPECT_EQ(q.watchdog().arm_count(), 1U);
      EXPECT_EQ(q.watchdog().request_count(), 2U);
      EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 100 * kUs);
      q.watchdog().expire();
      EXPECT_EQ(q.dequeue(kT0 + 115 * kUs), &pb);
      EXPECT_EQ(q.dequeue(kT0 + 115 * kUs), &pa);
    }
    {
      TypeParam q(make_cfg(c));
      Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 105 * kUs});
      Packet& pc = pool.make({.len = 1000, .owner = &cc, .tstamp = kT0 + 110 * kUs});
      ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
      ASSERT_EQ(q.enqueue(pc, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 105 * kUs);
      EXPECT_EQ(q.dequeue(kT0 + 105 * kUs), &pa);
      EXPECT_EQ(q.dequeue(kT0 + 105 * kUs), nullptr);
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 110 * kUs);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 120 * kUs);
      EXPECT_EQ(q.watchdog().arm_count(), 2U);
    }
    {
      TypeParam q(make_cfg(c));
      Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 105 * kUs});
      ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      Packet& pd = pool.make({.len = 1000, .owner = &d, .tstamp = kT0 + 90 * kUs});
      ASSERT_EQ(q.enqueue(pd, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.watchdog().soft_expiry(), kT0 + 90 * kUs);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 100 * kUs);
      EXPECT_EQ(q.watchdog().arm_count(), 2U);
    }
    {
      // slack 0: the same request twice is kept.
      FqConfig cfg = make_cfg(c);
      cfg.timer_slack_ns = 0;
      TypeParam q(cfg);
      Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 105 * kUs});
      ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
      EXPECT_EQ(q.dequeue(kT0), nullptr);
      EXPECT_EQ(q.dequeue(kT0 + 1), nullptr);
      EXPECT_EQ(q.watchdog().arm_count(), 1U);
      EXPECT_EQ(q.watchdog().request_count(), 2U);
      EXPECT_EQ(q.watchdog().hard_expiry(), kT0 + 105 * kUs);
    }
  }
}

// E22 (hrtimer walk stopping early) is a property of the simulator's model of
// Linux hrtimer bases, not of the scheduler. The only part the Watchdog owns is
// the window each timer is armed with: A [130, 130], J [150, 200], K [120, 250]
// are held exactly as requested (the walk order by hard expiry, and the stop at
// J, are tested with the simulator).
TEST(EdgeCases, E22_WindowsAsRequested) {
  Watchdog a, j, k;
  a.schedule_range(130, 0);
  j.schedule_range(150, 50);
  k.schedule_range(120, 130);
  EXPECT_EQ(a.soft_expiry(), 130U);
  EXPECT_EQ(a.hard_expiry(), 130U);
  EXPECT_EQ(j.soft_expiry(), 150U);
  EXPECT_EQ(j.hard_expiry(), 200U);
  EXPECT_EQ(k.soft_expiry(), 120U);
  EXPECT_EQ(k.hard_expiry(), 250U);
}

// E47: while the internal FIFO holds packets (5.7: priority 7; latest: fast
// path), dequeue returns them without releasing due throttled flows. A is
// throttled until 100 us; two internal packets are queued at 50 us; dequeues at
// 200 us return the internal packets and leave A throttled (throttled_flows 1,
// time_next_delayed_flow 100 us, no EWMA sample); the dequeue at 300 us finds
// the FIFO empty, releases A with sample 300 - 100 = 200 us:
// ewma = 0 - 0 + 200000/8 = 25000 ns.
TYPED_TEST(EdgeCases, E47_InternalQueuePreemptsUnthrottling) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    TypeParam q(make_cfg(c));
    PacketPool pool;
    FlowOwner a = connected_owner(1), b = connected_owner(2);
    Packet& pa = pool.make({.len = 1000, .owner = &a, .tstamp = kT0 + 100 * kUs});
    ASSERT_EQ(q.enqueue(pa, kT0), Verdict::queued);
    EXPECT_EQ(q.dequeue(kT0), nullptr);
    // 5.7: priority 7 goes to the internal queue. latest: the only flow is
    // throttled and not yet due, internal < 8 -> fast path (docs/fq-rules.md#fast-path).
    const std::uint8_t prio = c == Compat::linux_5_7 ? 7 : 0;
    std::vector<Packet*> internal;
    enqueue_n(q, pool, 2, {.len = 200, .owner = &b, .priority = prio}, kT0 + 50 * kUs, &internal);
    ASSERT_EQ(internal.size(), 2U);
    EXPECT_EQ(q.internal_qlen(), 2U);

    const Time t = kT0 + 200 * kUs;
    EXPECT_EQ(q.dequeue(t), internal[0]);
    EXPECT_EQ(q.dequeue(t), internal[1]);
    FqStats st = q.stats(t);
    EXPECT_EQ(st.throttled_flows, 1U);
    EXPECT_EQ(st.unthrottle_latency_ns, 0U);
    EXPECT_EQ(q.time_next_delayed_flow(), kT0 + 100 * kUs);
    EXPECT_EQ(find_flow(q, owner_key(1))->state, FlowState::throttled);

    const Time t2 = kT0 + 300 * kUs;
    EXPECT_EQ(q.dequeue(t2), &pa);
    st = q.stats(t2);
    EXPECT_EQ(st.throttled_flows, 0U);
    EXPECT_EQ(st.unthrottle_latency_ns, 25000U);
    EXPECT_EQ(c == Compat::linux_5_7 ? st.highprio_packets : st.fastpath_packets, 2U);
    expect_consistent(q, t2);
  }
}

}  // namespace
}  // namespace ufq::test
