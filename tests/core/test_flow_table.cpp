// The fast scheduler's flow table under keys an adversary could pick without
// knowing the table's secret: ids that differ only in their high bits
// (j << s), ids equal in their low bits, sequential hashes. With any of several
// fixed secrets a lookup must stay in about one 64-byte group, as with random
// keys. (A single multiply-fold hash failed this: ids << 20 or << 32 averaged
// 2.6-3.6 groups for some secrets, with probes of 40-50 groups.)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "flow_table.hpp"

namespace {

using ufq::detail::FlowTable;

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

struct Family {
  std::string name;
  std::uint64_t (*key)(std::uint64_t j, unsigned s);
  unsigned shift;
};

// Flow keys as the scheduler forms them: owner id << 1, packet hash << 1 | 1.
std::uint64_t id_shifted(std::uint64_t j, unsigned s) { return ((j + 1) << s) << 1; }
std::uint64_t id_low_equal(std::uint64_t j, unsigned s) { return ((j << s) | 0x5A5) << 1; }
std::uint64_t hash_sequential(std::uint64_t j, unsigned) { return (j << 1) | 1; }
std::uint64_t id_random(std::uint64_t j, unsigned) {
  std::uint64_t x = j * 0x2545F4914F6CDD1DULL;
  return (splitmix64(x) >> 2) << 1;
}

struct Probes {
  double mean = 0;
  std::size_t max = 0;
};

Probes probe(const std::array<std::uint64_t, 4>& secret, const Family& fam, std::size_t n) {
  std::vector<std::uint64_t> keys(n);
  for (std::size_t j = 0; j < n; ++j) keys[j] = fam.key(j, fam.shift);
  auto key_of = [&keys](std::uint32_t i) { return keys[i]; };
  FlowTable t(secret);
  for (std::uint32_t i = 0; i < n; ++i) t.insert(keys[i], i, key_of);
  Probes p;
  for (std::uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(t.find(keys[i], key_of), i);
    const std::size_t g = t.probe_groups(keys[i], key_of);
    p.mean += static_cast<double>(g);
    p.max = std::max(p.max, g);
  }
  p.mean /= static_cast<double>(n);
  return p;
}

TEST(FlowTable, ChosenKeysProbeAsFewGroupsAsRandomOnes) {
  constexpr std::size_t kFlows = 100'000;
  const std::vector<Family> families = {
      {"random", id_random, 0},           {"ids << 16", id_shifted, 16}, {"ids << 20", id_shifted, 20},
      {"ids << 24", id_shifted, 24},      {"ids << 32", id_shifted, 32}, {"ids << 40", id_shifted, 40},
      {"low 20 bits equal", id_low_equal, 20}, {"sequential hashes", hash_sequential, 0},
  };
  std::uint64_t seed = 2026;
  for (int inst = 0; inst < 4; ++inst) {
    const std::array<std::uint64_t, 4> secret{splitmix64(seed), splitmix64(seed), splitmix64(seed),
                                              splitmix64(seed)};
    for (const Family& fam : families) {
      const Probes p = probe(secret, fam, kFlows);
      // Random keys at this load (100k keys, 16k groups of 12) average 1.003
      // groups with a longest probe of ~4.
      EXPECT_LT(p.mean, 1.05) << fam.name << ", secret #" << inst;
      EXPECT_LE(p.max, 12U) << fam.name << ", secret #" << inst;
    }
  }
}

TEST(FlowTable, EraseKeepsEveryOtherKeyFindable) {
  std::vector<std::uint64_t> keys(5000);
  for (std::size_t j = 0; j < keys.size(); ++j) keys[j] = id_shifted(j, 24);
  auto key_of = [&keys](std::uint32_t i) { return keys[i]; };
  FlowTable t(std::array<std::uint64_t, 4>{1, 2, 3, 4});
  for (std::uint32_t i = 0; i < keys.size(); ++i) t.insert(keys[i], i, key_of);
  for (std::uint32_t i = 0; i < keys.size(); i += 2) t.erase(keys[i], i);
  EXPECT_EQ(t.size(), keys.size() / 2);
  for (std::uint32_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(t.find(keys[i], key_of), i % 2 ? i : ufq::detail::kNoFlow) << i;
}

}  // namespace
