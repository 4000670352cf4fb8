// The arrival gaps of one stream of datagrams (what `ufq gaps` reports):
// the gap distribution in the project's one histogram and quantile
// definition (include/ufq/histogram.hpp), the burst fraction and the rate.
#pragma once

#include <cstdint>

#include "ufq/histogram.hpp"

namespace ufq::gaps {

// Gaps below this are "burst" gaps: two datagrams leaving back to back, not
// paced (at 1200-byte datagrams, 20 us is 480 Mbit/s).
inline constexpr std::uint64_t kDefaultBurstGapNs = 20'000;

struct Datagram {
  std::uint64_t time_ns = 0;     // capture timestamp (CLOCK_REALTIME ns)
  std::uint32_t payload = 0;     // UDP payload bytes
  std::uint32_t ip_bytes = 0;    // IP datagram bytes (headers included)
};

// Accumulates datagrams in arrival order; no allocation, no per-packet storage.
class GapStats {
 public:
  explicit GapStats(std::uint64_t burst_gap_ns = kDefaultBurstGapNs) : burst_gap_ns_(burst_gap_ns) {}

  // Precondition: `d.time_ns` is not before the previous datagram's (a
  // capture's timestamps can step back by a few ns across CPUs: such a gap
  // is recorded as 0 and counted in reordered()).
  void add(const Datagram& d);

  std::uint64_t datagrams() const { return n_; }
  std::uint64_t payload_bytes() const { return payload_; }
  std::uint64_t ip_bytes() const { return ip_; }
  std::uint64_t first_ns() const { return first_ns_; }
  std::uint64_t last_ns() const { return last_ns_; }
  std::uint64_t span_ns() const { return n_ ? last_ns_ - first_ns_ : 0; }
  // Bits per second over the span: the bytes of every datagram but those at
  // the last timestamp (each gap is the time its earlier datagrams took at
  // the rate; a GSO train's segments share a timestamp), 0 with fewer than
  // two datagrams.
  double payload_rate_bps() const;
  double ip_rate_bps() const;
  const Histogram& gaps() const { return gaps_; }
  std::uint64_t burst_gap_ns() const { return burst_gap_ns_; }
  std::uint64_t burst_gaps() const { return burst_gaps_; }  // gaps < burst_gap_ns()
  double burst_fraction() const;
  // Runs of datagrams joined by burst gaps (a lone datagram is a run of 1).
  std::uint64_t runs() const { return n_ ? runs_ : 0; }
  std::uint64_t longest_run() const { return longest_run_; }
  std::uint64_t reordered() const { return reordered_; }

 private:
  std::uint64_t burst_gap_ns_;
  Histogram gaps_;
  std::uint64_t n_ = 0, payload_ = 0, ip_ = 0;
  std::uint64_t last_payload_ = 0, last_ip_ = 0;
  std::uint64_t first_ns_ = 0, last_ns_ = 0;
  std::uint64_t burst_gaps_ = 0, runs_ = 0, run_ = 0, longest_run_ = 0, reordered_ = 0;
};

}  // namespace ufq::gaps
