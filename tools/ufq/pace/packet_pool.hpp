// Preallocated datagrams for `ufq pace`: each pooled packet is the `packet`
// of an rt::Datagram with its own payload buffer (zeroed once), so the
// producer writes the wire header into it and the egress sends it as an
// application datagram. The pacer gives them back once sent, dropped or
// failed. No allocation per packet; any thread may acquire or release. Each
// packet's `cookie` is its index, which also finds its metadata.
#pragma once

#include <cstdint>
#include <memory>

#include "ufq/packet.hpp"
#include "ufq/rt/datagram.hpp"
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
  // `size` datagrams with `payload` bytes of buffer each (0: no buffer, for
  // tests that never send).
  explicit PacketPool(std::uint32_t size, std::uint32_t payload = 0);
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A packet with its public fields reset and `cookie` = its index, or
  // nullptr when every packet is in use. Its datagram keeps its buffer.
  Packet* acquire();
  // Give a packet back (it must not be held by a scheduler).
  void release(Packet& p);

  // Makes p packet `seq` of workload flow `flow`, meant to leave at
  // `intended`: its metadata, and its datagram (destination, socket, payload
  // size, and the wire header written into its buffer: wire.hpp).
  void fill(Packet& p, std::uint32_t flow, std::uint32_t seq, Time intended, const Address& dest,
            int fd, std::uint32_t payload);

  PacketMeta& meta(const Packet& p) { return meta_[p.cookie]; }
  const PacketMeta& meta(const Packet& p) const { return meta_[p.cookie]; }
  Datagram& datagram(Packet& p) { return Datagram::of(p); }
  // The buffer of p's datagram (payload() bytes).
  std::uint8_t* buffer(const Packet& p) { return arena_.get() + std::size_t{p.cookie} * payload_; }
  std::uint32_t size() const { return size_; }
  std::uint32_t payload() const { return payload_; }
  // Packets in use (approximate while other threads work).
  std::uint32_t in_use_approx() const;

 private:
  std::uint32_t size_, payload_;
  std::unique_ptr<Datagram[]> dgrams_;
  std::unique_ptr<PacketMeta[]> meta_;
  std::unique_ptr<std::uint8_t[]> arena_;
  MpmcRing<std::uint32_t> free_;
};

}  // namespace ufq::rt
