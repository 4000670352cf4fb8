// How late this machine's timers wake a sleeping thread: what bounds any
// user-space pacer (on this PVM guest, tens of microseconds).
#pragma once

#include <cstdint>

#include "ufq/histogram.hpp"
#include "ufq/rt/sleeper.hpp"

namespace ufq::rt {

struct TimerLatency {
  TimerKind kind = TimerKind::nanosleep;
  Time slack_ns = 0;    // the window's width (timer slack) used
  Time period_ns = 0;   // each sleep's length
  Histogram lateness;   // wake-up time - requested (soft) time
};

// Sleeps `samples` times for `period_ns` each with the given strategy and a
// window of `slack_ns`, on the calling thread (whose timer slack it
// restores), and records how late each wake-up was.
TimerLatency measure_timer_latency(TimerKind kind, Time slack_ns, std::uint32_t samples = 200,
                                   Time period_ns = 200 * kNsecPerUsec);

}  // namespace ufq::rt
