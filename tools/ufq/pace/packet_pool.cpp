#include "pace/packet_pool.hpp"

#include <stdexcept>

#include "pace/wire.hpp"

namespace ufq::rt {

PacketPool::PacketPool(std::uint32_t size, std::uint32_t payload)
    : size_(size),
      payload_(payload),
      dgrams_(std::make_unique<Datagram[]>(size)),
      meta_(std::make_unique<PacketMeta[]>(size)),
      arena_(std::make_unique<std::uint8_t[]>(std::size_t{size} * payload)),  // zeroed
      free_(size) {
  if (size == 0) throw std::invalid_argument("PacketPool: size must be > 0");
  for (std::uint32_t i = 0; i < size; ++i) {
    dgrams_[i].packet.cookie = i;
    free_.try_push(i);
  }
}

Packet* PacketPool::acquire() {
  std::uint32_t i = 0;
  if (!free_.try_pop(i)) return nullptr;
  Packet& p = dgrams_[i].packet;
  p.len = 0;
  p.segments = 1;
  p.priority = 0;
  p.ect = false;
  p.hash = 0;
  p.tstamp = 0;
  p.owner = nullptr;
  p.ce = false;
  p.cookie = i;
  return &p;
}

void PacketPool::release(Packet& p) {
  const auto i = static_cast<std::uint32_t>(p.cookie);
  if (i >= size_ || &dgrams_[i].packet != &p) throw std::logic_error("PacketPool: foreign packet");
  free_.try_push(i);  // cannot be full: at most size_ indices exist
}

std::uint32_t PacketPool::in_use_approx() const {
  const std::size_t free = free_.size_approx();
  return free >= size_ ? 0 : static_cast<std::uint32_t>(size_ - free);
}

void PacketPool::fill(Packet& p, std::uint32_t flow, std::uint32_t seq, Time intended,
                      const Address& dest, int fd, std::uint32_t payload) {
  PacketMeta& m = meta(p);
  m.flow = flow;
  m.seq = seq;
  m.intended = intended;
  Datagram& d = datagram(p);
  d.dest = dest;
  d.fd = fd;
  d.size = payload;
  if (payload_ != 0) {
    d.data = buffer(p);
    write_wire_header(buffer(p), d.size, WireHeader{kWireMagic, flow, seq, 0, intended});
  }
}

}  // namespace ufq::rt
