// The fq configuration: the attributes `tc qdisc ... fq` sends, in the units
// the kernel receives them (so a configuration round-trips with tc exactly),
// plus the few facts about the surrounding kernel that fq depends on.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "ufq/time.hpp"

namespace ufq {

// Which kernel's decisions to make where versions differ.
enum class Compat : std::uint8_t {
  // Mainline as of 2026 (docs/fq-rules.md#versions): 3 priority bands with a
  // priomap and weights, per-band limit, the fast path, GC on every enqueue,
  // horizon, offload_horizon, TIME_WAIT owners orphaned, and the 2025-2026
  // fixes (docs/features.md#kernel-fixes-of-2025-2026).
  latest,
  // Linux 5.7, right after the seed's timer-slack series: one high-priority
  // queue for priority 7 (TC_PRIO_CONTROL), a global limit, no fast path, no
  // horizon, GC only above 2x buckets flows with half of them idle.
  linux_5_7,
};

const char* to_string(Compat c);

inline constexpr std::size_t kBands = 3;
inline constexpr std::int32_t kMinWeight = 16384;         // FQ_MIN_WEIGHT
inline constexpr std::uint32_t kMaxQuantum = 1U << 20;    // since the Dec 2019 syzbot fix
inline constexpr std::uint8_t kMinBucketsLog = 1;
inline constexpr std::uint8_t kMaxBucketsLog = 18;
inline constexpr std::uint32_t kCeThresholdDisabled = 0xFFFFFFFF;  // us

struct FqConfig {
  // --- tc-fq(8) options, in netlink units ---
  std::uint32_t limit = 10000;               // packets (per band in `latest`)
  std::uint32_t flow_limit = 100;            // packets per flow
  std::uint32_t quantum = 3028;              // bytes: 2 x (MTU 1500 + 14)
  std::uint32_t initial_quantum = 15140;     // bytes: 10 x (MTU 1500 + 14)
  Rate maxrate = kUnlimitedRate;             // bytes/s per flow
  std::uint8_t buckets_log = 10;             // 2^log flow-table buckets
  bool pacing = true;                        // rate_enable
  std::uint32_t refill_delay_us = 40000;     // kept in jiffies inside (rounded up)
  std::uint32_t orphan_mask = 1023;
  std::uint32_t low_rate_threshold = 68750;  // bytes/s (550 kbit/s)
  std::uint32_t ce_threshold_us = kCeThresholdDisabled;
  std::uint32_t timer_slack_ns = 10000;      // the seed: 10 us
  std::uint32_t horizon_us = 10'000'000;     // 10 s (5.8+)
  bool horizon_drop = true;                  // false = horizon_cap (5.8+)
  std::array<std::uint8_t, 16> priomap = {1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};  // 6.7+
  std::array<std::int32_t, kBands> weights = {589824, 196608, 65536};                      // 6.7+
  std::uint32_t offload_horizon_us = 0;      // 6.13+

  // --- ufq extensions: no kernel has them (docs/features.md#ufq-extensions) ---
  // Adaptive timer slack (docs/fq-rules.md#adaptive-slack): 0 = off, the
  // kernel's fixed window [t, t + timer_slack]. Otherwise each throttled flow
  // allows a lateness of this fraction (parts per million, 1..1000000) of its
  // wait, never less than timer_slack nor more than adaptive_slack_max_ns, and
  // the watchdog window ends at the earliest such allowance. Compat::latest
  // only; tc: `adaptive_slack FRACTION max TIME`.
  std::uint32_t adaptive_slack_ppm = 0;
  std::uint32_t adaptive_slack_max_ns = 1'000'000;  // >= timer_slack_ns when on

  // --- the surroundings, which the kernel does not take from tc ---
  Compat compat = Compat::latest;
  std::uint32_t hz = 250;                    // jiffies per second (refill_delay, GC age)
  std::uint32_t max_offload_horizon_us = 0;  // device's max_pacing_offload_horizon
  // Flow objects the scheduler may hold; beyond it a new flow is an allocation
  // error (its packets go to the internal queue, as in the kernel). 0 = no cap.
  std::uint32_t max_flows = 0;

  // quantum and initial_quantum derived from a device MTU, as the kernel does
  // (psched_mtu = MTU + link header length).
  static FqConfig for_mtu(std::uint32_t mtu, std::uint32_t hard_header_len = 14);

  std::uint32_t buckets() const { return 1U << buckets_log; }
  bool adaptive_slack() const { return adaptive_slack_ppm != 0; }
  bool operator==(const FqConfig&) const = default;
};

inline constexpr std::uint32_t kPpm = 1'000'000;  // adaptive_slack_ppm of 100 %

// A fraction in parts per million as the shortest exact percentage:
// 100000 -> "10%", 1 -> "0.0001%", 125000 -> "12.5%".
std::string format_ppm_percent(std::uint32_t ppm);

// A refused configuration: which field, the value given, the valid range.
class ConfigError : public std::invalid_argument {
 public:
  ConfigError(std::string field, std::string value, std::string valid);
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& valid() const { return valid_; }

 private:
  std::string field_, value_, valid_;
};

// The kernel's acceptance rules (and ours for the surroundings). Returns the
// first problem found, or nothing when the configuration is valid.
std::optional<ConfigError> validate(const FqConfig& cfg);

}  // namespace ufq
