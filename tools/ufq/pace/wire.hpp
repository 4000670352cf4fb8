// The payload `ufq pace` writes into each datagram it sends: a header with
// the flow, the sequence number and when the packet was meant to leave, so
// the receiver can measure per flow; the rest of the payload is zeros.
// Little-endian (the built-in receiver runs on this machine; a foreign one
// only counts datagrams and bytes). The runtime knows nothing of it: to the
// egress it is an application payload like any other.
#pragma once

#include <cstdint>
#include <cstring>

#include "ufq/time.hpp"

namespace ufq::rt {

inline constexpr std::uint32_t kWireMagic = 0x55465131;  // "UFQ1"
inline constexpr std::uint32_t kWireHeaderSize = 24;

struct WireHeader {
  std::uint32_t magic = kWireMagic;
  std::uint32_t flow = 0;
  std::uint32_t seq = 0;
  std::uint32_t reserved = 0;
  std::uint64_t intended_ns = 0;
};
static_assert(sizeof(WireHeader) == kWireHeaderSize);

// The payload writer: the header at the start of `out` (its first
// min(size, 24) bytes); the bytes after it are left as they are (the pool
// zeroes them once).
inline void write_wire_header(std::uint8_t* out, std::uint32_t size, const WireHeader& h) {
  std::memcpy(out, &h, size < sizeof(h) ? size : sizeof(h));
}

inline bool read_wire_header(const std::uint8_t* in, std::size_t len, WireHeader& h) {
  if (len < sizeof(WireHeader)) return false;
  std::memcpy(&h, in, sizeof(h));
  return h.magic == kWireMagic;
}

}  // namespace ufq::rt
