// The fast scheduler's out-of-order packets: for each flow that holds packets
// due earlier than its FIFO's last one, a tree of them (ordered by departure
// time), kept off the 48-byte flow record since few flows ever have one.
// Without allocating per packet: the trees are pooled (the pool grows to the
// most flows holding out-of-order packets at once and is never shrunk) and
// found through a flat open-addressing index from flow index to tree, grown
// with the pool.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "packet_bits.hpp"

namespace ufq::detail {

class OutOfOrderTrees {
 public:
  // The tree of `flow`, created (empty) if it has none. May allocate only when
  // more flows hold a tree than ever before.
  PacketTree& acquire(std::uint32_t flow) {
    if (std::size_t s = slot(flow); s != kNone) return trees_[slots_[s].tree];
    if ((count_ + 1) * 2 > slots_.size()) grow();
    std::uint32_t t;
    if (!free_.empty()) {
      t = free_.back();
      free_.pop_back();
    } else {
      t = static_cast<std::uint32_t>(trees_.size());
      trees_.emplace_back();
      if (free_.capacity() < trees_.size()) free_.reserve(2 * trees_.size());  // release() never allocates
    }
    std::size_t s = home(flow);
    while (slots_[s].flow != kEmpty) s = (s + 1) & mask_;
    slots_[s] = {flow, t};
    ++count_;
    return trees_[t];
  }

  // Pre: `flow` has a tree (acquired and not released since).
  PacketTree& get(std::uint32_t flow) { return trees_[slots_[slot(flow)].tree]; }

  // `flow`'s tree goes back to the pool, emptied without touching its packets.
  // Pre: `flow` has a tree.
  void release(std::uint32_t flow) {
    std::size_t s = slot(flow);
    const std::uint32_t t = slots_[s].tree;
    trees_[t].clear();  // normal_link: resets the header only
    free_.push_back(t);
    --count_;
    // Backward-shift deletion: move later members of the probe run into the
    // hole when their home allows it, so lookups need no tombstones.
    for (std::size_t next = (s + 1) & mask_; slots_[next].flow != kEmpty; next = (next + 1) & mask_) {
      const std::size_t h = home(slots_[next].flow);
      // `next` may move to `s` if its home is not in the cyclic range (s, next].
      if (((next - h) & mask_) >= ((next - s) & mask_)) {
        slots_[s] = slots_[next];
        s = next;
      }
    }
    slots_[s].flow = kEmpty;
  }

  std::size_t bytes() const {
    return trees_.size() * sizeof(PacketTree) + slots_.capacity() * sizeof(Slot) +
           free_.capacity() * sizeof(std::uint32_t);
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFU;
  static constexpr std::size_t kNone = ~std::size_t{0};
  struct Slot {
    std::uint32_t flow = kEmpty;
    std::uint32_t tree = 0;
  };

  // Flow indices are dense small integers: a multiplicative hash spreads them.
  std::size_t home(std::uint32_t flow) const {
    return static_cast<std::size_t>((std::uint64_t{flow} * 0x9E3779B97F4A7C15ULL) >> shift_) & mask_;
  }

  std::size_t slot(std::uint32_t flow) const {
    if (slots_.empty()) return kNone;
    for (std::size_t s = home(flow);; s = (s + 1) & mask_) {
      if (slots_[s].flow == flow) return s;
      if (slots_[s].flow == kEmpty) return kNone;
    }
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t n = old.empty() ? 16 : old.size() * 2;
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
    for (const Slot& o : old) {
      if (o.flow == kEmpty) continue;
      std::size_t s = home(o.flow);
      while (slots_[s].flow != kEmpty) s = (s + 1) & mask_;
      slots_[s] = o;
    }
  }

  std::deque<PacketTree> trees_;  // stable addresses: a tree's root points at its header
  std::vector<std::uint32_t> free_;
  std::vector<Slot> slots_;  // power-of-two size, at most half full
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t count_ = 0;
};

}  // namespace ufq::detail
