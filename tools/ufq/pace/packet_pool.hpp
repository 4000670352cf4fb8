// Preallocated packets for the runtime: ufq::Packet objects are caller-owned,
// so the producers take them from this pool and the pacer gives them back
// once sent or dropped. No allocation per packet; any thread may acquire or
// release. Each packet's `cookie` is its index, which also finds its metadata.
#pragma once

#include <cstdint>
#include <memory>

#include "ufq/packet.hpp"
#include "ufq/rt/mpmc_ring.hpp"

namespace ufq::rt {

// What the workload knows about a packet beyond what fq needs.
struct PacketMeta {
  std::uint32_t flow = 0;   // workload flow index
  std::uint32_t seq = 0;    // per-flow sequence number
  Time intended = 0;        // intended departure time (CLOCK_MONOTONIC ns)
};

class PacketPool {
 public:
  explicit PacketPool(std::uint32_t size);
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A packet with its public fields reset and `cookie` = its index, or
  // nullptr when every packet is in use.
  Packet* acquire();
  // Give a packet back (it must not be held by a scheduler).
  void release(Packet& p);

  PacketMeta& meta(const Packet& p) { return meta_[p.cookie]; }
  const PacketMeta& meta(const Packet& p) const { return meta_[p.cookie]; }
  std::uint32_t size() const { return size_; }
  // Packets in use (approximate while other threads work).
  std::uint32_t in_use_approx() const;

 private:
  std::uint32_t size_;
  std::unique_ptr<Packet[]> packets_;
  std::unique_ptr<PacketMeta[]> meta_;
  MpmcRing<std::uint32_t> free_;
};

}  // namespace ufq::rt
