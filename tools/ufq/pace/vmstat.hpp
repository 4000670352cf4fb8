// vmstat-style system counters read from /proc/stat: interrupts (the `in`
// column: the first field of the `intr` line, every interrupt of every CPU,
// timer and IPIs included), context switches (`cs`, the `ctxt` line) and
// the CPU time split (us / sy / id, tick-sampled by the kernel, as vmstat
// shows it), plus this process's exact CPU time, and where the receive side
// of loopback traffic ran: softirq time (/proc/stat), NET_RX/NET_TX softirqs
// (/proc/softirqs) and the ksoftirqd threads' CPU (/proc/<pid>/stat). On
// loopback and veth a datagram's receive processing runs either inside the
// sender's system call (charged to the sender's thread) or in ksoftirqd,
// depending on load: a CPU-per-packet figure compares runs only when it adds
// ksoftirqd's share (docs/results.md, the price of precision).
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
  std::uint64_t net_rx = 0, net_tx = 0;  // /proc/softirqs, all CPUs
  std::uint64_t ksoftirqd_ns = 0;        // CPU time of every ksoftirqd/N thread
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
  double softirq_pct = 0;          // of all CPUs (tick-sampled; 0 without irq time accounting)
  double net_rx_per_s = 0, net_tx_per_s = 0;  // softirqs raised
  double ksoftirqd_cpu_pct = 0;    // of one CPU, every ksoftirqd thread together
};

ProcRates rates_between(const ProcSample& a, const ProcSample& b);

}  // namespace ufq::rt
