// The scheduler configuration the benchmarks share: buckets sized to the flow
// count, as an administrator would (2^10..2^18), and no limit or horizon that a
// steady-state workload with every flow holding a packet would hit.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "ufq/config.hpp"

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

}  // namespace ufq::bench
