// Hand-computed cases for the hrtimer model (docs/fq-rules.md#hrtimer-expiry, edge case E22).
#include "ufq/sim/hrtimer_model.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "ufq/sim/event_queue.hpp"

namespace ufq::sim {
namespace {

struct Firing {
  Time time;
  std::string name;
  bool operator==(const Firing&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Firing& r) { return os << r.name << "@" << r.time; }

class HrtimerTest : public ::testing::Test {
 protected:
  explicit HrtimerTest(HrtimerConfig config = {}) : cpu(q, config) {}

  // A timer that records its runs, optionally doing more afterwards.
  Hrtimer& timer(const std::string& name, std::function<void()> then = {}) {
    timers.push_back(std::make_unique<Hrtimer>(cpu, [this, name, then] {
      runs.push_back({q.now(), name});
      if (then) then();
    }));
    return *timers.back();
  }

  EventQueue q;
  HrtimerModel cpu;
  std::vector<std::unique_ptr<Hrtimer>> timers;
  std::vector<Firing> runs;
};

TEST_F(HrtimerTest, OneTimerOneInterrupt) {
  Hrtimer& a = timer("A");
  cpu.start(a, 100, 100);
  EXPECT_TRUE(a.queued());
  EXPECT_EQ(cpu.programmed(), 100u);
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}}));
  EXPECT_FALSE(a.queued());
  EXPECT_EQ(cpu.programmed(), kNever);
  EXPECT_EQ(cpu.stats().interrupts, 1u);
  EXPECT_EQ(cpu.stats().timers_run, 1u);
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  EXPECT_EQ(cpu.stats().device_stops, 1u);  // nothing left after the handler
}

TEST_F(HrtimerTest, SlackLetsOneInterruptRunSeveralTimers) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  cpu.start(a, 100, 150);
  cpu.start(b, 120, 130);  // earlier hard expiry: the device moves to 130
  EXPECT_EQ(cpu.programmed(), 130u);
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  q.run();
  // Walk in hard-expiry order: B (hard 130), then A (soft 100 <= 130).
  EXPECT_EQ(runs, (std::vector<Firing>{{130, "B"}, {130, "A"}}));
  EXPECT_EQ(cpu.stats().interrupts, 1u);
  EXPECT_EQ(cpu.stats().timers_run, 2u);
}

// Edge case E22 (docs/fq-rules.md#edge-cases).
TEST_F(HrtimerTest, WalkStopsAtFirstTimerNotSoftExpired) {
  Hrtimer& a = timer("A");
  Hrtimer& j = timer("J");
  Hrtimer& k = timer("K");
  cpu.start(a, 130, 130);
  cpu.start(j, 150, 200);
  cpu.start(k, 120, 250);
  EXPECT_EQ(cpu.programmed(), 130u);

  q.run_until(130);
  // A ran; J (soft 150 > 130) stopped the walk, so K stayed queued although
  // its soft expiry (120) had passed.
  EXPECT_EQ(runs, (std::vector<Firing>{{130, "A"}}));
  EXPECT_TRUE(j.queued());
  EXPECT_TRUE(k.queued());
  EXPECT_EQ(cpu.programmed(), 200u);  // the earliest hard expiry left: J's

  // K runs at J's hard expiry, in the same interrupt, behind J.
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{130, "A"}, {200, "J"}, {200, "K"}}));
  EXPECT_EQ(cpu.stats().interrupts, 2u);
}

// Edge case 22 continued: cancelling the blocker moves the event later, to
// K's own hard expiry (nothing else would take an interrupt before it).
TEST_F(HrtimerTest, CancellingTheBlockerDelaysTheTimerBehindIt) {
  Hrtimer& a = timer("A");
  Hrtimer& j = timer("J");
  Hrtimer& k = timer("K");
  cpu.start(a, 130, 130);
  cpu.start(j, 150, 200);
  cpu.start(k, 120, 250);
  q.run_until(135);
  EXPECT_TRUE(cpu.cancel(j));
  EXPECT_EQ(cpu.programmed(), 250u);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{130, "A"}, {250, "K"}}));
}

// Edge case 22 continued: another timer's interrupt before 200 still stops at J.
TEST_F(HrtimerTest, AnyClockEventInterruptWalksFromTheFront) {
  Hrtimer& j = timer("J");
  Hrtimer& k = timer("K");
  Hrtimer& t = timer("T");
  cpu.start(j, 150, 200);
  cpu.start(k, 120, 250);
  cpu.start(t, 140, 140);
  q.run_until(140);
  EXPECT_EQ(runs, (std::vector<Firing>{{140, "T"}}));  // J blocks K again
  cpu.start(t, 170, 170);  // now J is soft-expired at 170 and K behind it
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{140, "T"}, {170, "T"}, {170, "J"}, {170, "K"}}));
}

TEST_F(HrtimerTest, StartWritesTheDeviceOnlyForAnEarlierHardExpiry) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  Hrtimer& d = timer("D");
  cpu.start(a, 200, 200);
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  cpu.start(b, 300, 300);  // later: no write
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  EXPECT_EQ(cpu.programmed(), 200u);
  cpu.start(c, 50, 100);  // earlier: write
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  EXPECT_EQ(cpu.programmed(), 100u);
  cpu.start(d, 100, 100);  // equal: no write
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  EXPECT_EQ(cpu.queued_count(), 4u);
}

TEST_F(HrtimerTest, RemovingOrRestartingTheProgrammedTimerReevaluates) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  Hrtimer& d = timer("D");
  cpu.start(a, 200, 200);
  cpu.start(b, 300, 300);
  cpu.start(c, 100, 100);  // the device is programmed for C
  cpu.start(d, 100, 100);
  ASSERT_EQ(cpu.stats().reprograms, 2u);

  EXPECT_TRUE(cpu.cancel(c));  // re-evaluated: D has the same hard expiry
  EXPECT_EQ(cpu.programmed(), 100u);
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  EXPECT_TRUE(cpu.cancel(d));  // now A's 200: the event moves later
  EXPECT_EQ(cpu.programmed(), 200u);
  EXPECT_EQ(cpu.stats().reprograms, 3u);
  cpu.start(a, 250, 250);  // restarting the programmed timer later moves it too
  EXPECT_EQ(cpu.programmed(), 250u);
  EXPECT_EQ(cpu.stats().reprograms, 4u);
  cpu.start(b, 400, 400);  // not the programmed timer, later: nothing
  EXPECT_EQ(cpu.programmed(), 250u);
  EXPECT_EQ(cpu.stats().reprograms, 4u);
  cpu.start(b, 50, 50);  // earlier
  EXPECT_EQ(cpu.programmed(), 50u);
  EXPECT_EQ(cpu.stats().reprograms, 5u);
  EXPECT_TRUE(cpu.cancel(b));
  EXPECT_EQ(cpu.programmed(), 250u);
  EXPECT_EQ(cpu.stats().reprograms, 6u);
  EXPECT_FALSE(cpu.cancel(b));
  EXPECT_TRUE(cpu.cancel(a));
  EXPECT_EQ(cpu.programmed(), kNever);
  EXPECT_EQ(cpu.stats().device_stops, 1u);
  q.run();
  EXPECT_TRUE(runs.empty());
  EXPECT_EQ(cpu.stats().interrupts, 0u);
}

TEST_F(HrtimerTest, OtherEventsDoNotRunTimers) {
  Hrtimer& a = timer("A");
  cpu.start(a, 100, 150);
  bool checked = false;
  Event nic(q, [&] {  // e.g. a TX completion inside A's slack window
    checked = a.queued();
  });
  q.schedule(nic, 120);
  q.run();
  EXPECT_TRUE(checked);
  EXPECT_EQ(runs, (std::vector<Firing>{{150, "A"}}));
}

TEST_F(HrtimerTest, AnEarlierTimerStartedInTheSlackWindowTakesTheOthersAlong) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  cpu.start(a, 100, 150);
  Event nic(q, [&] { cpu.start(b, 125, 125); });
  q.schedule(nic, 120);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{125, "B"}, {125, "A"}}));
  EXPECT_EQ(cpu.stats().interrupts, 1u);
}

TEST_F(HrtimerTest, ExpiryInThePastFiresAtOnce) {
  q.run_until(1000);
  Hrtimer& a = timer("A");
  cpu.start(a, 10, 20);
  EXPECT_EQ(cpu.programmed(), 20u);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{1000, "A"}}));
}

TEST_F(HrtimerTest, CallbackRestartsAreWrittenOnceAtTheEndOfTheHandler) {
  Hrtimer* p = nullptr;
  Hrtimer& periodic = timer("P", [&] {
    EXPECT_TRUE(cpu.in_interrupt());
    cpu.start(*p, q.now() + 100, q.now() + 100);
  });
  p = &periodic;
  cpu.start(periodic, 100, 100);
  q.run_until(1000);
  EXPECT_EQ(runs.size(), 10u);
  EXPECT_EQ(runs.back(), (Firing{1000, "P"}));
  EXPECT_EQ(cpu.stats().interrupts, 10u);
  EXPECT_EQ(cpu.stats().reprograms, 11u);  // the first start + one per handler
  EXPECT_EQ(cpu.programmed(), 1100u);
}

TEST_F(HrtimerTest, TimerStartedDueByACallbackRunsInTheSameWalk) {
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  Hrtimer& j = timer("J");
  Hrtimer& a = timer("A", [&] {
    cpu.start(b, 50, 90);    // due, hard before the blocker J: runs now
    cpu.start(c, 90, 250);   // due, but queued behind the blocker J: waits
  });
  cpu.start(a, 100, 100);
  cpu.start(j, 150, 200);
  q.run_until(100);
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {100, "B"}}));
  EXPECT_TRUE(c.queued());
  EXPECT_EQ(cpu.programmed(), 200u);
  EXPECT_EQ(cpu.stats().reprograms, 2u);  // start of A, end of the handler
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {100, "B"}, {200, "J"}, {200, "C"}}));
}

TEST_F(HrtimerTest, EqualHardExpiriesRunInStartOrder) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  cpu.start(b, 100, 100);
  cpu.start(a, 90, 100);
  cpu.start(c, 100, 100);
  cpu.start(b, 100, 100);  // restarted: now last
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {100, "C"}, {100, "B"}}));
}

// A restart whose new (hard, seq) still lies between its neighbours' keeps
// the timer where it is (HrtimerModel::start_bound); these pin that it ends
// where an erase and insert would have put it.
TEST_F(HrtimerTest, RestartWithAnEqualHardExpiryGoesBehindTheOthers) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  cpu.start(a, 100, 100);
  cpu.start(b, 100, 100);
  cpu.start(c, 100, 100);
  cpu.start(c, 100, 100);  // last already: stays last
  cpu.start(a, 100, 100);  // first, but B's equal hard expiry has the older start: behind C
  cpu.start(b, 90, 100);   // now first: behind A
  EXPECT_EQ(cpu.programmed(), 100u);
  EXPECT_EQ(cpu.stats().reprograms, 1u);  // the earliest hard expiry stayed 100
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "C"}, {100, "A"}, {100, "B"}}));
}

TEST_F(HrtimerTest, RestartKeepsItsPlaceOnlyBetweenItsNeighbours) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  cpu.start(a, 100, 100);
  cpu.start(b, 200, 200);
  cpu.start(c, 300, 300);
  cpu.start(b, 250, 250);  // between A and C: stays
  cpu.start(b, 300, 300);  // C's hard expiry, C started first: behind C
  cpu.start(b, 100, 100);  // before C again, A's hard expiry: behind A
  cpu.start(b, 150, 150);  // between A and C: stays
  EXPECT_EQ(cpu.programmed(), 100u);
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  q.run_until(150);
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {150, "B"}}));
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {150, "B"}, {300, "C"}}));
}

TEST_F(HrtimerTest, InPlaceRestartOfTheProgrammedTimerWritesItsNewExpiry) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  cpu.start(a, 100, 100);
  cpu.start(b, 300, 300);
  cpu.start(a, 150, 200);  // still first: the device moves later, to A's 200
  EXPECT_EQ(cpu.programmed(), 200u);
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  cpu.start(a, 180, 200);  // the same hard expiry: no write
  EXPECT_EQ(cpu.programmed(), 200u);
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  cpu.start(a, 50, 50);  // earlier
  EXPECT_EQ(cpu.programmed(), 50u);
  EXPECT_EQ(cpu.stats().reprograms, 3u);
  cpu.start(a, 120, 120);
  EXPECT_EQ(cpu.programmed(), 120u);
  EXPECT_EQ(cpu.stats().reprograms, 4u);
  q.run_until(299);
  EXPECT_EQ(runs, (std::vector<Firing>{{120, "A"}}));
  EXPECT_EQ(cpu.stats().interrupts, 1u);  // the device fired once, at 120
  EXPECT_EQ(cpu.programmed(), 300u);
  cpu.start(a, 250, 250);  // B is programmed; A goes before it
  EXPECT_EQ(cpu.programmed(), 250u);
  cpu.start(a, 300, 300);  // B's hard expiry, B started first: moves behind B
  EXPECT_EQ(cpu.programmed(), 300u);
  EXPECT_EQ(cpu.stats().reprograms, 7u);  // the handler's end, 250, 300
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{120, "A"}, {300, "B"}, {300, "A"}}));
}

TEST_F(HrtimerTest, InPlaceRestartFromInsideTheHandler) {
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  Hrtimer& j = timer("J");
  Hrtimer& a = timer("A", [&] {
    cpu.start(b, 250, 250);  // first once A is out, before J: stays, no write
    cpu.start(c, 600, 600);  // last: stays
    EXPECT_EQ(cpu.stats().reprograms, 1u);
    EXPECT_EQ(cpu.programmed(), kNever);  // while the handler runs
  });
  cpu.start(a, 100, 100);
  cpu.start(b, 300, 300);
  cpu.start(j, 400, 400);
  cpu.start(c, 500, 500);
  q.run_until(100);
  EXPECT_EQ(cpu.programmed(), 250u);  // written once, at the handler's end
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  // A restart inside the handler that makes the front due runs it in the
  // same walk.
  Hrtimer& d = timer("D", [&] { cpu.start(b, 50, 200); });
  cpu.start(d, 200, 200);  // before B
  q.run_until(250);
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {200, "D"}, {200, "B"}}));
  EXPECT_EQ(cpu.programmed(), 400u);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}, {200, "D"}, {200, "B"}, {400, "J"}, {600, "C"}}));
}

TEST_F(HrtimerTest, SaturatedHardExpiryRunsOnlyWithAnotherInterrupt) {
  Hrtimer& lazy = timer("lazy");
  Hrtimer& other = timer("other");
  cpu.start_range(lazy, 1000, kNever);
  EXPECT_EQ(lazy.hard_expiry(), kNever);
  EXPECT_EQ(cpu.programmed(), kNever);
  cpu.start_range(other, 2000, 0);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{2000, "other"}, {2000, "lazy"}}));
}

TEST_F(HrtimerTest, DestroyingAQueuedTimerCancelsIt) {
  {
    Hrtimer gone(cpu, [this] { runs.push_back({q.now(), "gone"}); });
    cpu.start(gone, 100, 100);
    EXPECT_EQ(cpu.programmed(), 100u);
  }
  EXPECT_EQ(cpu.programmed(), kNever);
  EXPECT_EQ(cpu.queued_count(), 0u);
  q.run();
  EXPECT_TRUE(runs.empty());
}

TEST_F(HrtimerTest, RejectsSoftAfterHard) {
  Hrtimer& a = timer("A");
  EXPECT_THROW(cpu.start(a, 101, 100), std::logic_error);
  EXPECT_FALSE(a.queued());
}

TEST_F(HrtimerTest, SteadyStateDoesNotAllocate) {
  std::vector<Hrtimer*> all;
  for (int i = 0; i < 32; ++i) {
    Hrtimer& t = timer("t", [this, &all, i] {
      Hrtimer& me = *all[static_cast<std::size_t>(i)];
      cpu.start_range(me, q.now() + 37 + static_cast<Time>(i) * 13, static_cast<Time>(i) * 5);
    });
    all.push_back(&t);
    cpu.start_range(t, static_cast<Time>(i) * 11, 7);
  }
  Event churn(q, nullptr);
  std::size_t n = 0;
  churn.set_callback([&] {
    Hrtimer& t = *all[n++ % all.size()];
    if (n % 3 == 0) {
      cpu.cancel(t);
    } else {
      cpu.start_range(t, q.now() + 50, 20);
    }
    q.schedule(churn, q.now() + 9);
  });
  q.schedule(churn, 0);
  q.run_until(10'000);
  runs.clear();
  runs.shrink_to_fit();
  runs.reserve(1'000'000);
  const std::uint64_t before = test::allocation_count();
  q.run_until(1'000'000);
  EXPECT_EQ(test::allocation_count(), before);
  EXPECT_GT(cpu.stats().timers_run, 10'000u);
}

class HrtimerLatencyTest : public HrtimerTest {
 protected:
  HrtimerLatencyTest() : HrtimerTest(HrtimerConfig{.entry_latency = 5}) {}
};

TEST_F(HrtimerLatencyTest, HandlerReadsNowAfterTheEntryLatency) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  Hrtimer& c = timer("C");
  cpu.start(a, 100, 100);
  cpu.start(b, 103, 500);
  q.run_until(100);
  EXPECT_TRUE(cpu.interrupt_pending());
  EXPECT_EQ(cpu.stats().interrupts, 0u);
  EXPECT_TRUE(a.queued());
  EXPECT_EQ(cpu.programmed(), 100u);  // kept until the handler runs
  q.run_until(102);
  cpu.start(c, 101, 101);  // not earlier than 100: no write
  EXPECT_EQ(cpu.stats().reprograms, 1u);
  q.run();
  // now = 105: A, C and B (soft 103) are all due; walk in hard-expiry order.
  EXPECT_EQ(runs, (std::vector<Firing>{{105, "A"}, {105, "C"}, {105, "B"}}));
  EXPECT_EQ(cpu.stats().interrupts, 1u);
  EXPECT_FALSE(cpu.interrupt_pending());
}

TEST_F(HrtimerLatencyTest, WritesWhileAnInterruptIsPendingDoNotAddInterrupts) {
  Hrtimer& a = timer("A");
  Hrtimer& b = timer("B");
  cpu.start(a, 100, 100);
  q.run_until(101);
  ASSERT_TRUE(cpu.interrupt_pending());
  cpu.start(b, 90, 90);  // earlier than the programmed 100: a write, merged
  EXPECT_EQ(cpu.stats().reprograms, 2u);
  EXPECT_EQ(cpu.programmed(), 90u);
  q.run();
  EXPECT_EQ(runs, (std::vector<Firing>{{105, "B"}, {105, "A"}}));
  EXPECT_EQ(cpu.stats().interrupts, 1u);
}

class HrtimerCostTest : public HrtimerTest {
 protected:
  HrtimerCostTest()
      : HrtimerTest(HrtimerConfig{.entry_latency = 0, .interrupt_cost = 1000, .reprogram_cost = 300}) {}
};

TEST_F(HrtimerCostTest, OverheadCountsInterruptsAndDeviceWrites) {
  Hrtimer& a = timer("A");
  cpu.start(a, 100, 100);
  q.run();
  // One interrupt, one program, one stop; costs take no virtual time.
  EXPECT_EQ(cpu.overhead(), 1000u + 2 * 300u);
  EXPECT_EQ(runs, (std::vector<Firing>{{100, "A"}}));
}

}  // namespace
}  // namespace ufq::sim
