// The wake-up strategies: each returns at or after the window's start (the
// kernel never wakes an absolute sleep early), and the interruptible ones
// return early on ring(). No assertion on how late: the machine may be busy.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/sleeper.hpp"
#include "pace/timer_probe.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {
const TimerKind kAll[] = {TimerKind::nanosleep, TimerKind::epoll, TimerKind::timerfd,
                          TimerKind::busy, TimerKind::hybrid, TimerKind::tick};
}

TEST(Sleeper, NamesRoundTrip) {
  for (TimerKind k : kAll) {
    auto p = parse_timer_kind(to_string(k));
    ASSERT_TRUE(p);
    EXPECT_EQ(*p, k);
  }
  EXPECT_FALSE(parse_timer_kind("hrtimer"));
}

TEST(Sleeper, EveryStrategyWakesAtOrAfterTheWindow) {
  for (TimerKind k : kAll) {
    SleeperOptions o;
    o.kind = k;
    o.tick_ns = 100 * kNsecPerUsec;
    o.spin_ns = 20 * kNsecPerUsec;
    Sleeper s(o);
    for (int i = 0; i < 20; ++i) {
      const Time soft = mono_now() + 150 * kNsecPerUsec;
      const WakeReason r = s.wait(soft, soft + 10 * kNsecPerUsec);
      const Time woke = mono_now();
      EXPECT_EQ(r, WakeReason::timer) << to_string(k);
      EXPECT_GE(woke, soft) << to_string(k);
      if (k == TimerKind::tick) {
        EXPECT_GE(woke, (soft + o.tick_ns - 1) / o.tick_ns * o.tick_ns);
      }
    }
  }
}

TEST(Sleeper, WindowSlackBecomesTheThreadsTimerSlack) {
  std::thread t([] {
    Sleeper s({TimerKind::nanosleep});
    const Time soft = mono_now() + 50 * kNsecPerUsec;
    s.wait(soft, soft + 30'000);
    EXPECT_EQ(timer_slack_ns(), 30'000U);
    const Time soft2 = mono_now() + 50 * kNsecPerUsec;
    s.wait(soft2, soft2);  // no slack: 1 ns, since prctl(0) would mean "default"
    EXPECT_EQ(timer_slack_ns(), 1U);
  });
  t.join();
}

// Every strategy, the default included: nanosleep, hybrid and tick sleep on
// the doorbell's futex word, epoll and timerfd on its eventfd.
TEST(Sleeper, RingWakesEveryStrategyEarly) {
  for (TimerKind k : kAll) {
    SleeperOptions o;
    o.kind = k;
    Sleeper s(o);
    EXPECT_TRUE(s.interruptible());
    std::thread ringer([&s] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      s.ring();
    });
    const Time soft = mono_now() + 30 * kNsecPerSec;  // would hang the test if ring failed
    EXPECT_EQ(s.wait(soft, soft), WakeReason::doorbell) << to_string(k);
    EXPECT_LT(mono_now(), soft);
    ringer.join();
  }
}

TEST(Sleeper, RingBeforeWaitIsNotLost) {
  for (TimerKind k : kAll) {
    Sleeper s({k});
    s.ring();
    // With no window every strategy waits for the doorbell, which already rang.
    EXPECT_EQ(s.wait(kNever, kNever, 30 * kNsecPerSec), WakeReason::doorbell) << to_string(k);
    // Consumed: the next idle wait times out.
    EXPECT_EQ(s.wait(kNever, kNever, 1 * kNsecPerMsec), WakeReason::idle) << to_string(k);
  }
}

TEST(Sleeper, IdleWaitWakesOnRingFromAnotherThread) {
  for (TimerKind k : kAll) {
    Sleeper s({k});
    std::thread ringer([&s] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      s.ring();
    });
    EXPECT_EQ(s.wait(kNever, kNever, 30 * kNsecPerSec), WakeReason::doorbell) << to_string(k);
    ringer.join();
  }
}

TEST(TimerProbe, MeasuresAndRestoresSlack) {
  std::thread t([] {
    set_timer_slack_ns(12'345);
    const TimerLatency l = measure_timer_latency(TimerKind::nanosleep, 10'000, 20, 100'000);
    EXPECT_EQ(l.lateness.count(), 20U);
    EXPECT_EQ(l.lateness.early(), 0U);  // never before the requested time
    EXPECT_EQ(timer_slack_ns(), 12'345U);
  });
  t.join();
}
