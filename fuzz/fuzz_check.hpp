// Shared helpers of the fuzz targets.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ufq/config.hpp"
#include "ufq/tc/fq_options.hpp"

namespace ufq::fuzz {

// A broken property: say which, with the input's words, and crash so that
// libFuzzer records the input.
[[noreturn]] inline void broken(const char* property, const std::string& detail) {
  std::fprintf(stderr, "fuzz property broken: %s\n  %s\n", property, detail.c_str());
  std::abort();
}

// The defaults with cfg's surroundings: what fq_options_args() is relative to.
inline FqConfig base_of(const FqConfig& cfg) {
  FqConfig b;
  b.compat = cfg.compat;
  b.hz = cfg.hz;
  b.max_offload_horizon_us = cfg.max_offload_horizon_us;
  b.max_flows = cfg.max_flows;
  return b;
}

// Byte 0 of an input picks the surroundings: bit 0 compat (1 = 5.7), bits
// 1-2 HZ (100, 250, 300, 1000), bit 3 a device with 1 s offload horizon,
// bit 4 a 10 Gbit/s link speed for percentages.
struct Surroundings {
  FqConfig base;
  tc::ParseOptions options;
};

inline Surroundings surroundings(unsigned char selector) {
  Surroundings s;
  s.base.compat = (selector & 1U) != 0 ? Compat::linux_5_7 : Compat::latest;
  constexpr std::uint32_t kHz[] = {100, 250, 300, 1000};
  s.base.hz = kHz[(selector >> 1U) & 3U];
  s.base.max_offload_horizon_us = (selector & 8U) != 0 ? 1'000'000 : 0;
  if ((selector & 16U) != 0) s.options.link_speed_bits = 10'000'000'000ULL;
  return s;
}

}  // namespace ufq::fuzz
