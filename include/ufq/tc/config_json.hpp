// An fq configuration written as JSON with the key names and raw units of
// `tc -j qdisc show` (the alternative to tc words).
//
// Accepted documents:
//   * an options object: {"limit": 10000, "quantum": 3028, "maxrate": 125000}
//   * a qdisc object as tc -j prints it, {"kind": "fq", ..., "options": {...}},
//     or tc -j's array holding exactly one such object; only "kind" and
//     "options" are read there, tc's other members (handle, counters) are
//     skipped, so `tc -j qdisc show dev eth0` output can be loaded as is.
//     Such an object describes a whole kernel state, so the keys tc leaves
//     out when they hold their special value mean that value when absent:
//     pacing true, maxrate unlimited, low_rate_threshold 0, ce_threshold off.
//
// Option keys (all optional; an absent key keeps the base value):
//   limit, flow_limit, quantum, initial_quantum, orphan_mask
//                        integer 0..4294967295
//   buckets              power of two 1..2147483648 (the kernel takes 2..262144)
//   maxrate              bytes/s 0..4294967295; 4294967295 = unlimited
//   low_rate_threshold   bytes/s 0..4294967295
//   defrate              bytes/s 0..4294967295, accepted and ignored (obsolete)
//   pacing               true | false
//   refill_delay, ce_threshold, horizon, offload_horizon
//                        microseconds 0..4294967295 (ce_threshold 4294967295 = off)
//   timer_slack          nanoseconds 0..4294967295
//   horizon_drop         null (as tc prints it) or true: drop; false: cap
//   horizon_cap          null (as tc prints it) or true: cap; false: drop
//   bands                3
//   priomap, "priomap "  16 integers 0..2 (tc's key has a trailing space;
//                        both spellings are accepted, not both at once)
//   weights, "weights "  3 integers 16384..2147483647 (same two spellings)
//   ufq_adaptive_slack_ppm  a ufq extension (docs/features.md#ufq-extensions):
//                        parts per million 0..1000000 (0 = off; latest only)
//   ufq_adaptive_slack_max  nanoseconds, at least timer_slack when on
// Keys the kernel selected by compat does not know (5.7: horizon,
// horizon_drop, horizon_cap, bands, priomap, weights, offload_horizon) are
// checked and then ignored, as that kernel ignores them.
//
// Refused, with an error naming key, value and valid range: unknown keys,
// duplicate keys, wrong types (no strings, no fractions), out-of-range
// values, and whatever ufq::validate() (the kernel) refuses. All or nothing.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/tc/error.hpp"

namespace ufq::tc {

// `base` supplies the defaults and the surroundings (compat, hz, ...). If
// `notes` is set it receives a line per key accepted without effect.
Expected<FqConfig> fq_config_from_json(std::string_view json_text, const FqConfig& base = {},
                                       std::vector<std::string>* notes = nullptr);

// The same, reading a file.
Expected<FqConfig> load_fq_config(const std::filesystem::path& file, const FqConfig& base = {},
                                  std::vector<std::string>* notes = nullptr);

}  // namespace ufq::tc
