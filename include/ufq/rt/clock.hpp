// The pacer's clock and the per-thread knobs of the real-time runtime:
// CLOCK_MONOTONIC nanoseconds (the `now` every scheduler call takes), CPU
// time, the thread's timer slack (prctl) and CPU pinning.
#pragma once

#include <cstdint>
#include <ctime>

#include "ufq/time.hpp"

namespace ufq::rt {

// CLOCK_MONOTONIC in nanoseconds (vDSO, ~30 ns here).
inline Time mono_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Time>(ts.tv_sec) * kNsecPerSec + static_cast<Time>(ts.tv_nsec);
}

inline timespec to_timespec(Time ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / kNsecPerSec);
  ts.tv_nsec = static_cast<long>(ns % kNsecPerSec);
  return ts;
}

// CPU time (user + system) of the calling thread / of the whole process, ns.
std::uint64_t thread_cpu_ns();
std::uint64_t process_cpu_ns();

// The calling thread's timer slack (PR_SET_TIMERSLACK). 0 is taken as 1 ns:
// prctl(0) would reset to the thread's default (50 us), not disable slack.
// Returns false if the kernel refused (or ignores it: RT threads).
bool set_timer_slack_ns(std::uint64_t ns);
std::uint64_t timer_slack_ns();

// Pin the calling thread to one CPU; false if that fails (e.g. cpu offline).
bool pin_current_thread(int cpu);

// Online CPUs.
int cpu_count();

}  // namespace ufq::rt
