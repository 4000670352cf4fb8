// What the caller hands to the scheduler: a packet and, optionally, the flow
// owner it belongs to (the user-space analog of the kernel's socket).
#pragma once

#include <cstdint>

#include "ufq/time.hpp"

namespace ufq {

// The analog of a socket: one identity that the scheduler keys a flow on, and
// the pacing rates the owner asked for. The caller owns it and may change the
// rates at any time (as TCP updates sk_pacing_rate); the scheduler reads them
// when it dequeues a packet without a departure timestamp.
struct FlowOwner {
  enum class Kind : std::uint8_t {
    connected,    // a connected socket: its own flow, keyed by `id`
    unconnected,  // TCP_CLOSE (UDP sendto): flow by packet hash, owner rate still applies
    listener,     // listener/request socket (SYN-ACKs): hashed and orphaned
    time_wait,    // TIME_WAIT (RST/ACK): hashed and orphaned since 6.13; own flow in 5.7
  };

  // Unique among live owners, below 2^63 (the scheduler keeps one bit of its
  // flow key to tell owners from packet hashes, as the kernel tags the low bit
  // of a socket pointer: ids that differ only in bit 63 share a flow). Reusing
  // an id for a new owner must come with a new `hash_generation` (the kernel's
  // sk_hash), which resets the flow.
  std::uint64_t id = 0;
  // --- private to the scheduler; do not touch ---
  // Where FqScheduler last found this owner's flow (as a socket remembers
  // its flow), so a lookup is one flow-record read instead of a table probe.
  // Only a hint: it is checked against the flow's key before use, so a stale
  // one, or one left by another scheduler instance, just means a table lookup. Written
  // on enqueue: an owner's packets go to schedulers that run in one thread at a
  // time (as a socket's packets pass one qdisc lock). Beside `id`: an enqueue
  // reads id, the hint, hash_generation and kind, bytes 0-16, which cross a
  // cache line less often than bytes 0-36 did (docs/architecture.md#memory-layout).
  std::uint32_t flow_hint_ = 0xFFFFFFFFU;
  // --- public again ---
  std::uint32_t hash_generation = 0;
  Kind kind = Kind::connected;
  bool tcp = false;  // TCP owners stamp departure times themselves; used by the fast path
  // sk_pacing_rate: what the transport computes (TCP) or SO_MAX_PACING_RATE lowers it to.
  Rate pacing_rate = kUnlimitedRate;
  // SO_MAX_PACING_RATE.
  Rate max_pacing_rate = kUnlimitedRate;
};

// One packet. The caller owns the memory for its whole life; the scheduler
// links it into its queues through the intrusive members below and never
// allocates per packet. A packet must not be destroyed or re-enqueued while the
// scheduler holds it, and its owner must outlive it there (the owner's rate is
// read at dequeue).
struct Packet {
  // The fields a dequeue reads and writes come first and together (bytes 0-40:
  // len, segments, ect, ce, tstamp, the scheduler's departure time and link,
  // and due), so that a packet the scheduler visits costs one cache line more
  // often than two (docs/architecture.md#memory-layout). Designated
  // initializers follow this order: len, segments, priority, ect, tstamp,
  // hash, owner, cookie.

  // --- set by the caller ---
  std::uint32_t len = 0;       // qdisc_pkt_len: bytes charged (Ethernet frame without FCS)
  std::uint16_t segments = 1;  // GSO segments: the "pkt" counter of tc counts these
  std::uint8_t priority = 0;   // skb->priority; the scheduler uses priority & 15
  bool ect = false;            // ECN-capable transport: CE can be set on it
  Time tstamp = 0;             // EDT departure time; 0 = none. Rewritten by horizon_cap.

  // --- private to the scheduler; do not touch ---
  // The departure time, and one link that is either the flow's FIFO link or
  // an out-of-order tree node's left child (never both at once). Accessed
  // through src/core/packet_bits.hpp, with right_bits_ and parent_color_
  // below: 32 bytes in all.
  Time time_to_send_ = 0;
  Packet* next_ = nullptr;  // FIFO link; the left child while in a flow's tree

  // --- set by the scheduler ---
  // Set by dequeue(): when the packet was allowed to leave, the later of its
  // departure time and its flow's pacing time (`now - due` is its lateness, the
  // quantity ce_threshold is compared with). Internal-queue packets: enqueue time.
  Time due = 0;
  bool ce = false;  // set when the scheduler marked CE (only if `ect`)

  // --- set by the caller ---
  std::uint32_t hash = 0;      // flow hash (5-tuple), used for owner-less/unconnected traffic
  FlowOwner* owner = nullptr;  // nullptr = no socket (forwarded traffic)
  std::uint64_t cookie = 0;    // free for the caller (an index, a pointer)

  // --- private to the scheduler; do not touch ---
  // The out-of-order tree node's other links, with the packet's band and
  // orphan flag in the low bits of a tree pointer (packets are 8-aligned).
  std::uintptr_t right_bits_ = 0;    // right child | band (bits 0-1) | orphaned (bit 2)
  std::uintptr_t parent_color_ = 0;  // parent | red-black color (bit 0)
};
static_assert(sizeof(Packet) == 80);

}  // namespace ufq
