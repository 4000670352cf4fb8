// The fast scheduler's flow table: 64-bit flow keys to flow indices, open
// addressing in 64-byte groups (F14/Swiss-table style tag bytes matched 16 at a
// time), hashed with a secret drawn per table so that an adversary who picks
// flow keys cannot make them collide (docs/reliability.md, adversarial keys).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "huge_pages.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ufq::detail {

inline constexpr std::uint32_t kNoFlow = 0xFFFFFFFFU;

// 12 slots per 64-byte group: a tag byte (0 = empty) and a flow index each.
// `overflow` counts the keys whose probe passed this group while it was full:
// a lookup stops at the first group whose count is 0, so deletion needs no
// tombstone (it decrements the counts along the deleted key's probe).
struct alignas(64) Group {
  std::array<std::uint8_t, 12> tags;
  std::uint32_t overflow;
  std::array<std::uint32_t, 12> idx;
};
static_assert(sizeof(Group) == 64);

__extension__ using u128 = unsigned __int128;

// Maps a 64-bit flow key to a flow index (FqScheduler's flow array).
// Keys themselves live in the flows; the table asks `key_of(index)` to confirm
// a tag match. Open addressing over groups, linear probing group by group,
// grown at 3/4 load.
class FlowTable {
 public:
  // A fresh secret per table, from std::random_device: an adversary choosing
  // keys cannot aim them at one group without it.
  FlowTable() : FlowTable(random_secret()) {}
  // A given secret: for tests and models that must be repeatable.
  explicit FlowTable(const std::array<std::uint64_t, 4>& secret)
      : k0_(secret[0]), k1_(secret[1] ^ 0x9E3779B97F4A7C15ULL), k2_(secret[2]), k3_(secret[3]) {
    alloc(8);
  }

  // Keyed 64-bit mixing as wyhash does it for one word: a 64x64->128 multiply
  // by a secret, then the two halves multiplied together. One round alone is
  // linear enough that keys differing only in high bits (ids << s) spread
  // badly into the low index bits for some secrets (bench/adversarial_keys.hpp
  // families, probe-length model in docs/reliability.md); the second,
  // half-by-half round removes that structure.
  std::uint64_t hash(std::uint64_t key) const {
    const u128 m = static_cast<u128>(key ^ k0_) * (k1_ | 1);
    const u128 m2 = static_cast<u128>(static_cast<std::uint64_t>(m) ^ k2_) * (static_cast<std::uint64_t>(m >> 64) ^ k3_);
    return static_cast<std::uint64_t>(m2) ^ static_cast<std::uint64_t>(m2 >> 64);
  }
  static std::uint8_t tag_of(std::uint64_t h) { return static_cast<std::uint8_t>((h >> 56) | 0x80); }

  template <class KeyOf>
  std::uint32_t find(std::uint64_t key, const KeyOf& key_of) const {
    const std::uint64_t h = hash(key);
    const std::uint8_t tag = tag_of(h);
    std::size_t g = h & mask_;
    for (std::size_t step = 0; step <= mask_; ++step) {
      const Group& gr = groups_[g];
      unsigned m = match(gr, tag);
      while (m) {
        const unsigned i = static_cast<unsigned>(__builtin_ctz(m));
        if (key_of(gr.idx[i]) == key) return gr.idx[i];
        m &= m - 1;
      }
      if (gr.overflow == 0) return kNoFlow;
      g = (g + 1) & mask_;
    }
    return kNoFlow;
  }

  // Starts fetching the group a lookup of `key` reads first (the batched
  // calls' prefetch; changes nothing).
  void prefetch(std::uint64_t key) const { __builtin_prefetch(&groups_[hash(key) & mask_]); }

  // How many groups a lookup of `key` visits (1 = its home group): the cost
  // an adversary would try to raise.
  template <class KeyOf>
  std::size_t probe_groups(std::uint64_t key, const KeyOf& key_of) const {
    const std::uint64_t h = hash(key);
    std::size_t g = h & mask_;
    for (std::size_t n = 1; n <= mask_ + 1; ++n) {
      const Group& gr = groups_[g];
      for (unsigned i = 0; i < 12; ++i)
        if (gr.tags[i] && key_of(gr.idx[i]) == key) return n;
      if (gr.overflow == 0) return n;
      g = (g + 1) & mask_;
    }
    return mask_ + 1;
  }
  std::size_t size() const { return count_; }
  std::size_t groups() const { return groups_.size(); }

  template <class KeyOf>
  void insert(std::uint64_t key, std::uint32_t idx, const KeyOf& key_of) {
    if ((count_ + 1) * 4 > slots() * 3) rehash(groups_.size() * 2, key_of);
    place(hash(key), idx);
    ++count_;
  }

  void erase(std::uint64_t key, std::uint32_t idx) {
    const std::uint64_t h = hash(key);
    const std::uint8_t tag = tag_of(h);
    std::size_t g = h & mask_;
    for (;;) {
      Group& gr = groups_[g];
      for (unsigned i = 0; i < 12; ++i) {
        if (gr.tags[i] == tag && gr.idx[i] == idx) {
          gr.tags[i] = 0;
          // Undo the overflow counts of the groups this key probed past.
          for (std::size_t p = h & mask_; p != g; p = (p + 1) & mask_) --groups_[p].overflow;
          --count_;
          return;
        }
      }
      g = (g + 1) & mask_;
    }
  }

  void clear() {
    for (Group& gr : groups_) {
      gr.tags.fill(0);
      gr.overflow = 0;
    }
    count_ = 0;
  }

  template <class KeyOf>
  void rehash(std::size_t ngroups, const KeyOf& key_of) {
    HugeVector<Group> old = std::move(groups_);
    alloc(ngroups);
    for (const Group& gr : old)
      for (unsigned i = 0; i < 12; ++i)
        if (gr.tags[i]) place(hash(key_of(gr.idx[i])), gr.idx[i]);
  }

  std::size_t bytes() const { return allocated_bytes(groups_); }

 private:
  static std::array<std::uint64_t, 4> random_secret() {
    std::random_device rd;
    std::array<std::uint64_t, 4> s;
    for (auto& w : s) w = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    return s;
  }

  std::size_t slots() const { return groups_.size() * 12; }

  void alloc(std::size_t ngroups) {
    groups_.assign(ngroups, Group{});
    mask_ = ngroups - 1;
  }

  void place(std::uint64_t h, std::uint32_t idx) {
    std::size_t g = h & mask_;
    for (;;) {
      Group& gr = groups_[g];
      for (unsigned i = 0; i < 12; ++i) {
        if (gr.tags[i] == 0) {
          gr.tags[i] = tag_of(h);
          gr.idx[i] = idx;
          return;
        }
      }
      ++gr.overflow;
      g = (g + 1) & mask_;
    }
  }

  static unsigned match(const Group& gr, std::uint8_t tag) {
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&gr));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(tag))))) &
           0xFFFU;
#else
    unsigned m = 0;
    for (unsigned i = 0; i < 12; ++i) m |= static_cast<unsigned>(gr.tags[i] == tag) << i;
    return m;
#endif
  }

  HugeVector<Group> groups_;  // huge pages from 2 MiB (huge_pages.hpp)
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
  std::uint64_t k0_ = 0, k1_ = 0, k2_ = 0, k3_ = 0;
};

}  // namespace ufq::detail
