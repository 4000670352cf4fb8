// The options of `tc qdisc ... fq`: read the words a user types after `fq`,
// and print them back the way `tc qdisc show` and `tc -j qdisc show` do.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/tc/error.hpp"

namespace ufq::tc {

struct ParseOptions {
  // The link speed in bit/s, which `maxrate P%` and `defrate P%` take a
  // percentage of (tc reads the device's speed from sysfs). Without it a
  // percentage is refused.
  std::optional<std::uint64_t> link_speed_bits;
  // If set, receives one note per option that was accepted but has no effect:
  // `defrate` (obsolete, ignored by every kernel) and options the kernel
  // selected by FqConfig::compat does not know (5.7: horizon, horizon_drop,
  // horizon_cap, bands/priomap, weights, offload_horizon), which it ignores.
  std::vector<std::string>* notes = nullptr;
};

// The option summary tc prints for `fq help`.
std::string_view fq_usage();

// Reads the words after `fq` (`limit 500 quantum 9000 nopacing ...`) with
// tc's rules (docs/fq-rules.md#configuration, #tc-parsing-and-units) on top of
// `base`, which supplies the defaults and the surroundings (compat, hz, max_offload_horizon_us, ...). A keyword given
// twice takes the last value, except `bands` and `weights` (tc refuses
// duplicates). `buckets N` is rounded up to a power of two, `buckets 0`
// changes nothing, `maxrate 4294967295bps` means unlimited. The result is then
// checked with ufq::validate(), the kernel's acceptance rules.
// Errors: Kind::syntax for what tc refuses, Kind::kernel for what the kernel
// refuses. Nothing is partially applied.
Expected<FqConfig> parse_fq_options(std::span<const std::string> words, const FqConfig& base = {},
                                    const ParseOptions& options = {});

// The same for a whole line, split at whitespace.
Expected<FqConfig> parse_fq_line(std::string_view line, const FqConfig& base = {},
                                 const ParseOptions& options = {});

// Splits at any whitespace (isspace), dropping empty words.
std::vector<std::string> split_words(std::string_view text);

// Joins with single spaces.
std::string join_words(std::span<const std::string> words);

// refill_delay as the kernel reports it: stored as ceil(us * HZ / 1e6)
// jiffies, dumped back as floor(jiffies * 1e6 / HZ) us (HZ 250: 1000 -> 4000).
// Clamped to 4294967295. With hz 0 the value is returned unchanged.
std::uint32_t dumped_refill_delay_us(std::uint32_t refill_delay_us, std::uint32_t hz);

// The configuration as the kernel reports it back: refill_delay after the
// jiffies round trip, any maxrate >= 4294967295 B/s as unlimited. This is
// what reading `tc -j` output (config_json) returns.
FqConfig dumped_config(const FqConfig& cfg);

// The options part of `tc qdisc show` for fq (what follows "root refcnt 2 "),
// every field followed by one space. The fields depend on cfg.compat:
//   latest:    limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023
//              bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 weights 589824
//              196608 65536 quantum 3028b initial_quantum 15140b
//              low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us
//              horizon 10s horizon_drop offload_horizon 0us
//   linux_5_7: no bands/priomap/weights, horizon, horizon_drop/cap, offload_horizon.
// maxrate is omitted when unlimited, ce_threshold when 4294967295 us,
// low_rate_threshold when 0; `nopacing` appears only when pacing is off.
// ufq extensions, which no tc prints, follow everything else behind the word
// `ufq_extension` (`ufq_extension adaptive_slack 10% max 1ms `).
std::string format_fq_options(const FqConfig& cfg);

// The "options" object of `tc -j qdisc show`: same fields and order, raw
// kernel units (bytes, bytes/s, us; ns for timer_slack), "pacing": false only
// when off, the array keys "priomap " and "weights " with tc's trailing space,
// and "horizon_drop"/"horizon_cap" as null; ufq extensions as keys starting
// "ufq_" ("ufq_adaptive_slack_ppm", "ufq_adaptive_slack_max" in ns; the max
// also when off but not the default, as the exact words keep it too). Returned as compact JSON text
// (no spaces), so that this header needs no JSON library.
std::string fq_options_json(const FqConfig& cfg);

// Words that parse_fq_options() turns back into exactly `cfg` (given a base
// with cfg's surroundings): only options that differ from the defaults, in
// the order tc prints them, plain integers for counts and bytes, rates and
// times in tc's printed form when that is exact, else in bit / us / ns. This
// is the re-parseable counterpart of format_fq_options(), whose `3028b` and
// `10000p` tc itself refuses as input. Exact for every configuration tc can
// express (so for every result of parse_fq_options).
std::vector<std::string> fq_options_args(const FqConfig& cfg);

}  // namespace ufq::tc
