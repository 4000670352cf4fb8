// One application datagram: everything a send needs, in one record (as
// quinn-udp's Transmit): the payload, the destination, an optional source
// address, the socket, the ECN codepoint and a GSO segment size. The
// scheduler sees only the `packet` member (len, owner, hash, priority,
// tstamp); the egress gets the whole record back from it with
// Datagram::of(). docs/send-path.md describes the record, who owns the
// buffer when, the GSO train rule, ECN/CE and the error policy.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "ufq/packet.hpp"

namespace ufq::rt {

// An IPv4 or IPv6 socket address, or none (family AF_UNSPEC).
class Address {
 public:
  Address() = default;
  static Address v4(const in_addr& a, std::uint16_t port);
  static Address v6(const in6_addr& a, std::uint16_t port, std::uint32_t scope_id = 0);
  static Address loopback_v4(std::uint16_t port);
  static Address loopback_v6(std::uint16_t port);
  // From a sockaddr_in or sockaddr_in6 (anything else: none).
  static Address from(const sockaddr* sa, socklen_t len);
  // "192.0.2.1:443", "[2001:db8::1]:443" or "host:443" (resolved with
  // getaddrinfo; not for the hot path). On failure returns nullopt and
  // sets `error` to a sentence naming the value.
  static std::optional<Address> parse(std::string_view text, std::string* error = nullptr);

  bool empty() const { return u_.sa.sa_family == AF_UNSPEC; }
  int family() const { return u_.sa.sa_family; }
  std::uint16_t port() const;
  const sockaddr* sockaddr_ptr() const { return &u_.sa; }
  socklen_t length() const;
  const sockaddr_in& in4() const { return u_.in; }
  const sockaddr_in6& in6() const { return u_.in6; }
  std::string to_string() const;  // "127.0.0.1:9", "[::1]:9", "none"
  // Same family, address, port (and IPv6 scope).
  bool operator==(const Address& o) const;

 private:
  union U {
    sockaddr sa;
    sockaddr_in in;
    sockaddr_in6 in6;
  } u_{};
};

// The two ECN bits of the IP header (RFC 3168).
enum class Ecn : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

// Largest UDP payload of one datagram (and of one GSO message in all):
// 65535 minus the UDP header, minus the IPv4 header for IPv4 (IPv6's payload
// length field does not count its own header).
inline constexpr std::uint32_t kMaxUdpPayloadV4 = 65535 - 8 - 20;
inline constexpr std::uint32_t kMaxUdpPayloadV6 = 65535 - 8;
// Segments per GSO message the kernel takes (UDP_MAX_SEGMENTS; 64 until
// Linux 6.x raised it: the lower figure works everywhere).
inline constexpr std::uint32_t kMaxGsoSegments = 64;
// Bytes charged to the scheduler per segment on top of its payload: UDP 8,
// IP 20 (IPv4) or 40 (IPv6), Ethernet 14 (fq's qdisc_pkt_len of the frame).
inline constexpr std::uint32_t kEthernetHeader = 14;
inline constexpr std::uint32_t frame_overhead(int family) {
  return 8 + (family == AF_INET6 ? 40U : 20U) + kEthernetHeader;
}
inline constexpr std::uint32_t max_udp_payload(int family) {
  return family == AF_INET6 ? kMaxUdpPayloadV6 : kMaxUdpPayloadV4;
}

struct Datagram {
  // What the scheduler decides on. First member: Datagram::of() gets the
  // record back from the packet the scheduler returns.
  Packet packet;

  // --- set by the application ---
  // The payload: the application's buffer (it stays the application's and
  // must not change until the datagram comes back through the completion),
  // or a PayloadPool slot (copy mode). With gso_size, the train's segments
  // back to back (the last may be shorter).
  const std::uint8_t* data = nullptr;
  std::uint32_t size = 0;
  // UDP GSO: cut the payload into segments of gso_size bytes (a train the
  // application built; sent as one message, charged as one packet of
  // `segments()` segments). 0: one datagram.
  std::uint16_t gso_size = 0;
  Ecn ecn = Ecn::not_ect;  // ECT(0)/ECT(1): the scheduler may mark CE
  // The socket to send on: the application's own UDP descriptor, or -1 for
  // the egress's socket of the destination's family.
  int fd = -1;
  Address dest;    // required
  Address source;  // optional source address (IP_PKTINFO / IPV6_PKTINFO; port ignored)
  std::uint32_t source_ifindex = 0;  // optional outgoing interface for the source
  std::uint64_t user = 0;  // free for the application

  // --- set by the egress when the datagram comes back ---
  int error = 0;              // errno of a refusal or a failed send; 0 when sent
  const char* why = nullptr;  // refusal reason (static text), nullptr when sent
  Ecn sent_ecn = Ecn::not_ect;  // the codepoint written to the wire

  // The datagram a packet belongs to. The packet must be a Datagram's
  // `packet` member (every packet given to a UdpEgress is).
  static Datagram& of(Packet& p) { return *reinterpret_cast<Datagram*>(&p); }
  static const Datagram& of(const Packet& p) { return *reinterpret_cast<const Datagram*>(&p); }

  // Segments on the wire: ceil(size / gso_size), 1 without GSO.
  std::uint32_t segments() const {
    if (gso_size == 0 || size <= gso_size) return 1;
    return (size + gso_size - 1U) / gso_size;
  }
  // Sets what the scheduler is charged from the record: packet.len = the
  // bytes on the wire (payload + UDP + IP + Ethernet header per segment),
  // packet.segments, packet.ect (any codepoint but not-ECT). Call after filling the
  // record, before submitting it.
  void charge();
  // The codepoint for the wire: CE when the scheduler marked an ECT packet.
  Ecn wire_ecn() const {
    return packet.ce && ecn != Ecn::not_ect ? Ecn::ce : ecn;
  }
};
static_assert(std::is_standard_layout_v<Datagram>, "Datagram::of needs a standard-layout record");
static_assert(offsetof(Datagram, packet) == 0, "Datagram::of needs the packet first");

// Why a datagram cannot be sent as described, before any system call (the
// descriptor is checked by the egress): 0 and nullptr when it can.
struct Refusal {
  int error = 0;
  const char* why = nullptr;
  explicit operator bool() const { return error != 0; }
};
Refusal check_datagram(const Datagram& d);

}  // namespace ufq::rt
