// Time and rate units shared by every layer.
#pragma once

#include <cstdint>

namespace ufq {

// Nanoseconds on a monotonic clock chosen by the caller (virtual time in the
// simulator, CLOCK_MONOTONIC in the real-time pacer). The scheduler never reads
// a clock: every operation takes `now` as an argument.
using Time = std::uint64_t;

inline constexpr Time kNsecPerUsec = 1'000;
inline constexpr Time kNsecPerMsec = 1'000'000;
inline constexpr Time kNsecPerSec = 1'000'000'000;

// "No time": an empty throttled set, an unarmed timer (the kernel's ~0ULL).
inline constexpr Time kNever = ~Time{0};

// Rates are bytes per second. All bits set means "unlimited", as in the kernel.
using Rate = std::uint64_t;
inline constexpr Rate kUnlimitedRate = ~Rate{0};

// Wrap-safe "a is strictly later than b" (the kernel's time_after on jiffies).
constexpr bool time_after(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::int64_t>(b - a) < 0;
}

}  // namespace ufq
