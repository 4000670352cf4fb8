// The qdisc watchdog driven through the hrtimer model: docs/fq-rules.md#watchdog-range-rule and edge
// cases 20 and 21, with a stand-in for fq's throttled set.
#include "ufq/sim/watchdog_hrtimer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hrtimer_model.hpp"
#include "ufq/watchdog.hpp"

namespace ufq::sim {
namespace {

constexpr Time us = kNsecPerUsec;

struct Release {
  Time due;
  Time at;
  bool operator==(const Release&) const = default;
};

// A qdisc reduced to its throttled flows: each dequeue releases every flow
// due by `now` and, if some remain, asks the watchdog for
// [earliest due, + slack], as fq's dequeue does when nothing may be sent.
class Harness {
 public:
  explicit Harness(Time slack, std::vector<Time> due)
      : slack_(slack),
        due_(std::move(due)),
        cpu(q),
        qdisc_run(q, [this] { run_qdisc(); }),
        adapter(watchdog, cpu, [this] { q.schedule(qdisc_run, q.now()); }) {
    std::sort(due_.begin(), due_.end());
  }

  void run_qdisc() {
    ++qdisc_runs;
    const Time now = q.now();
    while (!due_.empty() && due_.front() <= now) {
      released.push_back({due_.front(), now});
      due_.erase(due_.begin());
    }
    if (!due_.empty()) watchdog.schedule_range(due_.front(), slack_);
    adapter.sync();
  }

  Time slack_;
  std::vector<Time> due_;
  EventQueue q;
  Watchdog watchdog;
  HrtimerModel cpu;
  Event qdisc_run;
  WatchdogHrtimer adapter;
  std::vector<Release> released;
  int qdisc_runs = 0;
};

// Edge case 20, slack 10 us: one request [100, 110], one interrupt at 110 us
// releases both flows.
TEST(WatchdogHrtimer, SlackBatchesTwoFlowsIntoOneWakeup) {
  Harness h(10 * us, {100 * us, 105 * us});
  h.run_qdisc();
  EXPECT_EQ(h.watchdog.request_count(), 1u);
  EXPECT_EQ(h.adapter.timer().soft_expiry(), 100 * us);
  EXPECT_EQ(h.adapter.timer().hard_expiry(), 110 * us);
  EXPECT_EQ(h.cpu.programmed(), 110 * us);
  h.q.run();
  EXPECT_EQ(h.released, (std::vector<Release>{{100 * us, 110 * us}, {105 * us, 110 * us}}));
  EXPECT_EQ(h.cpu.stats().interrupts, 1u);
  EXPECT_EQ(h.adapter.fires(), 1u);
  EXPECT_EQ(h.watchdog.request_count(), 1u);
  EXPECT_EQ(h.watchdog.arm_count(), 1u);
  EXPECT_FALSE(h.watchdog.queued());
}

// Edge case 20, slack 0: two wake-ups, each flow on time.
TEST(WatchdogHrtimer, NoSlackMeansOneWakeupPerFlow) {
  Harness h(0, {100 * us, 105 * us});
  h.run_qdisc();
  h.q.run();
  EXPECT_EQ(h.released, (std::vector<Release>{{100 * us, 100 * us}, {105 * us, 105 * us}}));
  EXPECT_EQ(h.cpu.stats().interrupts, 2u);
  EXPECT_EQ(h.adapter.fires(), 2u);
  EXPECT_EQ(h.watchdog.request_count(), 2u);
  EXPECT_EQ(h.watchdog.arm_count(), 2u);
}

// Only the clock-event interrupt runs timers: a TX completion inside the slack
// window runs the qdisc, which releases both flows itself; the watchdog timer
// stays queued (fq never cancels it) and later fires into an empty dequeue.
TEST(WatchdogHrtimer, QdiscRunInsideTheSlackWindowDoesNotFireTheTimer) {
  Harness h(10 * us, {100 * us, 105 * us});
  h.run_qdisc();
  Event tx_completion(h.q, [&h] { h.run_qdisc(); });
  h.q.schedule(tx_completion, 107 * us);
  h.q.run_until(107 * us);
  EXPECT_EQ(h.released, (std::vector<Release>{{100 * us, 107 * us}, {105 * us, 107 * us}}));
  EXPECT_TRUE(h.adapter.timer().queued());
  EXPECT_EQ(h.cpu.stats().interrupts, 0u);
  h.q.run();
  EXPECT_EQ(h.cpu.stats().interrupts, 1u);
  EXPECT_EQ(h.adapter.fires(), 1u);
  EXPECT_EQ(h.qdisc_runs, 3);
  EXPECT_EQ(h.released.size(), 2u);
}

// Edge case 21: a timer queued with soft expiry 105 (window [105, 115]).
class KeepOrRearm : public ::testing::Test {
 protected:
  KeepOrRearm() : cpu(q), adapter(watchdog, cpu, [this] { fired_at.push_back(q.now()); }) {}

  void arm_initial(Time slack) {
    ASSERT_TRUE(watchdog.schedule_range(105, slack));
    adapter.sync();
    ASSERT_EQ(adapter.starts(), 1u);
  }
  // Ask like fq would, sync like the driver would; report whether it re-armed.
  bool request(Time expires, Time slack) {
    const bool armed = watchdog.schedule_range(expires, slack);
    EXPECT_EQ(adapter.sync(), armed);
    return armed;
  }

  EventQueue q;
  Watchdog watchdog;
  HrtimerModel cpu;
  WatchdogHrtimer adapter;
  std::vector<Time> fired_at;
};

TEST_F(KeepOrRearm, RequestWhoseWindowHoldsTheQueuedTimerKeepsIt) {
  arm_initial(10);
  EXPECT_FALSE(request(100, 10));  // 105 lies in [100, 110]
  EXPECT_EQ(adapter.timer().soft_expiry(), 105u);
  EXPECT_EQ(adapter.timer().hard_expiry(), 115u);
  EXPECT_EQ(adapter.starts(), 1u);
  q.run();
  // Asked for 100 with slack 10, served at 115: up to 2 x slack late.
  EXPECT_EQ(fired_at, (std::vector<Time>{115}));
}

TEST_F(KeepOrRearm, LaterRequestMovesTheTimerLater) {
  arm_initial(10);
  EXPECT_TRUE(request(110, 10));  // 105 - 110 wraps: outside, re-armed
  EXPECT_EQ(adapter.timer().soft_expiry(), 110u);
  EXPECT_EQ(adapter.timer().hard_expiry(), 120u);
  EXPECT_EQ(cpu.programmed(), 120u);  // the device event moved later
  q.run();
  EXPECT_EQ(fired_at, (std::vector<Time>{120}));
}

TEST_F(KeepOrRearm, EarlierRequestOutsideTheWindowRearmsEarlier) {
  arm_initial(10);
  EXPECT_TRUE(request(90, 10));  // 105 - 90 = 15 > 10
  EXPECT_EQ(adapter.timer().soft_expiry(), 90u);
  EXPECT_EQ(adapter.timer().hard_expiry(), 100u);
  q.run();
  EXPECT_EQ(fired_at, (std::vector<Time>{100}));
}

TEST_F(KeepOrRearm, NoSlackKeepsOnlyTheSameExpiry) {
  arm_initial(0);
  EXPECT_FALSE(request(105, 0));
  EXPECT_EQ(watchdog.arm_count(), 1u);
  EXPECT_EQ(watchdog.request_count(), 2u);
  EXPECT_TRUE(request(104, 0));
  EXPECT_TRUE(request(105, 0));
  q.run();
  EXPECT_EQ(fired_at, (std::vector<Time>{105}));
}

TEST_F(KeepOrRearm, RequestAfterFiringArmsAgain) {
  arm_initial(10);
  q.run();
  EXPECT_FALSE(watchdog.queued());
  EXPECT_TRUE(request(100, 10));  // not queued any more: armed even in window
  q.run();
  EXPECT_EQ(fired_at, (std::vector<Time>{115, 115}));
}

TEST_F(KeepOrRearm, CancelledWatchdogCancelsTheHrtimer) {
  arm_initial(10);
  watchdog.cancel();
  EXPECT_TRUE(adapter.sync());
  EXPECT_FALSE(adapter.timer().queued());
  EXPECT_EQ(cpu.programmed(), kNever);
  EXPECT_FALSE(adapter.sync());
  q.run();
  EXPECT_TRUE(fired_at.empty());
}

TEST_F(KeepOrRearm, DeactivatedWatchdogRequestsNothing) {
  watchdog.set_deactivated(true);
  EXPECT_FALSE(request(100, 10));
  EXPECT_FALSE(adapter.timer().queued());
  q.run();
  EXPECT_TRUE(fired_at.empty());
}

}  // namespace
}  // namespace ufq::sim
