#include "gaps/gap_stats.hpp"

#include <algorithm>

namespace ufq::gaps {

void GapStats::add(const Datagram& d) {
  const bool same_time = n_ != 0 && d.time_ns == last_ns_;
  if (n_ == 0) {
    first_ns_ = last_ns_ = d.time_ns;
    runs_ = 1;
    run_ = 1;
  } else {
    std::uint64_t gap = 0;
    if (d.time_ns < last_ns_)
      ++reordered_;
    else
      gap = d.time_ns - last_ns_;
    gaps_.add(gap);
    if (gap < burst_gap_ns_) {
      ++burst_gaps_;
      ++run_;
    } else {
      ++runs_;
      run_ = 1;
    }
    last_ns_ = std::max(last_ns_, d.time_ns);
  }
  longest_run_ = std::max(longest_run_, run_);
  // The datagrams at the last timestamp (a GSO train's segments share one).
  if (same_time) {
    last_payload_ += d.payload;
    last_ip_ += d.ip_bytes;
  } else {
    last_payload_ = d.payload;
    last_ip_ = d.ip_bytes;
  }
  ++n_;
  payload_ += d.payload;
  ip_ += d.ip_bytes;
}

namespace {
double rate(std::uint64_t bytes, std::uint64_t span_ns) {
  return span_ns ? static_cast<double>(bytes) * 8e9 / static_cast<double>(span_ns) : 0.0;
}
}  // namespace

double GapStats::payload_rate_bps() const { return n_ < 2 ? 0.0 : rate(payload_ - last_payload_, span_ns()); }
double GapStats::ip_rate_bps() const { return n_ < 2 ? 0.0 : rate(ip_ - last_ip_, span_ns()); }

double GapStats::burst_fraction() const {
  const std::uint64_t g = gaps_.count();
  return g ? static_cast<double>(burst_gaps_) / static_cast<double>(g) : 0.0;
}

}  // namespace ufq::gaps
