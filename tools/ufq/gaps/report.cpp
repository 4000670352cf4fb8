#include "gaps/report.hpp"

#include <cmath>
#include <cstdio>

#include "ufq/tc/units.hpp"

namespace ufq::gaps {
namespace {

std::string pname(double q) {
  char b[16];
  std::snprintf(b, sizeof b, "p%.0f", q * 100);
  return b;
}

std::string ns(std::uint64_t v) { return tc::format_time64_ns(static_cast<std::int64_t>(v)); }

std::string mbit(double bps) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f Mbit/s", bps / 1e6);
  return b;
}

}  // namespace

nlohmann::ordered_json to_json(const GapStats& s, const CaptureCounts& c, const CaptureOptions& o) {
  nlohmann::ordered_json j;
  j["source"] = o.file.empty() ? o.interface : o.file;
  j["filter"] = o.filter;
  j["datagrams"] = s.datagrams();
  j["payload_bytes"] = s.payload_bytes();
  j["ip_bytes"] = s.ip_bytes();
  j["span_ns"] = s.span_ns();
  j["payload_rate_bps"] = s.payload_rate_bps();
  j["ip_rate_bps"] = s.ip_rate_bps();
  const Histogram& h = s.gaps();
  nlohmann::ordered_json g;
  g["count"] = h.count();
  g["min"] = h.min();
  for (double q : kReportQuantiles) g[pname(q)] = h.quantile(q);
  g["max"] = h.max();
  g["mean"] = h.mean();
  j["gap_ns"] = g;
  j["burst_gap_ns"] = s.burst_gap_ns();
  j["burst_gaps"] = s.burst_gaps();
  j["burst_fraction"] = s.burst_fraction();
  j["runs"] = s.runs();
  j["longest_run"] = s.longest_run();
  j["reordered"] = s.reordered();
  nlohmann::ordered_json cap;
  cap["captured"] = c.captured;
  cap["not_udp"] = c.not_udp;
  cap["segment"] = o.segment;
  cap["gso_trains"] = c.gso_trains;
  cap["kernel_dropped"] = c.kernel_dropped;
  cap["interface_dropped"] = c.interface_dropped;
  cap["stop_signal"] = c.stop_signal;
  j["capture"] = cap;
  return j;
}

std::string to_text(const GapStats& s, const CaptureCounts& c, const CaptureOptions& o) {
  std::string out;
  char b[256];
  std::snprintf(b, sizeof b, "%s (%s): %llu datagrams, %llu payload bytes in %s\n",
                o.file.empty() ? o.interface.c_str() : o.file.c_str(), o.filter.c_str(),
                static_cast<unsigned long long>(s.datagrams()), static_cast<unsigned long long>(s.payload_bytes()),
                ns(s.span_ns()).c_str());
  out += b;
  // append() piece by piece: GCC 12 warns falsely (-Wrestrict) on chained operator+.
  out.append(" rate ").append(mbit(s.payload_rate_bps())).append(" payload, ");
  out.append(mbit(s.ip_rate_bps())).append(" IP\n");
  const Histogram& h = s.gaps();
  out.append(" gap");
  for (double q : kReportQuantiles) out.append(" ").append(pname(q)).append(" ").append(ns(h.quantile(q)));
  out.append(" max ").append(ns(h.max()));
  out.append(" mean ").append(ns(static_cast<std::uint64_t>(std::llround(h.mean())))).append("\n");
  std::snprintf(b, sizeof b, " burst %.2f%% of gaps < %s, %llu runs, longest %llu datagrams\n",
                100.0 * s.burst_fraction(), ns(s.burst_gap_ns()).c_str(),
                static_cast<unsigned long long>(s.runs()), static_cast<unsigned long long>(s.longest_run()));
  out += b;
  if (c.gso_trains) {
    std::snprintf(b, sizeof b, " %llu GSO trains split into %u-byte segments\n",
                  static_cast<unsigned long long>(c.gso_trains), o.segment);
    out += b;
  }
  if (c.not_udp || c.kernel_dropped || c.interface_dropped || s.reordered()) {
    std::snprintf(b, sizeof b, " skipped %llu not UDP, capture dropped %llu (kernel) %llu (interface), %llu reordered\n",
                  static_cast<unsigned long long>(c.not_udp), static_cast<unsigned long long>(c.kernel_dropped),
                  static_cast<unsigned long long>(c.interface_dropped), static_cast<unsigned long long>(s.reordered()));
    out += b;
  }
  return out;
}

}  // namespace ufq::gaps
