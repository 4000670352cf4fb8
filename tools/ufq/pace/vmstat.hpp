// vmstat-style system counters read from /proc/stat: interrupts (the `in`
// column: the first field of the `intr` line, every interrupt of every CPU,
// timer and IPIs included), context switches (`cs`, the `ctxt` line) and
// the CPU time split (us / sy / id, tick-sampled by the kernel, as vmstat
// shows it), plus this process's exact CPU time.
#pragma once

#include <cstdint>
#include <optional>

#include "ufq/time.hpp"

namespace ufq::rt {

struct ProcSample {
  Time at = 0;                    // CLOCK_MONOTONIC
  std::uint64_t interrupts = 0;   // /proc/stat intr (total)
  std::uint64_t ctxt = 0;         // /proc/stat ctxt
  // /proc/stat cpu line, in USER_HZ ticks.
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  std::uint64_t process_cpu_ns = 0;  // CLOCK_PROCESS_CPUTIME_ID
};

// Reads /proc/stat now; nullopt if it cannot be read.
std::optional<ProcSample> read_proc_sample();

// Rates between two samples.
struct ProcRates {
  double seconds = 0;
  double interrupts_per_s = 0;
  double context_switches_per_s = 0;
  double user_pct = 0, system_pct = 0, idle_pct = 0;  // of all CPUs, as vmstat
  double process_cpu_pct = 0;                          // of one CPU
};

ProcRates rates_between(const ProcSample& a, const ProcSample& b);

}  // namespace ufq::rt
