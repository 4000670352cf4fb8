// A packet capture turned into replayable traffic: packets by 5-tuple flow,
// with their times relative to the first packet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ufq/time.hpp"

namespace ufq::sim {

struct TracePacket {
  Time time;           // since the first packet of the capture, + 1 ns (0 = "no timestamp")
  std::uint32_t len;   // original length on the wire, without FCS
  std::uint32_t flow;  // index of its 5-tuple, in order of first appearance
};

struct Trace {
  std::vector<TracePacket> packets;  // in capture order
  std::size_t flows = 0;
  std::size_t skipped = 0;           // neither IPv4 nor IPv6 (all such packets share flow 0's tuple)
};

// Reads an Ethernet (or raw IP) pcap file. Throws std::invalid_argument
// naming the file when it cannot be read.
Trace read_pcap(const std::string& path);

}  // namespace ufq::sim
