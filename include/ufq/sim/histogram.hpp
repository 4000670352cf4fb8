// A log-linear histogram of non-negative durations (ns): exact below 64 ns,
// then 64 linear steps per power of two (under 1.6 % relative error). Fixed
// size, no allocation per sample, deterministic quantiles.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace ufq::sim {

class Histogram {
 public:
  static constexpr unsigned kSubBits = 6;                 // 64 steps per octave
  static constexpr unsigned kSub = 1U << kSubBits;
  static constexpr unsigned kBuckets = kSub * (64 - kSubBits + 1);

  void add(std::uint64_t v, std::uint64_t times = 1) {
    if (times == 0) return;
    counts_[index(v)] += times;
    n_ += times;
    if (v > max_) max_ = v;
    sum_ += v * times;
  }
  void merge(const Histogram& o) {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    n_ += o.n_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
  }

  std::uint64_t count() const { return n_; }
  std::uint64_t max() const { return max_; }
  double mean() const { return n_ ? static_cast<double>(sum_) / static_cast<double>(n_) : 0.0; }

  // The smallest recorded bucket value v such that at least q of the samples
  // are <= v (bucket lower bound; the max for q = 1). 0 when empty.
  std::uint64_t quantile(double q) const {
    if (n_ == 0) return 0;
    if (q >= 1.0) return max_;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n_));
    std::uint64_t seen = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen > rank) return lower(i) > max_ ? max_ : lower(i);
    }
    return max_;
  }

  // Bucket access, for CDF plots.
  static std::uint64_t lower(unsigned i) {
    if (i < kSub) return i;
    const unsigned octave = i / kSub;  // >= 1
    const unsigned step = i % kSub;
    return (static_cast<std::uint64_t>(kSub + step)) << (octave - 1);
  }
  std::uint64_t bucket_count(unsigned i) const { return counts_[i]; }

 private:
  static unsigned index(std::uint64_t v) {
    if (v < kSub) return static_cast<unsigned>(v);
    const unsigned msb = 63U - static_cast<unsigned>(std::countl_zero(v));  // >= kSubBits
    const unsigned shift = msb - kSubBits;
    const unsigned step = static_cast<unsigned>((v >> shift) - kSub);
    return (shift + 1) * kSub + step;
  }

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t n_ = 0, max_ = 0, sum_ = 0;
};

}  // namespace ufq::sim
