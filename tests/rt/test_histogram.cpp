// ufq::Histogram (include/ufq/histogram.hpp): the nearest-rank quantile on
// log-linear buckets, and that the simulator's report and the `ufq pace`
// report print the same quantiles for the same samples.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "pace/pace_run.hpp"
#include "pace/report.hpp"
#include "sim/report.hpp"
#include "ufq/histogram.hpp"

using ufq::Histogram;

namespace {

// The r-th smallest (1-based) sample, r = max(1, ceil(q n)).
std::uint64_t nearest_rank(std::vector<std::uint64_t> v, double q) {
  std::sort(v.begin(), v.end());
  auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  r = std::clamp<std::size_t>(r, 1, v.size());
  return v[r - 1];
}

std::vector<std::uint64_t> samples() {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(9.0, 1.5);  // ~8 us median, long tail
  std::vector<std::uint64_t> v;
  for (int i = 0; i < 10'000; ++i) v.push_back(static_cast<std::uint64_t>(d(rng)));
  v.push_back(3);  // something in the exact range
  return v;
}

}  // namespace

TEST(Histogram, NearestRankWithinOneBucket) {
  const auto v = samples();
  Histogram h;
  for (auto x : v) h.add(x);
  for (double q : {0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999}) {
    const std::uint64_t exact = nearest_rank(v, q);
    const std::uint64_t got = h.quantile(q);
    EXPECT_LE(got, exact) << "q " << q;
    EXPECT_GT(static_cast<double>(got), static_cast<double>(exact) * 64.0 / 65.0) << "q " << q;
    EXPECT_EQ(Histogram::index(got), Histogram::index(exact)) << "q " << q;
  }
  EXPECT_EQ(h.quantile(0.0), 3U);
  EXPECT_EQ(h.quantile(1.0), h.max());
  EXPECT_EQ(h.max(), *std::max_element(v.begin(), v.end()));
}

// Nearest rank, not "the sample after q n": p50 of {10, 20} is 10, p51 is 20.
TEST(Histogram, RankIsCeilOfQn) {
  Histogram h;
  h.add(10);
  h.add(20);
  EXPECT_EQ(h.quantile(0.5), 10U);
  EXPECT_EQ(h.quantile(0.51), 20U);
  Histogram e;
  EXPECT_EQ(e.quantile(0.5), 0U);
  EXPECT_EQ(e.min(), 0U);
}

// The bucket's lower bound is clamped to the observed range.
TEST(Histogram, ClampedToMinAndMax) {
  Histogram h;
  h.add(1001, 5);  // bucket [1000, 1008)
  EXPECT_EQ(h.quantile(0.5), 1001U);
  EXPECT_EQ(h.min(), 1001U);
}

TEST(Histogram, BucketsAreMonotonicAndTight) {
  unsigned prev = 0;
  for (std::uint64_t v = 0; v < (1ULL << 62); v = v * 3 / 2 + 1) {
    const unsigned b = Histogram::index(v);
    EXPECT_GE(b, prev);
    EXPECT_LE(Histogram::lower(b), v);
    if (b + 1 < Histogram::kBuckets) {
      EXPECT_GT(Histogram::lower(b + 1), v);
    }
    prev = b;
  }
  EXPECT_LT(Histogram::index(~0ULL), Histogram::kBuckets);
}

TEST(Histogram, MergeEqualsOneHistogram) {
  const auto v = samples();
  Histogram all, a, b;
  for (std::size_t i = 0; i < v.size(); ++i) {
    all.add(v[i]);
    (i % 3 ? a : b).add(v[i]);
  }
  a.merge(b);
  for (double q : {0.01, 0.5, 0.99}) EXPECT_EQ(a.quantile(q), all.quantile(q));
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
}

TEST(Histogram, NegativeIsEarly) {
  Histogram h;
  h.add_signed(-5);
  h.add_signed(7);
  EXPECT_EQ(h.early(), 1U);
  EXPECT_EQ(h.count(), 2U);
  EXPECT_EQ(h.min(), 0U);
}

// The same samples, once as the simulator's lateness and once as a measured
// `ufq pace` lateness, come out of both reports with the same percentiles.
TEST(Histogram, SimulatorAndPaceReportsAgree) {
  Histogram h;
  for (auto x : samples()) h.add(x);

  ufq::sim::SimResult sim;
  sim.lateness = h;
  const auto sj = nlohmann::json::parse(ufq::sim::to_json(sim));

  ufq::rt::PaceReport pace;
  pace.lateness = h;
  const auto pj = nlohmann::json::parse(ufq::rt::format_json(pace));

  for (const char* k : {"p50", "p99", "max"}) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(sj["lateness_ns"].contains(k));
    ASSERT_TRUE(pj["lateness_ns"].contains(k));
    EXPECT_EQ(sj["lateness_ns"][k].get<std::uint64_t>(), pj["lateness_ns"][k].get<std::uint64_t>());
  }
  EXPECT_EQ(sj["lateness_ns"]["p99"].get<std::uint64_t>(), h.quantile(0.99));
}
