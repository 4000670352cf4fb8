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

std::string format_ppm_percent(std::uint32_t ppm) {
  // ppm / 10000 percent, with up to four decimals and no trailing zeros.
  std::string s = std::to_string(ppm / 10000);
  std::uint32_t frac = ppm % 10000;
  if (frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 4 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    s += "." + digits;
  }
  return s + "%";
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
  // ufq extensions (docs/features.md#ufq-extensions).
  if (cfg.adaptive_slack_ppm > kPpm)
    return ConfigError("adaptive_slack", format_ppm_percent(cfg.adaptive_slack_ppm),
                       "0.0001%..100% of a flow's wait (0 = off)");
  if (cfg.adaptive_slack()) {
    if (cfg.compat != Compat::latest)
      return ConfigError("adaptive_slack", format_ppm_percent(cfg.adaptive_slack_ppm),
                         std::string("off with compat ") + to_string(cfg.compat) +
                             " (a ufq extension no kernel has; it needs compat latest)");
    if (cfg.adaptive_slack_max_ns < cfg.timer_slack_ns)
      return ConfigError("adaptive_slack max", to_string(cfg.adaptive_slack_max_ns) + "ns",
                         to_string(cfg.timer_slack_ns) + "..4294967295ns (at least timer_slack)");
  }
  // The surroundings.
  if (cfg.hz == 0 || cfg.hz > 100000)
    return ConfigError("hz", to_string(cfg.hz), "1..100000 (kernels use 100, 250, 300, 1000)");
  return std::nullopt;
}

}  // namespace ufq
