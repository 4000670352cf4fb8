// `ufq gaps` output: a text block and the same figures as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gaps/capture.hpp"
#include "gaps/gap_stats.hpp"

namespace ufq::gaps {

// The quantiles every gap report gives (nearest rank, include/ufq/histogram.hpp).
inline constexpr double kReportQuantiles[] = {0.01, 0.10, 0.50, 0.90, 0.99};

// {"datagrams", "payload_bytes", "ip_bytes", "span_ns", "payload_rate_bps",
//  "ip_rate_bps", "gap_ns": {"count","min","p1",...,"p99","max","mean"},
//  "burst_gap_ns", "burst_gaps", "burst_fraction", "runs", "longest_run",
//  "reordered", "capture": {...}}
nlohmann::ordered_json to_json(const GapStats& s, const CaptureCounts& c, const CaptureOptions& o);

// Three or four lines: what was captured, the rate, the gap quantiles, the bursts.
std::string to_text(const GapStats& s, const CaptureCounts& c, const CaptureOptions& o);

}  // namespace ufq::gaps
