// The guest model's parts on their own (ufq/sim/guest.hpp): the idle tick
// and the harness's sender, each against a stand-in for the rest.
#include <gtest/gtest.h>

#include <vector>

#include "guest_sender.hpp"
#include "nohz_tick.hpp"
#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hrtimer_model.hpp"

namespace ufq::sim::detail {
namespace {

constexpr Time ms = kNsecPerMsec;
constexpr Time us = kNsecPerUsec;

TEST(NohzTick, RunsWhileBusyAndStopsOnAnIdleCpu) {
  EventQueue q;
  HrtimerModel hr(q);
  Rng rng(1);
  bool idle = false;
  NohzTick tick(hr, 4 * ms, 2 * ms, 0, rng, [&] { return idle; });
  q.run_until(20 * ms);  // jiffies at 2, 6, 10, 14, 18 ms
  EXPECT_EQ(tick.expiries(), 5u);
  EXPECT_FALSE(tick.stopped());
  idle = true;
  q.run_until(40 * ms);  // the 22 ms tick finds the CPU idle: stopped, nothing more
  EXPECT_EQ(tick.expiries(), 6u);
  EXPECT_TRUE(tick.stopped());
  EXPECT_EQ(tick.stops(), 1u);
  EXPECT_EQ(hr.queued_count(), 0u);
  // A task runs at 41 ms: the tick restarts at the next jiffy, 42 ms.
  idle = false;
  Event task(q, [&] { tick.task_runs(); });
  q.schedule(task, 41 * ms);
  q.run_until(42 * ms + 1);
  EXPECT_EQ(tick.expiries(), 7u);
  EXPECT_FALSE(tick.stopped());
}

TEST(NohzTick, AStoppedTickRunsOnlyForTimerWheelTimers) {
  EventQueue q;
  HrtimerModel hr(q);
  Rng rng(7);
  NohzTick tick(hr, 4 * ms, 0, 25.0, rng, [] { return true; });
  q.run_until(100 * kNsecPerSec);
  // Stopped at its first expiry; then about 25 wheel timers a second, each on a
  // jiffy (a draw shorter than a jiffy still waits for the next one).
  EXPECT_TRUE(tick.stopped());
  EXPECT_GT(tick.expiries(), 1800u);
  EXPECT_LT(tick.expiries(), 2600u);
  EXPECT_EQ(hr.stats().interrupts, tick.expiries());
}

// A socket stand-in: `sndbuf` datagrams fit; the test frees them.
struct Sockets final : GuestSender::Host {
  explicit Sockets(EventQueue& queue, std::uint32_t flows, std::uint32_t sndbuf) : q(queue), inflight(flows, 0), limit(sndbuf) {}
  GuestSender::Send send(std::uint32_t slot) override {
    if (inflight[slot] >= limit) return GuestSender::Send::full;
    ++inflight[slot];
    sends.push_back({slot, q.now()});
    return GuestSender::Send::sent;
  }
  void woke() override { wakes.push_back(q.now()); }
  void stopped() override { stop_at = q.now(); }
  struct SendAt {
    std::uint32_t slot;
    Time at;
  };
  EventQueue& q;
  std::vector<std::uint32_t> inflight;
  std::uint32_t limit;
  std::vector<SendAt> sends;
  std::vector<Time> wakes;
  Time stop_at = kNever;
};

TEST(GuestSender, FillsEachSocketInTurnThenSleepsUntilOneIsWritable) {
  EventQueue q;
  Rng rng(3);
  GuestConfig cfg;
  cfg.send_cost = 10 * us;
  cfg.wake_latency_min = 5 * us;
  cfg.wake_latency_mean = 5 * us;  // no spread: exactly 5 us
  Sockets s(q, 3, 6);
  GuestSender sender(q, cfg, rng, s, 3);
  sender.start(0, kNever);
  q.run_until(10 * ms);
  // Each flow in slot order: 6 sends, the 7th refused (the socket is full).
  ASSERT_EQ(s.sends.size(), 18u);
  for (std::size_t i = 0; i < s.sends.size(); ++i) EXPECT_EQ(s.sends[i].slot, i / 6) << i;
  for (std::size_t i = 1; i < s.sends.size(); ++i) EXPECT_GT(s.sends[i].at, s.sends[i - 1].at);  // each takes CPU
  EXPECT_FALSE(sender.running());
  EXPECT_TRUE(s.wakes.empty());
  // Flow 1 drains to 2 in flight: writable; the sender runs 5 us later and refills it to 6.
  s.inflight[1] = 2;
  Event free(q, [&] { sender.writable(1); });
  q.schedule(free, 20 * ms);
  q.run_until(30 * ms);
  ASSERT_EQ(s.wakes.size(), 1u);
  EXPECT_EQ(s.wakes[0], 20 * ms + 5 * us);
  ASSERT_EQ(s.sends.size(), 22u);
  for (std::size_t i = 18; i < 22; ++i) EXPECT_EQ(s.sends[i].slot, 1u);
  EXPECT_EQ(s.inflight[1], 6u);
  EXPECT_EQ(sender.sends(), 22u);
}

TEST(GuestSender, StopsAtTheEndOfItsSendPeriod) {
  EventQueue q;
  Rng rng(3);
  GuestConfig cfg;
  Sockets s(q, 2, 1000);  // never full: the sender sends until told to stop
  GuestSender sender(q, cfg, rng, s, 2);
  sender.start(0, 5 * ms);
  q.run_until(10 * ms);
  EXPECT_EQ(s.stop_at, 5 * ms);
  EXPECT_TRUE(sender.finished());
  ASSERT_FALSE(s.sends.empty());
  EXPECT_LT(s.sends.back().at, 5 * ms);
  // Up to 8 sends per visit, then the next flow.
  EXPECT_EQ(s.sends[7].slot, 0u);
  EXPECT_EQ(s.sends[8].slot, 1u);
}

}  // namespace
}  // namespace ufq::sim::detail
