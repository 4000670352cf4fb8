#include "ufq/config.hpp"

#include <climits>
#include <string>
#include <utility>

namespace ufq {

const char* to_string(Compat c) {
  switch (c) {
    case Compat::latest: return "latest";
    case Compat::linux_5_7: return "5.7";
  }
  return "?";
}

FqConfig FqConfig::for_mtu(std::uint32_t mtu, std::uint32_t hard_header_len) {
  FqConfig c;
  const std::uint32_t psched_mtu = mtu + hard_header_len;
  c.quantum = 2 * psched_mtu;
  c.initial_quantum = 10 * psched_mtu;
  return c;
}

ConfigError::ConfigError(std::string field, std::string value, std::string valid)
    : std::invalid_argument("invalid " + field + " " + value + ": valid " + valid),
      field_(std::move(field)),
      value_(std::move(value)),
      valid_(std::move(valid)) {}

std::optional<ConfigError> validate(const FqConfig& cfg) {
  using std::to_string;
  // Kernel refusals (EINVAL), in the order fq_change() meets them.
  if (cfg.buckets_log < kMinBucketsLog || cfg.buckets_log > kMaxBucketsLog)
    return ConfigError("buckets_log", to_string(cfg.buckets_log),
                       "1..18 (2..262144 buckets)");
  if (cfg.quantum == 0 || cfg.quantum > kMaxQuantum)
    return ConfigError("quantum", to_string(cfg.quantum), "1..1048576 bytes");
  // The April 2023 overflow fix: the credit is a signed 32-bit integer. 5.7 took any u32.
  if (cfg.compat == Compat::latest && cfg.initial_quantum > static_cast<std::uint32_t>(INT_MAX))
    return ConfigError("initial_quantum", to_string(cfg.initial_quantum),
                       "0..2147483647 bytes");
  if (cfg.compat == Compat::latest) {
    for (std::size_t i = 0; i < cfg.priomap.size(); ++i)
      if (cfg.priomap[i] >= kBands)
        return ConfigError("priomap[" + to_string(i) + "]", to_string(cfg.priomap[i]),
                           "0..2 (a band number)");
    for (std::size_t i = 0; i < kBands; ++i)
      if (cfg.weights[i] < kMinWeight)
        return ConfigError("weights[" + to_string(i) + "]", to_string(cfg.weights[i]),
                           ">= 16384");
    if (cfg.offload_horizon_us > cfg.max_offload_horizon_us)
      return ConfigError("offload_horizon", to_string(cfg.offload_horizon_us) + "us",
                         "0.." + to_string(cfg.max_offload_horizon_us) +
                             "us (the device's max_pacing_offload_horizon)");
  }
  // The surroundings.
  if (cfg.hz == 0 || cfg.hz > 100000)
    return ConfigError("hz", to_string(cfg.hz), "1..100000 (kernels use 100, 250, 300, 1000)");
  return std::nullopt;
}

}  // namespace ufq
