// Rng::exponential's cheaper logarithm (include/ufq/sim/traffic.hpp): the same
// integer as the formula with std::log for every draw, and the logarithm
// within the error its fallback test assumes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "ufq/sim/traffic.hpp"

namespace ufq::sim {
namespace {

constexpr double kTwo53 = 9007199254740992.0;

// The means the simulator draws with: other interrupts at the default rate,
// the hrtimer wheel, the guest's costs, onoff's longest periods, and odd ones.
const std::vector<double> kMeans = {1e9 / 365'000, 1e9 / 1'000, 16'000, 1'000, 1, 0.5, 3.3e-3,
                                    1e9 / 7, 86'400e9, 1e6 + 0.25};

// std::mt19937_64's tempering undone: the word whose output is `y`.
std::uint64_t untemper(std::uint64_t y) {
  // y ^= y >> 43 (its own inverse: 43 >= 32).
  y ^= y >> 43;
  // y ^= (y << 37) & c: applied once more undoes it (37 * 2 >= 64).
  y ^= (y << 37) & 0xFFF7EEE000000000ULL;
  // y ^= (y << 17) & c: 17-bit steps from the bottom.
  {
    std::uint64_t x = y;
    for (int i = 0; i < 4; ++i) x = y ^ ((x << 17) & 0x71D67FFFEDA60000ULL);
    y = x;
  }
  // y ^= (y >> 29) & c: 29-bit steps from the top.
  {
    std::uint64_t x = y;
    for (int i = 0; i < 3; ++i) x = y ^ ((x >> 29) & 0x5555555555555555ULL);
    y = x;
  }
  return y;
}

// x = 1 - k * 2^-53, the values 1 - Rng::unit() takes.
double x_of(std::uint64_t k) { return 1.0 - static_cast<double>(k) / kTwo53; }

TEST(RngExponential, SameIntegerAsStdLogOnManyDraws) {
  for (const double mean : kMeans) {
    Rng rng(0x5DEECE66DULL ^ static_cast<std::uint64_t>(mean * 1000));
    std::uint64_t differ = 0;
    for (int i = 0; i < 5'000'000; ++i) {
      const double x = 1.0 - rng.unit();
      differ += Rng::exponential_of(x, mean) != Rng::exponential_std(x, mean);
    }
    EXPECT_EQ(differ, 0u) << "mean " << mean;
  }
}

TEST(RngExponential, DrawsMatchTheStdLogFormula) {
  // The member itself against the formula on the same generator state.
  Rng a(1), b(1);
  for (int i = 0; i < 1'000'000; ++i) {
    const Time got = a.exponential(1e9 / 365'000);
    const Time want = static_cast<Time>(-std::log(1.0 - b.unit()) * (1e9 / 365'000)) + 1;
    ASSERT_EQ(got, want) << "draw " << i;
  }
}

TEST(RngExponential, BatchedDrawsAreTheRngsDraws) {
  // ExponentialDraws against Rng::exponential on the same seed: the same
  // generator words (its own std::mt19937_64 refill), the same values,
  // across many refills of 312.
  for (const double mean : kMeans)
    for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0x5DEECE66DULL ^ 42}, ~std::uint64_t{0}}) {
      Rng rng(seed);
      ExponentialDraws draws(seed, mean);
      for (int i = 0; i < 200'000; ++i) {
        const Time want = rng.exponential(mean);
        ASSERT_EQ(draws.next(), want) << "draw " << i << " seed " << seed << " mean " << mean;
      }
    }
}

TEST(RngExponential, TwoAndFourLaneWordsGiveTheSameDraws) {
  // detail::exponential_words in pairs and in fours (AVX2, when this CPU
  // has it: ExponentialDraws' form then), against Rng::exponential_of on
  // the same generator outputs. exponential_words tempers the words it is
  // given, so it is given the outputs untempered.
  if (!detail::exponential_words_wide()) GTEST_LOG_(INFO) << "no AVX2 here: the four-lane form is not run";
  for (const double mean : kMeans) {
    std::mt19937_64 g(0x5DEECE66DULL ^ static_cast<std::uint64_t>(mean * 7));
    for (int block = 0; block < 200; ++block) {
      std::vector<std::uint64_t> words(312 + 2), outs(312);
      for (std::size_t i = 0; i < 312; ++i) outs[i] = g();
      for (std::size_t i = 0; i < 312; ++i) words[i] = untemper(outs[i]);
      std::vector<Time> pairs(312), fours(312);
      detail::exponential_words(words.data(), pairs.data(), 312, mean, false);
      detail::exponential_words(words.data(), fours.data(), 312, mean, true);
      Time sum = 0;
      for (std::size_t i = 0; i < 312; ++i) {
        sum += Rng::exponential_of(1.0 - static_cast<double>(outs[i] >> 11) / kTwo53, mean);
        ASSERT_EQ(pairs[i], sum) << "pairs, word " << i << " mean " << mean;
        ASSERT_EQ(fours[i], sum) << "fours, word " << i << " mean " << mean;
      }
    }
  }
}

TEST(RngExponential, ArrivalsUntilCountsAsTheStepLoop) {
  // ExponentialDraws::arrivals_until against the loop it replaces, on
  // periods from below one gap to thousands of refills, ending between two
  // arrivals or on one, with next() between.
  for (const double mean : {1e9 / 365'000, 1.0, 16'000.0}) {
    ExponentialDraws draws(9, mean), step(9, mean);
    Time at = draws.next(), at_step = step.next();
    ASSERT_EQ(at, at_step);
    Rng periods(3);
    Time now = 0;
    for (int k = 0; k < 3000; ++k) {
      const double scale = k % 3 == 0 ? mean / 4 : k % 3 == 1 ? mean * 50 : mean * 400 * (k % 7 == 0 ? 100 : 1);
      now += static_cast<Time>(periods.unit() * scale);
      if (k % 4 == 3) {  // now exactly at a later arrival: it is counted
        ExponentialDraws peek = step;
        Time t = at_step;
        for (int j = 0; j < k % 400; ++j) t += peek.next();
        now = std::max(now, t);
      }
      std::uint64_t n_step = 0;
      while (at_step <= now) {
        ++n_step;
        at_step += step.next();
      }
      ASSERT_EQ(draws.arrivals_until(at, now), n_step) << "period " << k << " mean " << mean;
      ASSERT_EQ(at, at_step) << "period " << k << " mean " << mean;
      if (k % 5 == 0) {
        ASSERT_EQ(draws.next(), step.next());  // a lone draw between
      }
    }
  }
}

TEST(RngExponential, EdgesNearZeroAndOne) {
  std::vector<double> xs;
  for (std::uint64_t k = 0; k < 200'000; ++k) xs.push_back(x_of(k));  // u near 0 (x = 1 included)
  for (std::uint64_t k = 1; k <= 200'000; ++k) xs.push_back(static_cast<double>(k) / kTwo53);  // u near 1
  // Every table interval's ends, at every binade x can be in.
  for (int e = -53; e <= -1; ++e)
    for (int j = 0; j <= 128; ++j)
      for (int s = -2; s <= 2; ++s) {
        const double m = 1.0 + j / 128.0;
        const double x = std::ldexp(std::nextafter(m, s < 0 ? 0.0 : 2.0), e) + s * std::ldexp(0x1p-52, e);
        // Round to the grid 1 - k * 2^-53 and keep it in [2^-53, 1].
        const double k = std::round((1.0 - x) * kTwo53);
        if (k >= 0 && k < kTwo53) xs.push_back(x_of(static_cast<std::uint64_t>(k)));
      }
  for (const double mean : kMeans)
    for (const double x : xs)
      ASSERT_EQ(Rng::exponential_of(x, mean), Rng::exponential_std(x, mean)) << "x " << x << " mean " << mean;
  // The batched form (double pairs), over an odd count so that the last goes alone.
  xs.push_back(x_of(12345));
  if (xs.size() % 2 == 0) xs.push_back(1.0);
  std::vector<Time> out(xs.size());
  for (const double mean : kMeans) {
    detail::exponential_batch(xs.data(), out.data(), xs.size(), mean);
    for (std::size_t i = 0; i < xs.size(); ++i)
      ASSERT_EQ(out[i], Rng::exponential_std(xs[i], mean)) << "batch: x " << xs[i] << " mean " << mean;
  }
}

TEST(RngExponential, ProductsNearIntegers) {
  // x whose std::log product lies within a hair of an integer: the fallback's
  // cases. At least some must be closer than the cheap logarithm's error,
  // or this test would not test the fallback.
  std::uint64_t close = 0, checked = 0, batch_close = 0;
  for (const double mean : kMeans) {
    const double top = 36 * mean;  // the largest products are -ln(2^-53) * mean = 36.7 * mean
    if (top < 1) continue;
    std::vector<double> xs;  // for the batched form
    for (int n = 0; n < 4000; ++n) {
      const double integer = 1 + std::floor(n / 4000.0 * (top - 1));
      const double x = std::exp(-integer / mean);
      if (!(x > 0x1p-53) || x >= 1.0) continue;
      const double k0 = std::round((1.0 - x) * kTwo53);
      for (int dk = -40; dk <= 40; ++dk) {
        const double k = k0 + dk;
        if (k < 0 || k >= kTwo53) continue;
        const double xx = x_of(static_cast<std::uint64_t>(k));
        const double p = -std::log(xx) * mean;
        close += std::fabs(p - std::round(p)) < 1e-12 * std::max(1.0, p);
        ++checked;
        ASSERT_EQ(Rng::exponential_of(xx, mean), Rng::exponential_std(xx, mean))
            << "x " << xx << " mean " << mean << " product " << p;
        xs.push_back(xx);
      }
    }
    std::vector<Time> out(xs.size());
    detail::exponential_batch(xs.data(), out.data(), xs.size(), mean);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double p = -std::log(xs[i]) * mean;
      batch_close += std::fabs(p - std::round(p)) < 1e-12 * std::max(1.0, p);
      ASSERT_EQ(out[i], Rng::exponential_std(xs[i], mean)) << "batch: x " << xs[i] << " mean " << mean;
    }
  }
  EXPECT_EQ(batch_close, close);
  EXPECT_GT(checked, 100'000u);
  EXPECT_GT(close, 100u);
  std::printf("near-integer products checked %llu, within 1e-12 of an integer %llu\n",
              static_cast<unsigned long long>(checked), static_cast<unsigned long long>(close));
}

TEST(RngExponential, CheapLogarithmWithinItsBound) {
  // The bound the fallback test assumes is kNegLogError; the error is far
  // below it (traffic.hpp), which this checks with a margin to spare.
  Rng rng(7);
  double worst = 0;
  auto check = [&](double x) {
    const double err = std::fabs(detail::neg_log_approx(x) + std::log(x));
    worst = std::max(worst, err);
  };
  for (int i = 0; i < 2'000'000; ++i) check(1.0 - rng.unit());
  for (int e = -53; e <= -1; ++e)  // every binade of [2^-53, 1)
    for (int i = 0; i < 20'000; ++i) check(std::ldexp(1.0 + rng.unit(), e));
  check(1.0);
  std::printf("worst error of the cheap logarithm %.3g\n", worst);
  EXPECT_LT(worst, 2e-14) << "worst error " << worst;
  EXPECT_LT(worst, detail::kNegLogError);
}

}  // namespace
}  // namespace ufq::sim
