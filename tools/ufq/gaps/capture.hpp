// Reads the UDP datagrams of a capture, live (libpcap on an interface, with
// nanosecond timestamps) or from a pcap file, into GapStats.
//
// On loopback the capture point is the transmit side of `lo` (before the
// receiving socket), so its timestamps are the datagrams' departure times
// as the kernel saw them: what a pacer shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gaps/gap_stats.hpp"

namespace ufq::gaps {

struct CaptureOptions {
  std::string interface = "lo";  // live capture (ignored with `file`)
  std::string file;              // read this pcap file instead
  std::string filter = "udp";    // BPF expression (pcap-filter(7))
  std::uint64_t max_ns = 30'000'000'000;  // stop after this long (live)
  std::uint64_t idle_ns = 0;     // stop once this long passes without a datagram after the first (0: never)
  std::uint64_t max_datagrams = 0;  // stop after this many (0: no limit)
  std::uint32_t buffer_bytes = 64U << 20;  // kernel capture buffer, so bursts are not dropped
  // A UDP GSO message is captured on lo unsegmented, as one packet: with
  // `segment` > 0 a payload above it counts as ceil(payload / segment)
  // datagrams leaving back to back (gap 0), as they would on a real link.
  std::uint32_t segment = 0;
};

struct CaptureCounts {
  std::uint64_t captured = 0;      // packets the filter passed
  std::uint64_t not_udp = 0;       // of those, not a (first-fragment) UDP datagram: skipped
  std::uint64_t gso_trains = 0;    // packets split into segments (CaptureOptions::segment)
  std::uint64_t kernel_dropped = 0;   // pcap_stats ps_drop (live): the gaps around them are wrong
  std::uint64_t interface_dropped = 0;  // pcap_stats ps_ifdrop (live)
  int stop_signal = 0;             // SIGINT/SIGTERM that ended a live capture (0: none)
};

// Runs the capture into `stats`; `ready` is called once the live capture is
// listening (the caller may then start the traffic). Throws std::runtime_error
// with libpcap's message when the capture cannot be opened (no permission:
// capturing needs CAP_NET_RAW) or the filter does not compile.
CaptureCounts capture(const CaptureOptions& options, GapStats& stats,
                      const std::function<void()>& ready = {});

}  // namespace ufq::gaps
