#include "ufq/rt/datagram.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

namespace ufq::rt {

Address Address::v4(const in_addr& a, std::uint16_t port) {
  Address r;
  r.u_.in.sin_family = AF_INET;
  r.u_.in.sin_addr = a;
  r.u_.in.sin_port = htons(port);
  return r;
}

Address Address::v6(const in6_addr& a, std::uint16_t port, std::uint32_t scope_id) {
  Address r;
  r.u_.in6.sin6_family = AF_INET6;
  r.u_.in6.sin6_addr = a;
  r.u_.in6.sin6_port = htons(port);
  r.u_.in6.sin6_scope_id = scope_id;
  return r;
}

Address Address::loopback_v4(std::uint16_t port) {
  in_addr a{};
  a.s_addr = htonl(INADDR_LOOPBACK);
  return v4(a, port);
}

Address Address::loopback_v6(std::uint16_t port) { return v6(in6addr_loopback, port); }

Address Address::from(const sockaddr* sa, socklen_t len) {
  Address r;
  if (sa && sa->sa_family == AF_INET && len >= sizeof(sockaddr_in))
    std::memcpy(&r.u_.in, sa, sizeof(sockaddr_in));
  else if (sa && sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6))
    std::memcpy(&r.u_.in6, sa, sizeof(sockaddr_in6));
  return r;
}

std::optional<Address> Address::parse(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<Address> {
    if (error) {
      error->assign(1, '"');
      error->append(text);
      error->append("\": ");
      error->append(why);
    }
    return std::nullopt;
  };
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail("expected [IPv6]:PORT");
    host = std::string(text.substr(1, close - 1));
    port = std::string(text.substr(close + 2));
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("expected HOST:PORT (IPv6 as [ADDR]:PORT)");
    host = std::string(text.substr(0, colon));
    port = std::string(text.substr(colon + 1));
    if (host.find(':') != std::string::npos) return fail("an IPv6 address must be in brackets: [ADDR]:PORT");
  }
  if (host.empty()) return fail("no host");
  char* end = nullptr;
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p == 0 || p > 65535) return fail("the port must be 1..65535");
  const auto port16 = static_cast<std::uint16_t>(p);
  in_addr a4{};
  in6_addr a6{};
  if (::inet_pton(AF_INET, host.c_str(), &a4) == 1) return v4(a4, port16);
  if (::inet_pton(AF_INET6, host.c_str(), &a6) == 1) return v6(a6, port16);
  // A name: resolved (may open a socket to the resolver).
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_protocol = IPPROTO_UDP;
  hints.ai_family = AF_UNSPEC;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res) return fail(std::string("cannot resolve the host: ") + ::gai_strerror(rc));
  Address a = from(res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (a.empty()) return fail("not an IPv4 or IPv6 address");
  return a;
}

std::uint16_t Address::port() const {
  if (family() == AF_INET) return ntohs(u_.in.sin_port);
  if (family() == AF_INET6) return ntohs(u_.in6.sin6_port);
  return 0;
}

socklen_t Address::length() const {
  if (family() == AF_INET) return sizeof(sockaddr_in);
  if (family() == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

std::string Address::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    ::inet_ntop(AF_INET, &u_.in.sin_addr, buf, sizeof(buf));
    std::string s(buf);
    s += ':';
    s += std::to_string(port());
    return s;
  }
  if (family() == AF_INET6) {
    ::inet_ntop(AF_INET6, &u_.in6.sin6_addr, buf, sizeof(buf));
    std::string s(1, '[');
    s += buf;
    s += "]:";
    s += std::to_string(port());
    return s;
  }
  return "none";
}

bool Address::operator==(const Address& o) const {
  if (family() != o.family()) return false;
  if (family() == AF_INET)
    return u_.in.sin_port == o.u_.in.sin_port && u_.in.sin_addr.s_addr == o.u_.in.sin_addr.s_addr;
  if (family() == AF_INET6)
    return u_.in6.sin6_port == o.u_.in6.sin6_port && u_.in6.sin6_scope_id == o.u_.in6.sin6_scope_id &&
           std::memcmp(&u_.in6.sin6_addr, &o.u_.in6.sin6_addr, sizeof(in6_addr)) == 0;
  return true;
}

void Datagram::charge() {
  const std::uint32_t n = segments();
  packet.segments = static_cast<std::uint16_t>(n > 0xFFFF ? 0xFFFF : n);
  const std::uint64_t len = std::uint64_t{size} + std::uint64_t{n} * frame_overhead(dest.family());
  packet.len = static_cast<std::uint32_t>(len > 0xFFFFFFFFULL ? 0xFFFFFFFFULL : len);
  packet.ect = ecn != Ecn::not_ect;  // CE is ECN-capable too (a relay forwarding a mark)
}

Refusal check_datagram(const Datagram& d) {
  const int fam = d.dest.family();
  if (d.dest.empty()) return {EDESTADDRREQ, "no destination address"};
  if (fam != AF_INET && fam != AF_INET6) return {EAFNOSUPPORT, "the destination is neither IPv4 nor IPv6"};
  if (d.dest.port() == 0) return {EDESTADDRREQ, "the destination port is 0"};
  if (!d.source.empty() && d.source.family() != fam)
    return {EAFNOSUPPORT, "the source address is not of the destination's family"};
  if (d.size > 0 && d.data == nullptr) return {EFAULT, "no payload buffer for a non-empty payload"};
  if (d.size > max_udp_payload(fam))
    return {EMSGSIZE, fam == AF_INET6 ? "payload above 65527 bytes (IPv6 UDP)"
                                      : "payload above 65507 bytes (IPv4 UDP)"};
  if (d.gso_size > 0) {
    if (d.gso_size > max_udp_payload(fam)) return {EINVAL, "GSO segment size above the family's UDP payload limit"};
    if (d.segments() > kMaxGsoSegments) return {EINVAL, "more than 64 GSO segments"};
  }
  return {};
}

}  // namespace ufq::rt
