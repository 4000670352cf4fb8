// The scheduler's private per-packet state (the `_` fields at the end of
// ufq::Packet, 32 bytes): accessors for the band and orphan flag packed into a
// tree pointer, and the Boost.Intrusive node traits that make a Packet a
// red-black tree node with its FIFO link doubling as the left child.
// Shared by the reference (reference::FqScheduler) and the public (FqScheduler) schedulers.
#pragma once

#include <boost/intrusive/link_mode.hpp>
#include <boost/intrusive/set.hpp>
#include <cstdint>

#include "ufq/packet.hpp"

namespace ufq::detail {

static_assert(alignof(Packet) >= 8, "the low 3 bits of a Packet* carry flags");

inline constexpr std::uintptr_t kBandMask = 3;
inline constexpr std::uintptr_t kOrphanBit = 4;
inline constexpr std::uintptr_t kFlagMask = 7;

inline std::uint8_t band(const Packet& p) { return static_cast<std::uint8_t>(p.right_bits_ & kBandMask); }
inline void set_band(Packet& p, std::uint8_t b) { p.right_bits_ = (p.right_bits_ & ~kBandMask) | b; }
inline bool orphaned(const Packet& p) { return (p.right_bits_ & kOrphanBit) != 0; }
inline void set_orphaned(Packet& p, bool o) {
  p.right_bits_ = (p.right_bits_ & ~kOrphanBit) | (o ? kOrphanBit : 0);
}
// Both at once, on a packet entering the scheduler: it is in no tree yet, so
// the pointer bits are free to clear.
inline void set_flags(Packet& p, std::uint8_t b, bool o) { p.right_bits_ = b | (o ? kOrphanBit : 0); }

struct PacketNodeTraits {
  using node = Packet;
  using node_ptr = Packet*;
  using const_node_ptr = const Packet*;
  using color = int;
  static node_ptr get_parent(const_node_ptr n) {
    return reinterpret_cast<node_ptr>(n->parent_color_ & ~std::uintptr_t{1});
  }
  static void set_parent(node_ptr n, node_ptr p) {
    n->parent_color_ = reinterpret_cast<std::uintptr_t>(p) | (n->parent_color_ & 1);
  }
  static node_ptr get_left(const_node_ptr n) { return n->next_; }
  static void set_left(node_ptr n, node_ptr l) { n->next_ = l; }
  static node_ptr get_right(const_node_ptr n) {
    return reinterpret_cast<node_ptr>(n->right_bits_ & ~kFlagMask);
  }
  static void set_right(node_ptr n, node_ptr r) {
    n->right_bits_ = reinterpret_cast<std::uintptr_t>(r) | (n->right_bits_ & kFlagMask);
  }
  static color get_color(const_node_ptr n) { return static_cast<color>(n->parent_color_ & 1); }
  static void set_color(node_ptr n, color c) {
    n->parent_color_ = (n->parent_color_ & ~std::uintptr_t{1}) | static_cast<std::uintptr_t>(c);
  }
  static color black() { return 0; }
  static color red() { return 1; }
};

struct PacketValueTraits {
  using node_traits = PacketNodeTraits;
  using node_ptr = Packet*;
  using const_node_ptr = const Packet*;
  using value_type = Packet;
  using pointer = Packet*;
  using const_pointer = const Packet*;
  static const boost::intrusive::link_mode_type link_mode = boost::intrusive::normal_link;
  static node_ptr to_node_ptr(value_type& v) { return &v; }
  static const_node_ptr to_node_ptr(const value_type& v) { return &v; }
  static pointer to_value_ptr(node_ptr n) { return n; }
  static const_pointer to_value_ptr(const_node_ptr n) { return n; }
};

struct ByTimeToSend {
  bool operator()(const Packet& a, const Packet& b) const { return a.time_to_send_ < b.time_to_send_; }
};

// Out-of-order packets of one flow; equal times keep arrival order (upper-bound
// insert). normal_link: the scheduler never has to touch a packet it no longer
// holds (see ~FqScheduler).
using PacketTree =
    boost::intrusive::multiset<Packet, boost::intrusive::value_traits<PacketValueTraits>,
                               boost::intrusive::compare<ByTimeToSend>,
                               boost::intrusive::constant_time_size<false>>;

}  // namespace ufq::detail
