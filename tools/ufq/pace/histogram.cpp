#include "pace/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ufq::rt {

std::size_t Histogram::bucket_of(std::uint64_t v) {
  if (v < 64) return static_cast<std::size_t>(v);
  const auto e = static_cast<std::size_t>(63 - std::countl_zero(v));  // 6..63
  const auto top = static_cast<std::size_t>(v >> (e - kSubBits));      // 32..63
  return 64 + (e - 6) * (std::size_t{1} << kSubBits) + (top - (std::size_t{1} << kSubBits));
}

std::uint64_t Histogram::bucket_upper(std::size_t index) {
  if (index < 64) return index;
  const std::size_t j = index - 64;
  const std::size_t e = j / (std::size_t{1} << kSubBits) + 6;
  const std::uint64_t top = j % (std::size_t{1} << kSubBits) + (std::uint64_t{1} << kSubBits);
  const std::size_t shift = e - kSubBits;
  if (top + 1 >= (std::uint64_t{1} << (64 - shift))) return ~std::uint64_t{0};
  return ((top + 1) << shift) - 1;
}

void Histogram::record(std::uint64_t value) {
  ++buckets_[bucket_of(value)];
  ++count_;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void Histogram::record_signed(std::int64_t value) {
  if (value < 0) {
    ++early_;
    record(0);
  } else {
    record(static_cast<std::uint64_t>(value));
  }
}

void Histogram::merge(const Histogram& o) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  early_ += o.early_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

std::uint64_t Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(bucket_upper(i), min(), max_);
  }
  return max_;
}

}  // namespace ufq::rt
