#include "ufq/sim/watchdog_hrtimer.hpp"

#include <utility>

namespace ufq::sim {

WatchdogHrtimer::WatchdogHrtimer(Watchdog& watchdog, HrtimerModel& cpu, FireCallback on_fire)
    : watchdog_(&watchdog),
      on_fire_(std::move(on_fire)),
      timer_(cpu, Hrtimer::Callback([](void* self) { static_cast<WatchdogHrtimer*>(self)->fired(); }, this)),
      seen_arms_(watchdog.arm_count()) {}

bool WatchdogHrtimer::sync() {
  if (watchdog_->arm_count() != seen_arms_) {
    seen_arms_ = watchdog_->arm_count();
    if (watchdog_->queued()) {
      timer_.cpu().start(timer_, watchdog_->soft_expiry(), watchdog_->hard_expiry());
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

void WatchdogHrtimer::fired() {
  ++fires_;
  watchdog_->expire();
  on_fire_();
}

}  // namespace ufq::sim
