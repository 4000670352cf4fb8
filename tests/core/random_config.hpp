// Random fq configurations over the whole range validate() accepts (and, for
// change(), ones it refuses). Each field is drawn from its meaningful values
// (the default, the bounds, small values that bite) most of the time and
// from its full valid range otherwise, so both the corners and the bulk of
// the space are reached. Used by the differential rig (unit test and fuzzer).
#pragma once

#include <climits>
#include <cstdint>

#include "op_source.hpp"
#include "ufq/config.hpp"

namespace ufq::diff {

// A packet count limit: tiny (so it bites), default, or anything.
inline std::uint32_t random_limit(Source& s, std::uint32_t dflt) {
  switch (s.next(6)) {
    case 0: return dflt;
    case 1: return s.u32();
    case 2: return s.one_of<std::uint32_t>({0, 1, 2, UINT32_MAX});
    default: return static_cast<std::uint32_t>(s.next(65));
  }
}

inline Rate random_rate(Source& s) {
  switch (s.next(8)) {
    case 0: return kUnlimitedRate;
    case 1: return s.one_of<Rate>({0, 1, 68'750, 68'751, 125'000'000});
    case 2: return s.between(1'000, 70'000);  // about low_rate_threshold
    case 3: return s.between(1'000'000, 100'000'000);
    case 4: return s.between(100'000'000, 10'000'000'000ULL);
    case 5: return s.u64();
    default: return kUnlimitedRate;
  }
}

// One tc-settable field of `c`, chosen by `field` (0..kTcFields-1), set to a
// random valid value for c's compat and surroundings.
inline constexpr unsigned kTcFields = 19;
inline void random_tc_field(FqConfig& c, unsigned field, Source& s) {
  const bool latest = c.compat == Compat::latest;
  switch (field) {
    case 0: c.limit = random_limit(s, 10000); break;
    case 1: c.flow_limit = random_limit(s, 100); break;
    case 2:
      c.quantum = s.chance(60) ? s.one_of<std::uint32_t>({1, 64, 600, 1514, 3028, 9000, kMaxQuantum})
                               : static_cast<std::uint32_t>(s.between(1, kMaxQuantum));
      break;
    case 3:
      // 5.7 also takes values above INT_MAX (a negative starting credit), but
      // with a small quantum the flow then needs up to 2^31 DRR rounds before
      // it may send, as in the kernel before the April 2023 fix: a hang for a
      // fuzzer. Only UINT32_MAX (credit -1) is drawn from that range.
      c.initial_quantum = s.chance(60)
                              ? s.one_of<std::uint32_t>({0, 1, 3028, 15140, INT_MAX, latest ? INT_MAX : UINT32_MAX})
                              : static_cast<std::uint32_t>(s.between(0, INT_MAX));
      break;
    case 4: c.maxrate = random_rate(s); break;
    case 5:  // large tables are rare: inspection walks every bucket after each step
      c.buckets_log =
          static_cast<std::uint8_t>(s.chance(4) ? s.between(11, kMaxBucketsLog) : s.between(kMinBucketsLog, 10));
      break;
    case 6: c.pacing = s.chance(70); break;
    case 7: c.refill_delay_us = s.chance(60) ? s.one_of<std::uint32_t>({0, 1, 4000, 40000, 1'000'000}) : s.u32(); break;
    case 8: c.orphan_mask = s.chance(70) ? s.one_of<std::uint32_t>({0, 1, 7, 63, 1023, UINT32_MAX}) : s.u32(); break;
    case 9:
      c.low_rate_threshold = s.chance(60) ? s.one_of<std::uint32_t>({0, 68750, 1'000'000, UINT32_MAX}) : s.u32();
      break;
    case 10:
      c.ce_threshold_us = s.chance(40)   ? kCeThresholdDisabled
                          : s.chance(70) ? static_cast<std::uint32_t>(s.next(1000))
                                         : s.u32();
      break;
    case 11:
      c.timer_slack_ns = s.chance(60) ? s.one_of<std::uint32_t>({0, 1, 10'000, 50'000, 1'000'000}) : s.u32();
      if (c.adaptive_slack() && c.adaptive_slack_max_ns < c.timer_slack_ns) c.adaptive_slack_max_ns = c.timer_slack_ns;
      break;
    case 12:
      c.horizon_us = s.chance(60) ? s.one_of<std::uint32_t>({0, 1, 1000, 1'000'000, 10'000'000, UINT32_MAX}) : s.u32();
      break;
    case 13: c.horizon_drop = s.coin(); break;
    case 14:  // the priomap only matters (and is only checked) in latest
      for (auto& b : c.priomap) b = static_cast<std::uint8_t>(latest ? s.next(kBands) : s.next(256));
      break;
    case 15:
      for (auto& w : c.weights) {
        if (!latest)
          w = static_cast<std::int32_t>(s.u32());
        else
          w = static_cast<std::int32_t>(s.chance(70) ? s.between(kMinWeight, 600'000)
                                                     : s.between(kMinWeight, INT32_MAX));
      }
      break;
    case 16:
      if (!latest)
        c.offload_horizon_us = s.u32();  // ignored before 6.13, so anything goes
      else
        c.offload_horizon_us = s.chance(50) ? s.one_of<std::uint32_t>({0, c.max_offload_horizon_us})
                                            : static_cast<std::uint32_t>(s.between(0, c.max_offload_horizon_us));
      break;
    case 17:  // the adaptive slack, a ufq extension: latest only (docs/fq-rules.md#adaptive-slack)
      if (!latest) break;
      c.adaptive_slack_ppm = s.chance(25)   ? 0
                             : s.chance(60) ? s.one_of<std::uint32_t>({1, 10'000, 100'000, 250'000, 500'000, kPpm})
                                            : static_cast<std::uint32_t>(s.between(1, kPpm));
      c.adaptive_slack_max_ns =
          s.chance(60) ? s.one_of<std::uint32_t>({c.timer_slack_ns, 100'000, 1'000'000, 10'000'000, UINT32_MAX})
                       : static_cast<std::uint32_t>(s.between(c.timer_slack_ns, UINT32_MAX));
      if (c.adaptive_slack_max_ns < c.timer_slack_ns) c.adaptive_slack_max_ns = c.timer_slack_ns;
      break;
    default:
      // The device may change its max offload horizon too; keep offload valid.
      c.max_offload_horizon_us = s.one_of<std::uint32_t>({0, 1000, 1'000'000, s.u32()});
      if (latest && c.offload_horizon_us > c.max_offload_horizon_us) c.offload_horizon_us = c.max_offload_horizon_us;
      break;
  }
}

// A whole valid configuration: the surroundings (compat, HZ, the device's
// offload horizon, the flow cap), then every tc field.
inline FqConfig random_config(Source& s) {
  FqConfig c;
  c.compat = s.chance(30) ? Compat::linux_5_7 : Compat::latest;
  c.hz =
      s.chance(80) ? s.one_of<std::uint32_t>({100, 250, 300, 1000}) : static_cast<std::uint32_t>(s.between(1, 100000));
  c.max_offload_horizon_us = s.one_of<std::uint32_t>({0, 0, 1000, 1'000'000, s.u32()});
  c.max_flows = s.chance(60) ? 0 : s.chance(80) ? static_cast<std::uint32_t>(s.between(1, 64)) : s.u32();
  for (unsigned f = 0; f < kTcFields - 1; ++f)
    if (s.chance(50)) random_tc_field(c, f, s);  // else the default
  if (c.compat == Compat::latest && c.offload_horizon_us > c.max_offload_horizon_us)
    c.offload_horizon_us = c.max_offload_horizon_us;
  return c;
}

// A valid configuration `change()` must accept: `cur` with one to three tc
// fields redrawn (sometimes a limit that forces trimming of `qlen` queued
// packets).
inline FqConfig random_valid_change(const FqConfig& cur, std::uint32_t qlen, Source& s) {
  FqConfig c = cur;
  const std::uint64_t n = 1 + s.next(3);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (s.chance(15))
      c.limit = static_cast<std::uint32_t>(s.next(std::uint64_t{qlen} + 4));
    else
      random_tc_field(c, static_cast<unsigned>(s.next(kTcFields)), s);
  }
  return c;
}

// A configuration `change()` must refuse: `cur` with one field made invalid,
// or one of the surroundings change() may not alter (compat, HZ, max_flows).
inline FqConfig random_invalid_change(const FqConfig& cur, Source& s) {
  FqConfig c = cur;
  const bool latest = c.compat == Compat::latest;
  for (;;) {
    switch (s.next(11)) {
      case 0: c.buckets_log = static_cast<std::uint8_t>(s.coin() ? 0 : s.between(kMaxBucketsLog + 1, 255)); return c;
      case 1: c.quantum = s.coin() ? 0 : static_cast<std::uint32_t>(s.between(kMaxQuantum + 1, UINT32_MAX)); return c;
      case 2: c.hz = s.coin() ? 0 : static_cast<std::uint32_t>(s.between(100001, UINT32_MAX)); return c;
      case 3: c.compat = latest ? Compat::linux_5_7 : Compat::latest; return c;
      case 4: c.hz = c.hz == 1000 ? 250 : 1000; return c;
      case 5: c.max_flows = c.max_flows + 1 + static_cast<std::uint32_t>(s.next(100)); return c;
      case 6:
        if (!latest) break;
        c.initial_quantum = static_cast<std::uint32_t>(s.between(static_cast<std::uint64_t>(INT_MAX) + 1, UINT32_MAX));
        return c;
      case 7:
        if (!latest) break;
        c.priomap[s.next(16)] = static_cast<std::uint8_t>(s.between(kBands, 255));
        return c;
      case 8:
        if (!latest) break;
        c.weights[s.next(kBands)] =
            static_cast<std::int32_t>(s.coin() ? s.next(kMinWeight) : s.between(0x80000000ULL, UINT32_MAX));
        return c;
      case 9:  // the adaptive slack: a fraction above 100 %, or a max below timer_slack
        if (!latest) break;
        if (s.coin() || c.timer_slack_ns == 0) {
          c.adaptive_slack_ppm = static_cast<std::uint32_t>(s.between(kPpm + 1, UINT32_MAX));
        } else {
          c.adaptive_slack_ppm = static_cast<std::uint32_t>(s.between(1, kPpm));
          c.adaptive_slack_max_ns = static_cast<std::uint32_t>(s.next(c.timer_slack_ns));
        }
        return c;
      default:
        if (!latest || c.max_offload_horizon_us == UINT32_MAX) break;
        c.offload_horizon_us =
            static_cast<std::uint32_t>(s.between(std::uint64_t{c.max_offload_horizon_us} + 1, UINT32_MAX));
        return c;
    }
  }
}

}  // namespace ufq::diff
