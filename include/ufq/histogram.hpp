// The one histogram of durations (ns) that the simulator and the `ufq pace`
// harness both record into, so that a simulated and a measured percentile are
// the same statistic (docs/simulator.md, docs/pacer.md "Measurements").
//
// Buckets are log-linear: exact for values below 64, then 64 equal steps per
// power of two. A bucket [lower, next lower) is less than 1/64 (1.56 %) of its
// lower bound wide.
//
// Quantile (the one definition, used for every pNN the project prints):
// nearest rank. For 0 < q < 1 with n samples, rank r = ceil(q * n) (at least 1);
// quantile(q) is the lower bound of the bucket holding the r-th smallest sample,
// clamped to [min(), max()]. So, with x_r that sample,
//     x_r * 64/65 < quantile(q) <= x_r     (exact when x_r < 64 or at min/max),
// quantile(q <= 0) = min(), quantile(q >= 1) = max(), and 0 when empty.
//
// Fixed size (about 30 KiB), no allocation, add() is branch-light and inline
// (the simulator adds one sample per packet). Not thread-safe: keep one per
// thread and merge().
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ufq {

class Histogram {
 public:
  static constexpr unsigned kSubBits = 6;  // 64 steps per power of two
  static constexpr unsigned kSub = 1U << kSubBits;
  static constexpr unsigned kBuckets = kSub * (64 - kSubBits + 1);

  // Records `v` `times` times.
  void add(std::uint64_t v, std::uint64_t times = 1) {
    if (times == 0) return;
    counts_[index(v)] += times;
    n_ += times;
    sum_ += v * times;
    if (v > max_) max_ = v;
    if (v < min_) min_ = v;
  }
  // Records a signed duration: a negative one (early) is counted in early()
  // and recorded as 0.
  void add_signed(std::int64_t v) {
    if (v < 0) {
      ++early_;
      add(0);
    } else {
      add(static_cast<std::uint64_t>(v));
    }
  }
  void merge(const Histogram& other);
  void clear() { *this = Histogram{}; }

  std::uint64_t count() const { return n_; }
  std::uint64_t early() const { return early_; }  // add_signed() values below 0
  std::uint64_t min() const { return n_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return n_ ? static_cast<double>(sum_) / static_cast<double>(n_) : 0.0; }

  // Nearest-rank quantile as defined above; q outside [0, 1] is clamped.
  std::uint64_t quantile(double q) const;

  // Buckets, for CDF plots: index of a value, lower bound of a bucket.
  // Branch-free (one per packet in the simulator): with shift = the bits
  // below the 6 after the leading one (0 for v < 64), the index is
  // (shift + 1) * 64 + ((v >> shift) - 64) = (v >> shift) + shift * 64.
  static unsigned index(std::uint64_t v) {
    const unsigned shift = static_cast<unsigned>(std::bit_width(v | kSub)) - (kSubBits + 1);
    return static_cast<unsigned>(v >> shift) + (shift << kSubBits);
  }
  static std::uint64_t lower(unsigned i) {
    if (i < kSub) return i;
    const unsigned octave = i / kSub;  // >= 1
    const unsigned step = i % kSub;
    return static_cast<std::uint64_t>(kSub + step) << (octave - 1);
  }
  std::uint64_t bucket_count(unsigned i) const { return counts_[i]; }

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t n_ = 0, sum_ = 0, early_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0}, max_ = 0;
};

}  // namespace ufq
