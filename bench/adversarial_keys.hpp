// Flow-key families for the adversarial benchmark: what an attacker who picks
// flow identities, but does not know the scheduler's hash key, can send.
// Each family yields n distinct owner ids (key = id << 1) or n distinct 32-bit
// packet hashes (key = (hash & orphan_mask) << 1 | 1, orphan_mask all ones).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ufq::bench {

enum class KeySource : std::uint8_t { owner_id, packet_hash };

struct KeyFamily {
  std::string_view name;
  KeySource source;
  std::string_view what;  // one line for the results table
  std::uint64_t (*make)(std::uint64_t j);  // j-th key, j = 0..n-1
};

namespace keys {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
// murmur3's fmix32: a bijection on 32 bits, so distinct j give distinct hashes.
inline std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6BU;
  h ^= h >> 13;
  h *= 0xC2B2AE35U;
  return h ^ (h >> 16);
}

// The reference's bucket hash (the kernel's hash_ptr on 64-bit hosts): unkeyed,
// so keys k with k * kGolden < 2^(64 - buckets_log) all land in bucket 0.
inline constexpr std::uint64_t kGolden = 0x61C8864680B583EBULL;
constexpr std::uint64_t inverse_mod_2_64(std::uint64_t a) {
  std::uint64_t x = a;  // correct to 3 bits for odd a; Newton doubles them
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
inline constexpr std::uint64_t kGoldenInverse = inverse_mod_2_64(kGolden);
static_assert(kGolden * kGoldenInverse == 1);
inline std::uint32_t reference_bucket(std::uint64_t key, unsigned log) {
  return static_cast<std::uint32_t>((key * kGolden) >> (64 - log));
}

}  // namespace keys

// Owner ids stay below 2^63: bit 63 of an id is shifted out of the key, so ids
// that differ only there would be one flow.
inline constexpr KeyFamily kKeyFamilies[] = {
    {"random", KeySource::owner_id, "random 62-bit owner ids (the baseline)",
     [](std::uint64_t j) -> std::uint64_t { return keys::splitmix64(j) >> 2; }},
    {"sequential", KeySource::owner_id, "owner ids 1, 2, 3, ...", [](std::uint64_t j) -> std::uint64_t { return j + 1; }},
    {"low16", KeySource::owner_id, "ids equal in their low 16 bits: j << 16 | 0xBEEF",
     [](std::uint64_t j) -> std::uint64_t { return (j << 16) | 0xBEEF; }},
    {"low20", KeySource::owner_id, "ids equal in their low 20 bits: j << 20 | 0xBEEF",
     [](std::uint64_t j) -> std::uint64_t { return (j << 20) | 0xBEEF; }},
    {"low32", KeySource::owner_id, "ids equal in their low 32 bits: j << 32 | 0xDEADBEEF",
     [](std::uint64_t j) -> std::uint64_t { return (j << 32) | 0xDEADBEEF; }},
    {"pow2", KeySource::owner_id, "multiples of 2^24: (j + 1) << 24",
     [](std::uint64_t j) -> std::uint64_t { return (j + 1) << 24; }},
    {"high", KeySource::owner_id, "ids differing only in bits 42..61: j << 42 | 0x2A5A5A5A5A5",
     [](std::uint64_t j) -> std::uint64_t { return (j << 42) | 0x2A5A5A5A5A5ULL; }},
    {"ref_bucket", KeySource::owner_id, "all keys in one bucket of the reference's unkeyed hash",
     [](std::uint64_t j) -> std::uint64_t { return ((2 * (j + 1)) * keys::kGoldenInverse) >> 1; }},
    {"hash_random", KeySource::packet_hash, "owner-less packets, random distinct 32-bit hashes",
     [](std::uint64_t j) -> std::uint64_t { return keys::fmix32(static_cast<std::uint32_t>(j)); }},
    {"hash_sequential", KeySource::packet_hash, "owner-less packets, hashes 1, 2, 3, ...",
     [](std::uint64_t j) -> std::uint64_t { return j + 1; }},
    {"hash_low12", KeySource::packet_hash, "owner-less packets, hashes equal in their low 12 bits",
     [](std::uint64_t j) -> std::uint64_t { return (j << 12) | 0xABC; }},
};

// The n keys of a family, checked distinct (a duplicate would merge two flows
// and measure fewer flows than asked); empty if they are not.
inline std::vector<std::uint64_t> family_keys(const KeyFamily& fam, std::size_t n) {
  std::vector<std::uint64_t> k(n);
  for (std::size_t j = 0; j < n; ++j) k[j] = fam.make(j);
  std::vector<std::uint64_t> sorted = k;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return {};
  return k;
}

}  // namespace ufq::bench
