// The traffic models' registry (the list is generated from the files in
// sim/src/traffic/, see sim/CMakeLists.txt) and the checks of their settings.
#include "ufq/sim/traffic.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {

// Generated: one entry per sim/src/traffic/<name>.cpp.
std::vector<const TrafficModelInfo*> registered_traffic_models();

namespace detail {
// c = 1 + (j + 1/2) / 128 (exact), 1 / c and ln c rounded to nearest by the
// compiler's and the library's double arithmetic (within an ulp: the bound in
// traffic.hpp allows ten).
const std::array<NegLogEntry, 128> kNegLogTable = [] {
  std::array<NegLogEntry, 128> t{};
  for (int j = 0; j < 128; ++j) {
    const double c = 1.0 + (j + 0.5) / 128.0;
    t[static_cast<std::size_t>(j)] = NegLogEntry{c, 1.0 / c, std::log(c)};
  }
  return t;
}();

namespace {
// N lanes in GCC's (and Clang's) vector types: SSE2 pairs on x86-64, or AVX2
// quadruples in the function compiled for it (exponential_words_avx2, x86
// only; elsewhere the pairs).
// (A vector attribute on an alias template is dropped, so one per width.)
template <int N>
struct Lanes;
template <>
struct Lanes<2> {
  typedef std::uint64_t U __attribute__((vector_size(16)));
  typedef double D __attribute__((vector_size(16)));
  typedef std::uint32_t U32 __attribute__((vector_size(8)));
  typedef std::int32_t I32 __attribute__((vector_size(8)));
};
template <>
struct Lanes<4> {
  typedef std::uint64_t U __attribute__((vector_size(32)));
  typedef double D __attribute__((vector_size(32)));
  typedef std::uint32_t U32 __attribute__((vector_size(16)));
  typedef std::int32_t I32 __attribute__((vector_size(16)));
};
template <int N>
using Vu = typename Lanes<N>::U;
template <int N>
using Vd = typename Lanes<N>::D;
template <int N>
using Vu32 = typename Lanes<N>::U32;
template <int N>
using Vi32 = typename Lanes<N>::I32;
using V2u = Vu<2>;

// The helpers below pass 32-byte vectors by value; they are internal and
// always inlined (into exponential_words_avx2 for four lanes), so no call
// with the default target's vector ABI exists: -Wpsabi's note does not apply.
// (Off to the end of the file: GCC reports the instantiations there. The
// casts are __builtin_bit_cast, not std::bit_cast, which would be a
// default-target function taking such a vector.)
#pragma GCC diagnostic ignored "-Wpsabi"
template <int N>
[[gnu::always_inline]] inline Vu<N> load(const std::uint64_t* p) {
  Vu<N> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
V2u load2(const std::uint64_t* p) { return load<2>(p); }
void store2(std::uint64_t* p, V2u v) { std::memcpy(p, &v, sizeof v); }

// Below this mean every product's q + d is under 2^31 (q <= 53 ln 2 * mean <
// 37 * 2^25) and q - d above -1 (q >= -1e-16 * mean, d < 2^-14): both
// truncations fit 32 bits and the lower one is not negative.
constexpr double kNarrowMean = 0x1p25;

// a's lanes (each >= 0) zero-extended to 64 bits, by interleaving with zeros.
[[gnu::always_inline]] inline Vu<2> widen(Vi32<2> a) {
  return __builtin_bit_cast(Vu<2>, __builtin_shufflevector(__builtin_bit_cast(Vu32<2>, a), Vu32<2>{}, 0, 2, 1, 3));
}
[[gnu::always_inline]] inline Vu<4> widen(Vi32<4> a) {
  return __builtin_bit_cast(Vu<4>, __builtin_shufflevector(__builtin_bit_cast(Vu32<4>, a), Vu32<4>{}, 0, 4, 1, 5, 2, 6, 3, 7));
}

// neg_log_approx and exponential_of's rule, lane by lane in the same order
// of operations (the same doubles); `err` = kNegLogError * mean. kNarrow:
// mean < kNarrowMean, the truncations in 32-bit lanes.
template <int N, bool kNarrow>
[[gnu::always_inline]] inline void exponential_lanes(Vd<N> x, double mean, double err, Time* out) {
  const Vu<N> bits = __builtin_bit_cast(Vu<N>, x);
  const Vu<N> mant = bits & ((std::uint64_t{1} << 52) - 1);
  // The exponent field (< 2^11) as a double, exactly: 2^52 + field, less 2^52 + 1023.
  const Vd<N> e = __builtin_bit_cast(Vd<N>, (bits >> 52) | 0x4330000000000000ULL) - (0x1p52 + 1023.0);
  const Vd<N> m = __builtin_bit_cast(Vd<N>, mant | 0x3FF0000000000000ULL);
  const Vu<N> j = mant >> 45;
  Vd<N> c, inv_c, log_c;
  for (int l = 0; l < N; ++l) {
    const NegLogEntry& t = kNegLogTable[j[l]];
    c[l] = t.c, inv_c[l] = t.inv_c, log_c[l] = t.log_c;
  }
  const Vd<N> r = (m - c) * inv_c;
  const Vd<N> log1p_r = r * (1 - r * (0.5 - r * (1.0 / 3 - r * (0.25 - r * 0.2))));
  const Vd<N> q = -(e * 0.6931471805599453 + (log_c + log1p_r)) * mean;
  const Vd<N> d = err + q * 0x1p-48;
  const Vd<N> hi = q + d, lo = q - d;
  if constexpr (kNarrow) {
    const Vi32<N> a = __builtin_convertvector(lo, Vi32<N>), b = __builtin_convertvector(hi, Vi32<N>);
    const Vi32<N> differ = a != b;
    bool all_same = true;
    for (int l = 0; l < N; ++l) all_same &= differ[l] == 0;
    if (all_same) [[likely]] {  // every lane
      const Vu<N> t = widen(a) + 1;
      std::memcpy(out, &t, sizeof t);
      return;
    }
  }
  for (int l = 0; l < N; ++l) {
    if (hi[l] < 0x1p62) [[likely]] {
      const auto a = static_cast<std::int64_t>(lo[l]), b = static_cast<std::int64_t>(hi[l]);
      if (a == b) [[likely]] {
        out[l] = static_cast<Time>(a) + 1;
        continue;
      }
    }
    out[l] = Rng::exponential_std(x[l], mean);
  }
}
// Rng::exponential's draws from n (a multiple of N) generator words:
// tempered, to 1 - unit(), then exponential_lanes; stored as running sums.
template <int N, bool kNarrow>
[[gnu::always_inline]] inline void exponentials_of_words(const std::uint64_t* x, Time* out, std::size_t n,
                                                         double mean) {
  const double err = kNegLogError * mean;
  Time sum = 0;
  for (std::size_t i = 0; i < n; i += N) {
    Vu<N> z = load<N>(x + i);
    z ^= (z >> 29) & 0x5555555555555555ULL;
    z ^= (z << 17) & 0x71D67FFFEDA60000ULL;
    z ^= (z << 37) & 0xFFF7EEE000000000ULL;
    z ^= z >> 43;
    // 1 - unit(): the top 53 bits k as a double, exactly (its high and low
    // 32 bits through 2^84 and 2^52), times 2^-53, from 1.
    const Vu<N> k = z >> 11;
    const Vd<N> k_d = (__builtin_bit_cast(Vd<N>, (k >> 32) | 0x4530000000000000ULL) - (0x1p84 + 0x1p52)) +
                      __builtin_bit_cast(Vd<N>, (k & 0xFFFFFFFFULL) | 0x4330000000000000ULL);
    exponential_lanes<N, kNarrow>(1.0 - k_d * (1.0 / 9007199254740992.0), mean, err, out + i);
    for (std::size_t l = 0; l < N; ++l) out[i + l] = sum += out[i + l];
  }
}

void exponential_words_sse2(const std::uint64_t* x, Time* out, std::size_t n, double mean) {
  if (mean < kNarrowMean)
    exponentials_of_words<2, true>(x, out, n, mean);
  else
    exponentials_of_words<2, false>(x, out, n, mean);
}
#if defined(__x86_64__) || defined(__i386__)
// The same four lanes at a time. The integers are the same as the pairs'
// (every lane's doubles come from the same operations, and the rule gives
// std::log's integer either way): a third fewer instructions for the other
// interrupts' draws, which take about a twentieth of the main job's time.
[[gnu::target("avx2")]] void exponential_words_avx2(const std::uint64_t* x, Time* out, std::size_t n, double mean) {
  if (mean < kNarrowMean)
    exponentials_of_words<4, true>(x, out, n, mean);
  else
    exponentials_of_words<4, false>(x, out, n, mean);
}
#endif

template <bool kNarrow>
void exponential_pairs(const double* x, Time* out, std::size_t n, double mean_ns) {
  const double err = kNegLogError * mean_ns;
  for (std::size_t i = 0; i + 2 <= n; i += 2) exponential_lanes<2, kNarrow>(Vd<2>{x[i], x[i + 1]}, mean_ns, err, out + i);
}
}  // namespace

bool exponential_words_wide() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool wide = __builtin_cpu_supports("avx2");
  return wide;
#else
  return false;  // the pairs: GCC's vector types in the target's own registers
#endif
}

void exponential_words(const std::uint64_t* x, Time* out, std::size_t n, double mean_ns, bool wide) {
#if defined(__x86_64__) || defined(__i386__)
  if (wide && exponential_words_wide()) return exponential_words_avx2(x, out, n, mean_ns);
#else
  (void)wide;
#endif
  exponential_words_sse2(x, out, n, mean_ns);
}

void exponential_batch(const double* x, Time* out, std::size_t n, double mean_ns) {
  if (mean_ns < kNarrowMean)
    exponential_pairs<true>(x, out, n, mean_ns);
  else
    exponential_pairs<false>(x, out, n, mean_ns);
  if (n % 2 != 0) out[n - 1] = Rng::exponential_of(x[n - 1], mean_ns);
}
}  // namespace detail

// std::mt19937_64's parameters (the standard's: [rand.predef]).
namespace {
constexpr std::size_t kMtShift = 156;
constexpr std::uint64_t kMtUpper = ~std::uint64_t{0} << 31, kMtLower = ~kMtUpper;
constexpr std::uint64_t kMtMatrix = 0xB5026F5AA96619E9ULL;
}  // namespace

ExponentialDraws::ExponentialDraws(std::uint64_t seed, double mean_ns) : mean_(mean_ns) {
  x_[0] = seed;
  for (std::size_t i = 1; i < kWords; ++i) x_[i] = 6364136223846793005ULL * (x_[i - 1] ^ (x_[i - 1] >> 62)) + i;
}

void ExponentialDraws::refill() {
  using detail::V2u;
  std::uint64_t* const x = x_.data();
  // x[i] = x[i + 156 mod 312] ^ twist(x[i], x[i + 1]) in order, two at a
  // time: a pair reads its x[i + 1] (and x[i + 2]) before either is new, and
  // x[i + 156 mod 312] is new exactly when the sequential order has it new.
  auto twist = [x](std::size_t i, std::size_t j) {
    const V2u a = detail::load2(x + i), b = detail::load2(x + i + 1);
    const V2u y = (a & kMtUpper) | (b & kMtLower);
    const V2u mag = (V2u{} - (b & 1)) & kMtMatrix;
    detail::store2(x + i, detail::load2(x + j) ^ (y >> 1) ^ mag);
  };
  for (std::size_t i = 0; i < kMtShift; i += 2) twist(i, i + kMtShift);
  x[kWords] = x[0];  // the last word's x[i + 1] is x[0]'s new value
  for (std::size_t i = kMtShift; i < kWords; i += 2) twist(i, i - kMtShift);
  detail::exponential_words(x, sum_.data(), kWords, mean_, true);
  i_ = 0;
}

std::uint64_t ExponentialDraws::arrivals_until(Time& at, Time now) {
  std::uint64_t n = 0;
  Time t = at;
  while (t <= now) {
    if (i_ == kWords) refill();
    // Draw k (from i_) is taken when t + sum_[k - 1] - base <= now, that is
    // while the running sum before it is at most `limit`: every draw up to
    // and including the first whose sum exceeds it.
    const Time base = i_ ? sum_[i_ - 1] : 0;
    const Time limit = now - t + base;
    if (sum_[kWords - 1] <= limit) {  // the whole block
      n += kWords - i_;
      t += sum_[kWords - 1] - base;
      i_ = kWords;
      continue;
    }
    const Time* const p = std::upper_bound(sum_.data() + i_, sum_.data() + kWords, limit);
    const auto m = static_cast<std::size_t>(p - sum_.data());
    n += m - i_ + 1;
    t += *p - base;
    i_ = m + 1;
  }
  at = t;
  return n;
}

std::uint32_t TrafficSource::flows(const SimConfig& cfg) const { return cfg.flows; }

bool TrafficSource::own_next(TrafficFlow&, Time&, std::uint32_t&) {
  throw std::logic_error("traffic source built with OwnPackets does not override own_next()");
}

const std::vector<const TrafficModelInfo*>& traffic_models() {
  static const std::vector<const TrafficModelInfo*> models = [] {
    auto m = registered_traffic_models();
    std::sort(m.begin(), m.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    return m;
  }();
  return models;
}

const TrafficModelInfo* find_traffic_model(std::string_view name) {
  for (const TrafficModelInfo* m : traffic_models())
    if (m->name == name) return m;
  return nullptr;
}

std::string traffic_model_names() {
  const auto& all = traffic_models();
  std::string s;
  for (std::size_t i = 0; i < all.size(); ++i)
    s += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i]->name;
  return s;
}

std::string format_time(Time ns) {
  struct Unit {
    Time ns;
    const char* suffix;
  };
  for (const Unit u : {Unit{kNsecPerSec, "s"}, Unit{kNsecPerMsec, "ms"}, Unit{kNsecPerUsec, "us"}})
    if (ns >= u.ns && ns % u.ns == 0) return std::to_string(ns / u.ns) + u.suffix;
  return std::to_string(ns) + "ns";
}

TrafficValue traffic_setting(const TrafficModelInfo& model, const TrafficSettings& settings, std::string_view name) {
  const auto decl = std::find_if(model.params.begin(), model.params.end(),
                                 [&](const TrafficParam& p) { return p.name == name; });
  if (decl == model.params.end())
    throw SimConfigError(std::string(name), "", "no such setting of traffic " + model.name);
  const auto given = settings.find(name);
  switch (decl->type) {
    case TrafficParam::Type::time: {
      const std::string range = "a time from " + format_time(decl->min) + " to " + format_time(decl->max);
      if (given == settings.end()) return decl->default_time;
      const Time* t = std::get_if<Time>(&given->second);
      if (!t) throw SimConfigError(decl->name, std::get<std::string>(given->second), range);
      if (*t < decl->min || *t > decl->max) throw SimConfigError(decl->name, format_time(*t), range);
      return *t;
    }
    case TrafficParam::Type::count: {
      const std::string range = "an integer from " + std::to_string(decl->min) + " to " + std::to_string(decl->max);
      if (given == settings.end()) return decl->default_time;
      const Time* n = std::get_if<Time>(&given->second);
      if (!n) throw SimConfigError(decl->name, std::get<std::string>(given->second), range);
      if (*n < decl->min || *n > decl->max) throw SimConfigError(decl->name, std::to_string(*n), range);
      return *n;
    }
    case TrafficParam::Type::file: {
      const std::string* path = given == settings.end() ? nullptr : std::get_if<std::string>(&given->second);
      if (!path || path->empty())
        throw SimConfigError(decl->name, "", "a file to read (traffic " + model.name + " needs one)");
      return *path;
    }
  }
  return {};
}

}  // namespace ufq::sim
