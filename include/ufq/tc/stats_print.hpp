// The statistics `tc -s qdisc show` prints under an fq qdisc, from ufq::FqStats
// (iproute2 >= 6.8 layout, docs/fq-rules.md#tc-output).
#pragma once

#include <string>

#include "ufq/stats.hpp"

namespace ufq::tc {

// The lines after the options line, each ending in '\n':
//    Sent B bytes P pkt (dropped D, overlimits O requeues R)␠
//    backlog <size> <n>p requeues R
//     flows F (inactive I throttled T) band0_pkts a band1_pkts b band2_pkts c[ next_packet_delay <t>]
//     gc G highprio H[ fastpath X][ retrans R] throttled N[ latency <t>][ ce_mark C][ flows_plimit P]
//   [ pkts_too_long A][ alloc_errors E][ horizon_drops HD][  horizon_caps HC][ bandN_drops D]...
// Bracketed items appear only when non-zero (next_packet_delay only when
// time_next_delayed_flow > 0); the last line only when one of its items does.
std::string format_fq_stats(const FqStats& stats);

// The `tc -j -s` members for the same counters, in the same order and under
// the same conditions, without the enclosing braces:
//   "bytes":B,"packets":P,"drops":D,"overlimits":O,"requeues":R,"backlog":B,"qlen":N,
//   "flows":F,"inactive":I,"throttled":T,"band0_pkts":a,...,"gc":G,"highprio":H,
//   "throttled":N,...
// Note that tc emits the key "throttled" twice (throttled flows, then the
// throttle event counter); this text keeps both, as tc does.
std::string fq_stats_json_members(const FqStats& stats);

// fq_stats_json_members() wrapped in braces: one JSON object.
std::string format_fq_stats_json(const FqStats& stats);

}  // namespace ufq::tc
