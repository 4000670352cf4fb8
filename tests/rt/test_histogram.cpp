#include <gtest/gtest.h>

#include "pace/histogram.hpp"

using ufq::rt::Histogram;

TEST(Histogram, QuantilesWithinResolution) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100'000; ++v) h.record(v * 1000);
  EXPECT_EQ(h.count(), 100'000U);
  EXPECT_EQ(h.min(), 1000U);
  EXPECT_EQ(h.max(), 100'000'000U);
  const double p50 = static_cast<double>(h.quantile(0.5));
  EXPECT_NEAR(p50, 50e6, 50e6 * 0.04);
  const double p99 = static_cast<double>(h.quantile(0.99));
  EXPECT_NEAR(p99, 99e6, 99e6 * 0.04);
  EXPECT_EQ(h.quantile(1.0), h.max());
}

TEST(Histogram, BucketsAreMonotonic) {
  std::size_t prev = 0;
  for (std::uint64_t v = 0; v < (1ULL << 40); v = v * 3 / 2 + 1) {
    const std::size_t b = Histogram::bucket_of(v);
    EXPECT_GE(b, prev);
    EXPECT_GE(Histogram::bucket_upper(b), v);
    prev = b;
  }
  EXPECT_LT(Histogram::bucket_of(~0ULL), Histogram::kBuckets);
}

TEST(Histogram, NegativeIsEarly) {
  Histogram h;
  h.record_signed(-5);
  h.record_signed(7);
  EXPECT_EQ(h.early(), 1U);
  EXPECT_EQ(h.count(), 2U);
  EXPECT_EQ(h.min(), 0U);
}
