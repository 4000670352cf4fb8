// A log-linear histogram of nanosecond values (32 sub-buckets per power of
// two: about 3 % resolution), for lateness and arrival gaps. Single-threaded;
// merge() combines per-thread copies.
#pragma once

#include <array>
#include <cstdint>

namespace ufq::rt {

class Histogram {
 public:
  void record(std::uint64_t value);
  // Negative values (early) are counted in early() and recorded as 0.
  void record_signed(std::int64_t value);
  void merge(const Histogram& other);
  void clear() { *this = Histogram{}; }

  std::uint64_t count() const { return count_; }
  std::uint64_t early() const { return early_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The value at quantile q (0..1): an upper bound within the bucket's
  // resolution, clamped to [min, max]. 0 when empty.
  std::uint64_t quantile(double q) const;

  static constexpr std::size_t kSubBits = 5;
  static constexpr std::size_t kBuckets = 64 + (64 - 6) * (std::size_t{1} << kSubBits);
  static std::size_t bucket_of(std::uint64_t v);
  static std::uint64_t bucket_upper(std::size_t index);

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t early_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
  std::uint64_t sum_ = 0;
};

}  // namespace ufq::rt
