#include "ufq/watchdog.hpp"

namespace ufq {

bool Watchdog::schedule_range(Time expires, Time delta) {
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

}  // namespace ufq
