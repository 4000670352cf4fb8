// The qdisc watchdog: one timer request of the form "wake me in [t, t + slack]",
// with the kernel's rule that a request already armed inside the window is kept.
#pragma once

#include <cstdint>

#include "ufq/time.hpp"

namespace ufq {

// A model of qdisc_watchdog_schedule_range_ns() over one hrtimer. The scheduler
// calls schedule_range() when it has nothing to send but throttled flows; the
// caller's timer implementation reads soft_expiry()/hard_expiry() after each
// dequeue (arm_count() tells it whether anything changed) and calls expire()
// when its timer fires, before dequeuing again. The watchdog never reads a clock.
class Watchdog {
 public:
  // Arm for [expires, expires + delta] unless the queued timer's soft expiry
  // already lies in that window (then it is kept, so the effective slack can
  // reach 2 x delta). A kept timer may also be moved later by a later request
  // whose window does not contain it. Returns true when it (re)armed.
  bool schedule_range(Time expires, Time delta) {
    if (deactivated_) return false;
    ++requests_;
    // Unsigned on purpose: a queued soft expiry before `expires` wraps to a huge
    // distance and so counts as outside the window.
    if (queued_ && soft_ - expires <= delta) return false;
    soft_ = expires;
    hard_ = expires + delta < expires ? kNever : expires + delta;
    queued_ = true;
    ++arms_;
    return true;
  }

  // The request of the adaptive slack (a ufq extension,
  // docs/fq-rules.md#adaptive-slack): the same, except that a queued timer is
  // kept only when its whole window [soft, hard] lies inside
  // [expires, expires + delta], so a kept timer never fires later than this
  // request allows (the kernel's rule above may keep one up to another delta
  // late, which with allowances that differ by orders of magnitude would wake
  // a fast flow at a slow flow's slack). Returns true when it (re)armed.
  bool schedule_within(Time expires, Time delta) {
    if (deactivated_) return false;
    ++requests_;
    const Time end = expires + delta < expires ? kNever : expires + delta;
    if (queued_ && soft_ - expires <= delta && hard_ <= end) return false;
    soft_ = expires;
    hard_ = end;
    queued_ = true;
    ++arms_;
    return true;
  }

  // The timer fired: it is no longer queued. (The kernel's callback only
  // schedules the qdisc; the dequeue that follows is the caller's.)
  void expire() { queued_ = false; }

  // Cancel a queued timer (qdisc destroy).
  void cancel() { queued_ = false; }

  // While deactivated (device going down), schedule_range() does nothing.
  void set_deactivated(bool d) { deactivated_ = d; }

  bool queued() const { return queued_; }
  Time soft_expiry() const { return soft_; }  // valid while queued()
  Time hard_expiry() const { return hard_; }  // soft + delta, saturating
  std::uint64_t arm_count() const { return arms_; }      // times (re)armed
  std::uint64_t request_count() const { return requests_; }  // calls that asked, kept or armed

 private:
  Time soft_ = 0;
  Time hard_ = 0;
  std::uint64_t arms_ = 0;
  std::uint64_t requests_ = 0;
  bool queued_ = false;
  bool deactivated_ = false;
};

}  // namespace ufq
