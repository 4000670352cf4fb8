#include "ufq/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace ufq {

void Histogram::merge(const Histogram& o) {
  for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  n_ += o.n_;
  sum_ += o.sum_;
  early_ += o.early_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

std::uint64_t Histogram::quantile(double q) const {
  if (n_ == 0) return 0;
  if (!(q > 0.0)) return min_;  // also NaN
  if (q >= 1.0) return max_;
  // Nearest rank: the ceil(q * n)-th smallest sample (1-based).
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n_)));
  rank = std::clamp<std::uint64_t>(rank, 1, n_);
  std::uint64_t seen = 0;
  for (unsigned i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(lower(i), min_, max_);
  }
  return max_;
}

}  // namespace ufq
