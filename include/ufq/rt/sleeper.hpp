// How the pacer thread waits for the scheduler's wake-up window
// [soft, hard] (fq's watchdog: soft = earliest due flow, hard = soft +
// timer_slack). The strategies, chosen by option and reported:
//
//   nanosleep  an absolute sleep until soft with the thread's timer slack set
//              to hard - soft (prctl PR_SET_TIMERSLACK): the kernel may fire
//              anywhere in the window, coalescing with other timers. It is a
//              FUTEX_WAIT_BITSET on the doorbell word rather than
//              clock_nanosleep(TIMER_ABSTIME): the same absolute hrtimer with
//              the same slack range, but FUTEX_WAKE from a producer ends it
//              (docs/pacer.md: why not a signal).
//   epoll      epoll_pwait2 until soft on an eventfd doorbell, same slack
//              (the kernel uses max(slack, 0.1 % of the timeout)); producers
//              can wake it early.
//   timerfd    an absolute timerfd at soft, waited on with epoll together with
//              the doorbell. timerfd arms its hrtimer without slack: the
//              window's slack is ignored (the precise baseline).
//   busy       spin on the clock until soft (or the doorbell): no sleep.
//   hybrid     sleep (as nanosleep, with the slack) until soft - spin, then
//              spin the last microseconds until soft.
//   tick       the common QUIC-stack pacer: timers only on a fixed grid
//              (default 1 ms), the first tick at or after soft.
//
// Every strategy returns early on ring() (the doorbell: an eventfd for epoll
// and timerfd, a futex word for nanosleep, hybrid and tick, a flag for busy).
// With nothing throttled (no window) every strategy waits for the doorbell
// (bounded by an idle limit). wait() is for the pacer thread only; ring() may
// be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ufq/time.hpp"

namespace ufq::rt {

enum class TimerKind : std::uint8_t { nanosleep, epoll, timerfd, busy, hybrid, tick };

const char* to_string(TimerKind k);
std::optional<TimerKind> parse_timer_kind(std::string_view name);
// "nanosleep|epoll|timerfd|busy|hybrid|tick".
const char* timer_kind_names();

struct SleeperOptions {
  TimerKind kind = TimerKind::nanosleep;
  Time spin_ns = 50'000;     // hybrid: spin this long before soft
  Time tick_ns = 1'000'000;  // tick: grid period
};

enum class WakeReason : std::uint8_t {
  timer,     // the window was reached
  doorbell,  // ring() (a producer or stop())
  idle,      // no window: the idle limit passed
};

class Sleeper {
 public:
  explicit Sleeper(SleeperOptions options = {});
  ~Sleeper();
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;

  TimerKind kind() const { return opt_.kind; }
  const SleeperOptions& options() const { return opt_; }
  // Whether ring() can end a timed wait early: true for every strategy.
  bool interruptible() const;

  // Wait for the window [soft, hard] (absolute CLOCK_MONOTONIC ns, soft <=
  // hard). soft == kNever: no window, wait for ring() at most idle_ns.
  // Returns after soft (timer), or earlier only because of ring().
  WakeReason wait(Time soft, Time hard, Time idle_ns = 10 * kNsecPerMsec);

  // Wake the waiting thread (or make its next wait return at once).
  void ring();

  // Timer-slack changes made (prctl calls); the slack is cached per thread.
  std::uint64_t slack_changes() const { return slack_changes_; }

 private:
  void apply_slack(Time slack);
  WakeReason wait_doorbell(Time timeout_ns);
  WakeReason spin_until(Time t);
  bool consume_doorbell();
  bool uses_eventfd() const;
  bool uses_futex() const;
  WakeReason sleep_abs(Time t);

  SleeperOptions opt_;
  int efd_ = -1;    // doorbell eventfd
  int epfd_ = -1;   // epoll set: doorbell (+ timerfd)
  int tfd_ = -1;    // timerfd
  // The doorbell: 1 once rung until the waiter consumes it; also the futex
  // word the futex-based strategies sleep on.
  std::atomic<std::uint32_t> rung_{0};
  Time slack_ = 0;  // last slack set on the waiting thread (0 = unknown)
  std::uint64_t slack_changes_ = 0;
};

}  // namespace ufq::rt
