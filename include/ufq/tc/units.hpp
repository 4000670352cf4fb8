// Numbers, sizes, rates and times as iproute2's tc reads and prints them.
//
// Parsing follows tc's rules exactly where they are defined (docs/fq-rules.md#tc-parsing-and-units) and
// refuses, instead of wrapping, values tc would convert with undefined
// behaviour (negative or too large times). Printing reproduces tc's rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ufq::tc {

// ---------------------------------------------------------------- parsing --

// An unsigned 32-bit integer the way strtoul(base) reads it; base 0 takes
// "0x" hex and a leading 0 as octal ("010" is 8). The whole word must be the
// number: no unit suffix. (tc's get_unsigned.)
std::optional<std::uint32_t> parse_unsigned(std::string_view word, int base = 0);

// A signed 32-bit integer the way strtol(base) reads it (tc's get_integer).
std::optional<std::int32_t> parse_integer(std::string_view word, int base = 10);

// A rate in bit/s: a number (fractions and exponents allowed) followed by an
// optional case-insensitive suffix: bit, kbit, mbit, gbit, tbit (powers of
// 1000), kibit, mibit, gibit, tibit (powers of 1024), bps, kbps, mbps, gbps,
// tbps, kibps, mibps, gibps, tibps (BYTES per second, x8). No suffix = bit/s.
// Refuses negative, infinite and NaN values.
std::optional<double> parse_rate_bits(std::string_view word);

// tc's 32-bit rate in bytes/s: parse_rate_bits / 8 with the fraction of a
// byte dropped, as iproute2 does ("12345" bit/s = 1543 B/s, shown back as
// 12344bit by Linux 6.1's tc); more than 4294967295 B/s is refused.
std::optional<std::uint32_t> parse_rate(std::string_view word);

// A percentage "P%" (P a decimal number, 0 <= P <= 100) as a fraction 0..1.
std::optional<double> parse_percent(std::string_view word);

// The unit a bare number is taken in, which is also the unit of the result.
enum class TimeUnit : std::uint8_t { ns, us };

// A time: a number (fractions allowed) and an optional case-insensitive
// suffix s|sec|secs, ms|msec|msecs, us|usec|usecs, and (only when `unit` is
// ns) ns|nsec|nsecs. The value is returned in `unit`, not truncated.
std::optional<double> parse_time_value(std::string_view word, TimeUnit unit);

// tc's get_time: microseconds, bare number = us, truncated toward zero; must
// fit an unsigned 32-bit count (refill_delay, ce_threshold, horizon,
// offload_horizon).
std::optional<std::uint32_t> parse_time_us(std::string_view word);

// tc's get_time64: signed 64-bit nanoseconds, bare number = ns, truncated.
std::optional<std::int64_t> parse_time64_ns(std::string_view word);

// --------------------------------------------------------------- printing --

// printf("%.3g"): three significant digits, trailing zeros dropped.
std::string format_g3(double value);

// A byte count: "<n>Gb" when >= 1 GiB and within 1 KiB of a whole GiB,
// "<n>Mb" when >= 1 MiB and within 1 KiB of a whole MiB, "<n>Kb" when
// >= 1 KiB and within 16 bytes of a whole KiB, else "<n>b" (3028 -> 3028b,
// 10240 -> 10Kb, 1048576 -> 1Mb, 2147483648 -> 2Gb).
std::string format_size(std::uint64_t bytes);

// A rate given in bytes/s, printed in bit/s with 1000-based units:
// 68750 -> 550Kbit, 187500 -> 1500Kbit, 125000000 -> 1Gbit.
std::string format_rate(std::uint64_t bytes_per_sec);

// A time in microseconds: >= 1 s -> "%.3gs", >= 1 ms -> "%.3gms", else
// "<n>us" (40000 -> 40ms, 1500 -> 1.5ms, 4294967295 -> 4.29e+03s).
std::string format_time_us(std::uint32_t usec);

// A time in nanoseconds: "%.3gs", "%.3gms", "%.3gus" or "<n>ns"
// (10000 -> 10us, 8570 -> 8.57us, 100 -> 100ns).
std::string format_time64_ns(std::int64_t nsec);

}  // namespace ufq::tc
