// Printing fq options as `tc qdisc show` / `tc -j qdisc show` do (docs/fq-rules.md#tc-output),
// and as re-parseable words.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

constexpr std::uint32_t kU32Max = 0xFFFFFFFFU;

// The kernel dumps the per-flow max rate as min(rate, ~0U); ~0U means unlimited.
std::uint32_t dumped_maxrate(Rate r) { return static_cast<std::uint32_t>(std::min<Rate>(r, kU32Max)); }

// 2^log as tc prints it, without shifting past the width.
std::uint64_t buckets_of(std::uint8_t log) { return log < 64 ? std::uint64_t{1} << log : 0; }

// Rate / time words that parse back to exactly the same value.
std::string exact_rate(std::uint32_t bytes_per_sec) {
  std::string s = format_rate(bytes_per_sec);
  if (parse_rate(s) == bytes_per_sec) return s;
  return std::to_string(std::uint64_t{bytes_per_sec} * 8) + "bit";
}

std::string exact_time_us(std::uint32_t us) {
  std::string s = format_time_us(us);
  if (parse_time_us(s) == us) return s;
  return std::to_string(us) + "us";
}

std::string exact_time_ns(std::uint32_t ns) {
  std::string s = format_time64_ns(ns);
  if (parse_time64_ns(s) == std::int64_t{ns}) return s;
  return std::to_string(ns) + "ns";
}

}  // namespace

std::uint32_t dumped_refill_delay_us(std::uint32_t refill_delay_us, std::uint32_t hz) {
  if (hz == 0) return refill_delay_us;
  const std::uint64_t jiffies = (std::uint64_t{refill_delay_us} * hz + 999'999) / 1'000'000;
  const std::uint64_t back = jiffies * 1'000'000 / hz;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(back, kU32Max));
}

FqConfig dumped_config(const FqConfig& cfg) {
  FqConfig out = cfg;
  out.refill_delay_us = dumped_refill_delay_us(cfg.refill_delay_us, cfg.hz);
  if (dumped_maxrate(cfg.maxrate) == kU32Max) out.maxrate = kUnlimitedRate;
  return out;
}

std::string format_fq_options(const FqConfig& cfg) {
  const bool latest = cfg.compat == Compat::latest;
  std::string out;
  auto field = [&out](std::string_view name, const std::string& value) {
    out += name;
    out += ' ';
    out += value;
    out += ' ';
  };
  field("limit", std::to_string(cfg.limit) + "p");
  field("flow_limit", std::to_string(cfg.flow_limit) + "p");
  field("buckets", std::to_string(buckets_of(cfg.buckets_log)));
  field("orphan_mask", std::to_string(cfg.orphan_mask));
  if (!cfg.pacing) out += "nopacing ";
  if (latest) {
    out += "bands 3 priomap ";
    for (const auto band : cfg.priomap) out += std::to_string(band) + ' ';
    out += "weights ";
    for (const auto w : cfg.weights) out += std::to_string(w) + ' ';
  }
  field("quantum", format_size(cfg.quantum));
  field("initial_quantum", format_size(cfg.initial_quantum));
  if (const auto maxrate = dumped_maxrate(cfg.maxrate); maxrate != kU32Max)
    field("maxrate", format_rate(maxrate));
  if (cfg.low_rate_threshold != 0) field("low_rate_threshold", format_rate(cfg.low_rate_threshold));
  field("refill_delay", format_time_us(dumped_refill_delay_us(cfg.refill_delay_us, cfg.hz)));
  if (cfg.ce_threshold_us != kCeThresholdDisabled)
    field("ce_threshold", format_time_us(cfg.ce_threshold_us));
  field("timer_slack", format_time64_ns(cfg.timer_slack_ns));
  if (latest) {
    field("horizon", format_time_us(cfg.horizon_us));
    out += cfg.horizon_drop ? "horizon_drop " : "horizon_cap ";
    field("offload_horizon", format_time_us(cfg.offload_horizon_us));
  }
  // ufq extensions, after everything a kernel reports, behind a marker word
  // no tc prints (docs/features.md#ufq-extensions).
  if (cfg.adaptive_slack()) {
    out += "ufq_extension ";
    field("adaptive_slack", format_ppm_percent(cfg.adaptive_slack_ppm));
    field("max", format_time64_ns(cfg.adaptive_slack_max_ns));
  }
  return out;
}

std::string fq_options_json(const FqConfig& cfg) {
  const bool latest = cfg.compat == Compat::latest;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["limit"] = cfg.limit;
  j["flow_limit"] = cfg.flow_limit;
  j["buckets"] = buckets_of(cfg.buckets_log);
  j["orphan_mask"] = cfg.orphan_mask;
  if (!cfg.pacing) j["pacing"] = false;
  if (latest) {
    j["bands"] = kBands;
    j["priomap "] = cfg.priomap;  // tc's key really ends with a space
    j["weights "] = cfg.weights;
  }
  j["quantum"] = cfg.quantum;
  j["initial_quantum"] = cfg.initial_quantum;
  if (const auto maxrate = dumped_maxrate(cfg.maxrate); maxrate != kU32Max) j["maxrate"] = maxrate;
  if (cfg.low_rate_threshold != 0) j["low_rate_threshold"] = cfg.low_rate_threshold;
  j["refill_delay"] = dumped_refill_delay_us(cfg.refill_delay_us, cfg.hz);
  if (cfg.ce_threshold_us != kCeThresholdDisabled) j["ce_threshold"] = cfg.ce_threshold_us;
  j["timer_slack"] = cfg.timer_slack_ns;
  if (latest) {
    j["horizon"] = cfg.horizon_us;
    j[cfg.horizon_drop ? "horizon_drop" : "horizon_cap"] = nullptr;
    j["offload_horizon"] = cfg.offload_horizon_us;
  }
  // ufq extensions: keys no kernel reports, prefixed "ufq_", in raw units.
  // (max also when off but not the default, so that nothing is lost).
  const FqConfig d;
  if (cfg.adaptive_slack()) j["ufq_adaptive_slack_ppm"] = cfg.adaptive_slack_ppm;
  if (cfg.adaptive_slack() || cfg.adaptive_slack_max_ns != d.adaptive_slack_max_ns)
    j["ufq_adaptive_slack_max"] = cfg.adaptive_slack_max_ns;
  return j.dump();
}

std::vector<std::string> fq_options_args(const FqConfig& cfg) {
  const bool latest = cfg.compat == Compat::latest;
  const FqConfig d;  // the defaults the words are applied to
  std::vector<std::string> w;
  auto add = [&w](std::string keyword, std::string value) {
    w.push_back(std::move(keyword));
    w.push_back(std::move(value));
  };
  if (cfg.limit != d.limit) add("limit", std::to_string(cfg.limit));
  if (cfg.flow_limit != d.flow_limit) add("flow_limit", std::to_string(cfg.flow_limit));
  if (cfg.buckets_log != d.buckets_log) add("buckets", std::to_string(buckets_of(cfg.buckets_log)));
  if (cfg.orphan_mask != d.orphan_mask) add("orphan_mask", std::to_string(cfg.orphan_mask));
  if (cfg.pacing != d.pacing) w.emplace_back(cfg.pacing ? "pacing" : "nopacing");
  if (latest && cfg.priomap != d.priomap) {
    add("bands", "3");
    w.emplace_back("priomap");
    for (const auto band : cfg.priomap) w.push_back(std::to_string(band));
  }
  if (latest && cfg.weights != d.weights) {
    w.emplace_back("weights");
    for (const auto x : cfg.weights) w.push_back(std::to_string(x));
  }
  if (cfg.quantum != d.quantum) add("quantum", std::to_string(cfg.quantum));
  if (cfg.initial_quantum != d.initial_quantum)
    add("initial_quantum", std::to_string(cfg.initial_quantum));
  if (const auto maxrate = dumped_maxrate(cfg.maxrate); maxrate != kU32Max)
    add("maxrate", exact_rate(maxrate));
  if (cfg.low_rate_threshold != d.low_rate_threshold)
    add("low_rate_threshold", exact_rate(cfg.low_rate_threshold));
  if (cfg.refill_delay_us != d.refill_delay_us) add("refill_delay", exact_time_us(cfg.refill_delay_us));
  if (cfg.ce_threshold_us != d.ce_threshold_us) add("ce_threshold", exact_time_us(cfg.ce_threshold_us));
  if (cfg.timer_slack_ns != d.timer_slack_ns) add("timer_slack", exact_time_ns(cfg.timer_slack_ns));
  if (latest) {
    if (cfg.horizon_us != d.horizon_us) add("horizon", exact_time_us(cfg.horizon_us));
    if (cfg.horizon_drop != d.horizon_drop)
      w.emplace_back(cfg.horizon_drop ? "horizon_drop" : "horizon_cap");
    if (cfg.offload_horizon_us != d.offload_horizon_us)
      add("offload_horizon", exact_time_us(cfg.offload_horizon_us));
  }
  if (cfg.adaptive_slack() || cfg.adaptive_slack_max_ns != d.adaptive_slack_max_ns) {
    add("adaptive_slack", cfg.adaptive_slack() ? format_ppm_percent(cfg.adaptive_slack_ppm) : "off");
    add("max", exact_time_ns(cfg.adaptive_slack_max_ns));
  }
  return w;
}

}  // namespace ufq::tc
