// Readable gtest output for FqConfig (found by argument-dependent lookup).
#pragma once

#include <ostream>

#include "ufq/config.hpp"
#include "ufq/tc/fq_options.hpp"

namespace ufq {

inline void PrintTo(const FqConfig& c, std::ostream* os) {
  *os << "{compat " << to_string(c.compat) << ", hz " << c.hz << ", max_offload_horizon_us "
      << c.max_offload_horizon_us << ", max_flows " << c.max_flows << ", maxrate " << c.maxrate
      << ", words: " << tc::join_words(tc::fq_options_args(c)) << "}";
}

}  // namespace ufq
