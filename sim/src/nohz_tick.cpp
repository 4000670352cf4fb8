#include "nohz_tick.hpp"

#include <utility>

namespace ufq::sim::detail {

NohzTick::NohzTick(HrtimerModel& hr, Time period, Time offset, double wheel_timers_per_s, Rng& rng,
                   std::function<bool()> idle)
    : hr_(hr),
      period_(period),
      offset_(offset % period),
      wheel_per_s_(wheel_timers_per_s),
      rng_(rng),
      idle_(std::move(idle)),
      timer_(hr, [this] { expired(); }) {
  const Time first = next_jiffy_after(0);
  hr_.start(timer_, first, first);
}

Time NohzTick::next_jiffy_after(Time t) const {
  if (t < offset_) return offset_;
  return offset_ + ((t - offset_) / period_ + 1) * period_;
}

void NohzTick::expired() {
  ++expiries_;
  if (on_expiry_) on_expiry_();
  const Time at = timer_.soft_expiry();
  if (!idle_()) {
    stopped_ = false;
    hr_.start(timer_, at + period_, at + period_);
    return;
  }
  if (!stopped_) ++stops_;
  stopped_ = true;
  if (wheel_per_s_ > 0) {
    // The next timer-wheel timer, on the jiffy it falls in.
    const Time wheel = next_jiffy_after(at + rng_.exponential(1e9 / wheel_per_s_));
    hr_.start(timer_, wheel, wheel);
  }
}

void NohzTick::task_runs() {
  if (!stopped_) return;
  stopped_ = false;
  const Time next = next_jiffy_after(hr_.queue().now());
  if (timer_.queued() && timer_.soft_expiry() <= next) return;
  hr_.start(timer_, next, next);
}

}  // namespace ufq::sim::detail
