#include "ufq/sim/watchdog_hrtimer.hpp"

#include <utility>

namespace ufq::sim {

WatchdogHrtimer::WatchdogHrtimer(Watchdog& watchdog, HrtimerModel& cpu, FireCallback on_fire)
    : watchdog_(&watchdog),
      on_fire_(std::move(on_fire)),
      timer_(cpu, Hrtimer::Callback([](void* self) { static_cast<WatchdogHrtimer*>(self)->fired(); }, this)),
      seen_arms_(watchdog.arm_count()) {}

void WatchdogHrtimer::fired() {
  ++fires_;
  watchdog_->expire();
  on_fire_();
}

}  // namespace ufq::sim
