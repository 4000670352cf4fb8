#include "ufq/tc/units.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "text.hpp"

namespace ufq::tc {
namespace {

constexpr double kU32Max = 4294967295.0;

// strtod reads a prefix of the word; returns the number and what follows it.
struct NumberAndSuffix {
  double value;
  std::string_view suffix;
};

std::optional<NumberAndSuffix> split_number(std::string_view word) {
  // The C conversions stop at a NUL, which must not hide the rest of the word.
  if (word.empty() || word.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string s(word);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return std::nullopt;
  return NumberAndSuffix{v, word.substr(static_cast<std::size_t>(end - s.c_str()))};
}

struct Suffix {
  std::string_view name;
  double scale;
};

// Multipliers to bit/s. "bps" is bytes per second, as in tc.
constexpr std::array<Suffix, 18> kRateSuffixes{{
    {"bit", 1.0},
    {"kibit", 1024.0},
    {"kbit", 1e3},
    {"mibit", 1024.0 * 1024.0},
    {"mbit", 1e6},
    {"gibit", 1024.0 * 1024.0 * 1024.0},
    {"gbit", 1e9},
    {"tibit", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {"tbit", 1e12},
    {"bps", 8.0},
    {"kibps", 8.0 * 1024.0},
    {"kbps", 8e3},
    {"mibps", 8.0 * 1024.0 * 1024.0},
    {"mbps", 8e6},
    {"gibps", 8.0 * 1024.0 * 1024.0 * 1024.0},
    {"gbps", 8e9},
    {"tibps", 8.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {"tbps", 8e12},
}};

std::string printf_double(const char* format, double v) {
  std::array<char, 64> buf{};
  const int n = std::snprintf(buf.data(), buf.size(), format, v);
  if (n < 0) return {};
  return std::string(buf.data(), std::min(static_cast<std::size_t>(n), buf.size() - 1));
}

}  // namespace

std::optional<std::uint32_t> parse_unsigned(std::string_view word, int base) {
  if (word.empty() || word.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string s(word);
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(s.c_str(), &end, base);
  if (end != s.c_str() + s.size() || errno != 0) return std::nullopt;
  // strtoul negates "-N" in unsigned arithmetic; anything but "-0" lands above 2^32.
  if (v > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::optional<std::int32_t> parse_integer(std::string_view word, int base) {
  if (word.empty() || word.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string s(word);
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, base);
  if (end != s.c_str() + s.size() || errno != 0) return std::nullopt;
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
    return std::nullopt;
  return static_cast<std::int32_t>(v);
}

std::optional<double> parse_rate_bits(std::string_view word) {
  const auto num = split_number(word);
  if (!num) return std::nullopt;
  double scale = 1.0;  // no suffix: bit/s
  if (!num->suffix.empty()) {
    const Suffix* found = nullptr;
    for (const auto& s : kRateSuffixes)
      if (iequals(num->suffix, s.name)) found = &s;
    if (found == nullptr) return std::nullopt;
    scale = found->scale;
  }
  const double bits = num->value * scale;
  if (!std::isfinite(bits) || bits < 0.0) return std::nullopt;
  return bits + 0.0;  // no negative zero
}

std::optional<std::uint32_t> parse_rate(std::string_view word) {
  const auto bits = parse_rate_bits(word);
  if (!bits) return std::nullopt;
  // tc stores bits / 8 in a u32, dropping a fraction of a byte (12345bit -> 1543 B/s,
  // as Linux 6.1 + iproute2 6.1 show); it refuses only what does not fit.
  const double bytes = std::trunc(*bits / 8.0);
  if (bytes > kU32Max) return std::nullopt;
  return static_cast<std::uint32_t>(bytes);
}

std::optional<double> parse_percent(std::string_view word) {
  const auto num = split_number(word);
  if (!num || num->suffix != "%") return std::nullopt;
  if (!(num->value >= 0.0 && num->value <= 100.0)) return std::nullopt;  // also refuses NaN
  return num->value / 100.0 + 0.0;
}

std::optional<double> parse_time_value(std::string_view word, TimeUnit unit) {
  const auto num = split_number(word);
  if (!num) return std::nullopt;
  const bool ns = unit == TimeUnit::ns;
  const std::string_view sfx = num->suffix;
  double scale = 0.0;
  if (sfx.empty())
    scale = 1.0;
  else if (iequals(sfx, "s") || iequals(sfx, "sec") || iequals(sfx, "secs"))
    scale = ns ? 1e9 : 1e6;
  else if (iequals(sfx, "ms") || iequals(sfx, "msec") || iequals(sfx, "msecs"))
    scale = ns ? 1e6 : 1e3;
  else if (iequals(sfx, "us") || iequals(sfx, "usec") || iequals(sfx, "usecs"))
    scale = ns ? 1e3 : 1.0;
  else if (ns && (iequals(sfx, "ns") || iequals(sfx, "nsec") || iequals(sfx, "nsecs")))
    scale = 1.0;
  else
    return std::nullopt;
  const double v = num->value * scale;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint32_t> parse_time_us(std::string_view word) {
  const auto v = parse_time_value(word, TimeUnit::us);
  if (!v) return std::nullopt;
  const double t = std::trunc(*v);
  if (t < 0.0 || t > kU32Max) return std::nullopt;
  return static_cast<std::uint32_t>(t);
}

std::optional<std::int64_t> parse_time64_ns(std::string_view word) {
  const auto v = parse_time_value(word, TimeUnit::ns);
  if (!v) return std::nullopt;
  const double t = std::trunc(*v);
  constexpr double kTwo63 = 9223372036854775808.0;
  if (t < -kTwo63 || t >= kTwo63) return std::nullopt;
  return static_cast<std::int64_t>(t);
}

std::string format_g3(double value) { return printf_double("%.3g", value); }

std::string format_size(std::uint64_t bytes) {
  // Nearest whole number of `unit` and the distance to it, without overflow.
  auto nearest = [bytes](std::uint64_t unit, std::uint64_t& distance) {
    const std::uint64_t q = bytes / unit;
    const std::uint64_t r = bytes % unit;
    if (r > unit / 2) {
      distance = unit - r;
      return q + 1;
    }
    distance = r;
    return q;
  };
  struct Step {
    std::uint64_t unit;
    std::uint64_t tolerance;  // strictly less than this far from a whole unit
    const char* name;
  };
  constexpr std::array<Step, 3> kSteps{{
      {1ULL << 30, 1024, "Gb"},
      {1ULL << 20, 1024, "Mb"},
      {1ULL << 10, 16, "Kb"},
  }};
  for (const auto& step : kSteps) {
    if (bytes < step.unit) continue;
    std::uint64_t distance = 0;
    const std::uint64_t n = nearest(step.unit, distance);
    if (distance < step.tolerance) return printf_double("%g", static_cast<double>(n)) + step.name;
  }
  return std::to_string(bytes) + "b";
}

std::string format_rate(std::uint64_t bytes_per_sec) {
  constexpr std::array<const char*, 5> kUnits{"", "K", "M", "G", "T"};
  std::uint64_t rate = bytes_per_sec * 8;  // wraps like tc's 64-bit shift for absurd values
  std::size_t i = 0;
  for (; i + 1 < kUnits.size(); ++i) {
    if (rate < 1000) break;
    // Keep precision: a value not divisible by 1000 stays in this unit while below 1e6.
    if (rate % 1000 != 0 && rate < 1000 * 1000) break;
    rate /= 1000;
  }
  return printf_double("%.0f", static_cast<double>(rate)) + kUnits[i] + "bit";
}

std::string format_time_us(std::uint32_t usec) {
  const double t = usec;
  if (t >= 1e6) return format_g3(t / 1e6) + "s";
  if (t >= 1e3) return format_g3(t / 1e3) + "ms";
  return std::to_string(usec) + "us";
}

std::string format_time64_ns(std::int64_t nsec) {
  const auto t = static_cast<double>(nsec);
  if (t >= 1e9) return format_g3(t / 1e9) + "s";
  if (t >= 1e6) return format_g3(t / 1e6) + "ms";
  if (t >= 1e3) return format_g3(t / 1e3) + "us";
  return std::to_string(nsec) + "ns";
}

}  // namespace ufq::tc
