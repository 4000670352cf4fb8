// How `ufq pace` prints: the vmstat-style interval lines, the end-of-run
// summary, the timer-latency line, and the JSON object per run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pace/pace_run.hpp"

namespace ufq::rt {

std::string format_interval_header();
std::string format_interval(const IntervalReport& r);
std::string format_timer_latency(const TimerLatency& t);
// With several queues: also a line per queue and the qdisc as mq with fq
// children (format_mq_qdisc).
std::string format_summary(const PaceReport& r);
// `tc -s qdisc show` of the run's queues: mq with one fq child per queue.
std::string format_mq_qdisc(const PaceReport& r);
// A table of several runs side by side (--compare).
std::string format_comparison(const std::vector<PaceReport>& runs);

// The run as one JSON object: pps, wakeups_per_s, interrupts_per_s,
// context_switches_per_s, cpu_pct, packets_sent, packets_received,
// packets_lost, flow_rate_error_max, lateness_ns {p50, p99, max}, timer,
// qdisc (the `tc -j -s qdisc show` object, tc's names; with several queues
// its array: the mq root, then one fq child per queue), queues and
// per_queue (pps, CPU, rate error, accounting, fq counters per queue), and
// more.
std::string format_json(const PaceReport& r);

}  // namespace ufq::rt
