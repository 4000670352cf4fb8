// Drives a ufq::Watchdog (the scheduler's wake-up request) through a simulated
// hrtimer, as the kernel's qdisc watchdog drives its hrtimer.
//
// The scheduler only records requests in its Watchdog. After each dequeue the
// driver calls sync(): if the watchdog (re)armed since the last sync, the
// hrtimer is (re)started for [soft_expiry, hard_expiry]; a request the
// watchdog kept changes nothing. When the hrtimer runs (inside the simulated
// timer interrupt) the adapter marks the watchdog expired and calls `on_fire`,
// which should schedule the qdisc run (the kernel's callback only raises the
// NET_TX softirq; it never dequeues itself).
#pragma once

#include <cstdint>
#include <functional>

#include "ufq/sim/hrtimer_model.hpp"
#include "ufq/watchdog.hpp"

namespace ufq::sim {

class WatchdogHrtimer {
 public:
  // A lambda, or (function, context) for the cheaper direct call.
  using FireCallback = Hook<>;

  // `watchdog` and `cpu` must outlive the adapter. The adapter treats every
  // arm the watchdog already counts as seen, so a watchdog armed before it
  // was constructed is not started until it arms again.
  WatchdogHrtimer(Watchdog& watchdog, HrtimerModel& cpu, FireCallback on_fire);
  WatchdogHrtimer(const WatchdogHrtimer&) = delete;
  WatchdogHrtimer& operator=(const WatchdogHrtimer&) = delete;

  // Bring the hrtimer in line with the watchdog. Call after every scheduler
  // operation that may request a wake-up (dequeue) or cancel one (reset,
  // destroy). If arm_count() changed and the watchdog is queued: (re)start the
  // hrtimer for [soft_expiry(), hard_expiry()]. If the watchdog is no longer
  // queued but the hrtimer is (Watchdog::cancel()): cancel the hrtimer.
  // Returns whether the hrtimer was started or cancelled.
  bool sync();

  const Hrtimer& timer() const { return timer_; }
  // Hrtimer (re)starts made by sync().
  std::uint64_t starts() const { return starts_; }
  // Times the hrtimer ran (and called on_fire).
  std::uint64_t fires() const { return fires_; }

 private:
  void fired();

  Watchdog* watchdog_;
  FireCallback on_fire_;
  Hrtimer timer_;
  std::uint64_t seen_arms_;
  std::uint64_t starts_ = 0;
  std::uint64_t fires_ = 0;
};

// Inline: the driver calls it after every qdisc run.
inline bool WatchdogHrtimer::sync() {
  if (watchdog_->arm_count() != seen_arms_) {
    seen_arms_ = watchdog_->arm_count();
    if (watchdog_->queued()) {
      // Bound by construction, and soft <= hard (Watchdog: hard is soft +
      // delta, saturating): no checks.
      timer_.cpu().start_bound(timer_, watchdog_->soft_expiry(), watchdog_->hard_expiry());
      ++starts_;
      return true;
    }
  }
  if (!watchdog_->queued() && timer_.queued()) {
    timer_.cpu().cancel(timer_);
    return true;
  }
  return false;
}

}  // namespace ufq::sim
