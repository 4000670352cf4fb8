// The scheduler tick of a CPU whose tick stops when it is idle (Linux's NOHZ
// idle with high-resolution timers; ufq/sim/guest.hpp, docs/simulator.md
// "The guest model"). The tick runs while the CPU is busy. When it expires on
// an idle CPU it is stopped: the idle governor, woken by a tick, expects a
// long idle, and the CPU then wakes only for its timers; the stopped tick
// stays programmed for the next timer-wheel timer (drawn, Poisson, rounded up
// to a jiffy), which only the tick runs. When a task runs again the tick
// restarts at the next jiffy. Interrupts on an idle CPU do not restart it.
// Private to sim/src.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "ufq/sim/hrtimer_model.hpp"
#include "ufq/sim/traffic.hpp"

namespace ufq::sim::detail {

class NohzTick {
 public:
  // Jiffies lie at `offset` + k x `period`. `idle` says whether the CPU is
  // idle now. `hr` and `rng` must outlive the tick. The tick starts running
  // at the first jiffy after 0.
  NohzTick(HrtimerModel& hr, Time period, Time offset, double wheel_timers_per_s, Rng& rng,
           std::function<bool()> idle);

  // A task starts running on the CPU (idle exit): restart a stopped tick.
  void task_runs();

  // Called at every expiry (an event trace); may be empty.
  void set_on_expiry(std::function<void()> fn) { on_expiry_ = std::move(fn); }

  bool stopped() const { return stopped_; }
  std::uint64_t expiries() const { return expiries_; }
  std::uint64_t stops() const { return stops_; }

 private:
  void expired();
  Time next_jiffy_after(Time t) const;

  HrtimerModel& hr_;
  Time period_, offset_;
  double wheel_per_s_;
  Rng& rng_;
  std::function<bool()> idle_;
  std::function<void()> on_expiry_;
  Hrtimer timer_;
  bool stopped_ = false;
  std::uint64_t expiries_ = 0, stops_ = 0;
};

}  // namespace ufq::sim::detail
