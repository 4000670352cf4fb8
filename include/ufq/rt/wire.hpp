// The header `ufq pace` puts at the start of each UDP payload, so the
// receiver knows the flow, the sequence number and when the packet was meant
// to leave. Little-endian (both ends are this machine).
#pragma once

#include <cstdint>
#include <cstring>

#include "ufq/time.hpp"

namespace ufq::rt {

inline constexpr std::uint32_t kWireMagic = 0x55465131;  // "UFQ1"
inline constexpr std::uint32_t kWireHeaderSize = 24;
// Bytes fq charges on top of the UDP payload: Ethernet 14 + IPv4 20 + UDP 8.
inline constexpr std::uint32_t kFrameOverhead = 42;

struct WireHeader {
  std::uint32_t magic = kWireMagic;
  std::uint32_t flow = 0;
  std::uint32_t seq = 0;
  std::uint32_t reserved = 0;
  std::uint64_t intended_ns = 0;
};
static_assert(sizeof(WireHeader) == kWireHeaderSize);

inline void write_wire_header(std::uint8_t* out, const WireHeader& h) {
  std::memcpy(out, &h, sizeof(h));
}

inline bool read_wire_header(const std::uint8_t* in, std::size_t len, WireHeader& h) {
  if (len < sizeof(WireHeader)) return false;
  std::memcpy(&h, in, sizeof(h));
  return h.magic == kWireMagic;
}

}  // namespace ufq::rt
