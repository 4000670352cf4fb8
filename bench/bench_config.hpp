// The scheduler configuration the benchmarks share: buckets sized to the flow
// count, as an administrator would (2^10..2^18), and no limit or horizon that a
// steady-state workload with every flow holding a packet would hit.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"

namespace ufq::bench {

inline FqConfig config_for(std::size_t flows, std::uint32_t slack_ns) {
  FqConfig cfg;
  cfg.timer_slack_ns = slack_ns;
  cfg.buckets_log = static_cast<std::uint8_t>(
      std::clamp<std::size_t>(static_cast<std::size_t>(std::bit_width(flows)), 10, 18));
  cfg.horizon_us = 0xFFFFFFFF;
  cfg.limit = 0xFFFFFFFF;
  return cfg;
}

// Readies a reused packet buffer as a sender does: the fields a caller owns,
// and the CE mark cleared. Not `p = Packet{}`: GCC clears its 80 bytes with
// `rep stos`, whose start-up cost here (a few ns per packet) is harness time
// that would be charged to the scheduler under test.
inline void fill(Packet& p, std::uint32_t len, FlowOwner* owner, Time tstamp) {
  p.len = len;
  p.segments = 1;
  p.priority = 0;
  p.ect = false;
  p.hash = 0;
  p.tstamp = tstamp;
  p.owner = owner;
  p.cookie = 0;
  p.ce = false;
}

}  // namespace ufq::bench
