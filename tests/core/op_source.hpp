// Where randomized scheduler tests take their choices from: a seeded PRNG in
// the unit tests, the fuzzer's input bytes in fuzz/fuzz_scheduler_diff.cpp.
// Every choice is next(n), a value in [0, n), so one generator
// (random_config.hpp, differential.hpp) serves both.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>

namespace ufq::diff {

class Source {
 public:
  virtual ~Source() = default;
  // A value in [0, n); 0 when n is 0.
  virtual std::uint64_t next(std::uint64_t n) = 0;
  // No more input: callers stop after the current operation.
  virtual bool done() const = 0;

  // True with the given probability; a 0 from next() means false, so an
  // exhausted or zero-filled fuzz input takes the common branches (defaults).
  bool chance(unsigned percent) { return next(100) + percent >= 100; }
  bool coin() { return next(2) == 1; }
  std::uint32_t u32() { return static_cast<std::uint32_t>(next(1ULL << 32)); }
  std::uint64_t u64() { return (next(1ULL << 32) << 32) | next(1ULL << 32); }
  // lo..hi inclusive.
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) {
    return hi - lo == ~std::uint64_t{0} ? u64() : lo + next(hi - lo + 1);
  }
  template <class T>
  T one_of(std::initializer_list<T> values) {
    return values.begin()[next(values.size())];
  }
};

// The unit tests' source: a seeded PRNG that never runs out.
class PrngSource : public Source {
 public:
  explicit PrngSource(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t next(std::uint64_t n) override { return n ? rng_() % n : 0; }
  bool done() const override { return false; }

 private:
  std::mt19937_64 rng_;
};

}  // namespace ufq::diff
