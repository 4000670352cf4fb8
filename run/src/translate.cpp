#include "translate.hpp"

#include <limits.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <time.h>

#include <cstring>

#include "ufq/rt/clock.hpp"

namespace ufq::run {
namespace {

// The kernel's TOS-to-priority map (rt_tos2priority: TC_PRIO_* by the TOS
// bits 1-4): an IP_TOS control message sets the datagram's priority too.
constexpr std::uint8_t kTos2Prio[16] = {0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4};
std::uint8_t tos_priority(int tos) { return kTos2Prio[(tos & 0x1E) >> 1]; }

std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

std::uint32_t dest_hash(std::uint64_t socket_id, const rt::Address& a) {
  std::uint64_t h = socket_id * 0x9E3779B97F4A7C15ULL ^ a.port();
  if (a.family() == AF_INET) {
    h ^= static_cast<std::uint64_t>(a.in4().sin_addr.s_addr) << 16;
  } else {
    std::uint64_t w[2];
    std::memcpy(w, &a.in6().sin6_addr, sizeof(w));
    h ^= mix(w[0]) ^ (static_cast<std::uint64_t>(mix(w[1])) << 32);
  }
  return mix(h);
}

Time to_monotonic(std::uint64_t t, clockid_t clock) {
  if (t == 0 || clock == CLOCK_MONOTONIC) return static_cast<Time>(t);
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return static_cast<Time>(t);
  const std::uint64_t other = static_cast<std::uint64_t>(ts.tv_sec) * kNsecPerSec +
                              static_cast<std::uint64_t>(ts.tv_nsec);
  const Time mono = rt::mono_now();
  return t > other ? mono + static_cast<Time>(t - other) : mono;
}

// The destination from msg_name, as udp_sendmsg/udpv6_sendmsg read it.
// False: let the kernel answer (EINVAL, EAFNOSUPPORT).
bool read_dest(int family, const void* name, socklen_t len, rt::Address& out, bool& none) {
  none = false;
  if (!name || len == 0) {
    none = true;
    return true;
  }
  sa_family_t fam = 0;
  if (len < sizeof(sa_family_t)) return false;
  std::memcpy(&fam, name, sizeof(fam));
  if (family == AF_INET) {
    if (len < sizeof(sockaddr_in) || (fam != AF_INET && fam != AF_UNSPEC)) return false;
    sockaddr_in sin{};
    std::memcpy(&sin, name, sizeof(sin));
    if (sin.sin_port == 0) return false;
    out = rt::Address::v4(sin.sin_addr, ntohs(sin.sin_port));
    return true;
  }
  if (fam == AF_UNSPEC) {  // an IPv6 socket takes AF_UNSPEC as "no address"
    none = true;
    return true;
  }
  if (fam == AF_INET) {  // to an IPv4 destination through a dual-stack socket
    if (len < sizeof(sockaddr_in)) return false;
    sockaddr_in sin{};
    std::memcpy(&sin, name, sizeof(sin));
    if (sin.sin_port == 0) return false;
    in6_addr m{};
    m.s6_addr[10] = m.s6_addr[11] = 0xFF;
    std::memcpy(&m.s6_addr[12], &sin.sin_addr, 4);
    out = rt::Address::v6(m, ntohs(sin.sin_port));
    return true;
  }
  if (fam != AF_INET6 || len < sizeof(sockaddr_in6)) return false;
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, name, sizeof(sin6));
  if (sin6.sin6_port == 0) return false;
  // An unspecified destination means the loopback, which the kernel
  // rewrites; leave that rule to it.
  if (IN6_IS_ADDR_UNSPECIFIED(&sin6.sin6_addr)) return false;
  out = rt::Address::v6(sin6.sin6_addr, ntohs(sin6.sin6_port), sin6.sin6_scope_id);
  return true;
}

}  // namespace

const char* to_string(PassReason r) {
  switch (r) {
    case PassReason::none: return "none";
    case PassReason::kernel_decides: return "kernel_decides";
    case PassReason::corked: return "corked";
    case PassReason::unmodelled_cmsg: return "unmodelled_cmsg";
    case PassReason::unmodelled_flag: return "unmodelled_flag";
    case PassReason::no_room: return "no_memory";
    case PassReason::count: break;
  }
  return "?";
}

bool iov_total(const iovec* iov, std::size_t n, std::size_t& total) {
  total = 0;
  if (n > IOV_MAX) return false;
  if (n > 0 && !iov) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (iov[i].iov_len > 0 && !iov[i].iov_base) return false;
    if (iov[i].iov_len > static_cast<std::size_t>(SSIZE_MAX) - total) return false;
    total += iov[i].iov_len;
  }
  return true;
}

PassReason translate(const SocketEntry& e, const SocketOptions& o, const msghdr& m, int flags,
                     SendPlan& plan) {
  constexpr int kModelledFlags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_CONFIRM | MSG_EOR;
  if (flags & MSG_MORE || o.corked) return PassReason::corked;
  if (flags & MSG_OOB) return PassReason::kernel_decides;  // EOPNOTSUPP
  if (flags & ~kModelledFlags) return PassReason::unmodelled_flag;
  plan.dontwait = (flags & MSG_DONTWAIT) != 0;

  if (!iov_total(m.msg_iov, m.msg_iovlen, plan.size)) return PassReason::kernel_decides;
  if (plan.size > rt::max_udp_payload(e.family)) return PassReason::kernel_decides;  // EMSGSIZE

  bool no_dest = false;
  if (!read_dest(e.family, m.msg_name, m.msg_namelen, plan.dest, no_dest)) return PassReason::kernel_decides;
  if (no_dest) {
    if (!o.connected) return PassReason::kernel_decides;  // EDESTADDRREQ
    plan.dest = o.peer;
  }
  // An IPv6-only socket refuses IPv4 destinations (ENETUNREACH): the kernel says so.
  if (o.v6only && plan.dest.family() == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&plan.dest.in6().sin6_addr))
    return PassReason::kernel_decides;
  plan.connected_flow = o.connected;
  plan.hash = plan.connected_flow ? 0 : dest_hash(e.id, plan.dest);
  plan.priority = static_cast<std::uint8_t>(o.priority > 255 ? 255 : o.priority);
  // The egress writes only the ECN bits in its control message: a socket
  // whose TOS has DSCP bits keeps them by sending without one (the socket's
  // own TOS, ECN included, goes on the wire; fq cannot mark CE then).
  plan.ecn = o.dscp ? rt::Ecn::not_ect : static_cast<rt::Ecn>(o.ecn & 3);
  plan.gso_size = o.udp_segment;

  // Control messages, walked the way the kernel walks them: a malformed
  // one, or a kind the record cannot carry, goes to the kernel.
  if (m.msg_controllen > 0) {
    if (!m.msg_control) return PassReason::kernel_decides;  // EFAULT
    if (m.msg_controllen > static_cast<std::size_t>(INT_MAX)) return PassReason::kernel_decides;  // ENOBUFS
    const auto* base = static_cast<const unsigned char*>(m.msg_control);
    std::size_t off = 0;
    while (m.msg_controllen - off >= sizeof(cmsghdr)) {
      cmsghdr c{};
      std::memcpy(&c, base + off, sizeof(c));
      if (c.cmsg_len < sizeof(cmsghdr) || c.cmsg_len > m.msg_controllen - off)
        return PassReason::kernel_decides;  // !CMSG_OK: EINVAL
      const unsigned char* data = base + off + CMSG_LEN(0);
      const std::size_t dlen = c.cmsg_len - CMSG_LEN(0);
      if (c.cmsg_level == SOL_UDP) {
        if (c.cmsg_type != UDP_SEGMENT || c.cmsg_len != CMSG_LEN(sizeof(std::uint16_t)))
          return PassReason::kernel_decides;
        std::memcpy(&plan.gso_size, data, sizeof(std::uint16_t));
      } else if (c.cmsg_level == SOL_SOCKET) {
        if (c.cmsg_type == SCM_TXTIME) {
          if (!o.txtime || c.cmsg_len != CMSG_LEN(sizeof(std::uint64_t))) return PassReason::kernel_decides;
          std::uint64_t t = 0;
          std::memcpy(&t, data, sizeof(t));
          plan.tstamp = to_monotonic(t, o.txtime_clock);
        } else if (c.cmsg_type == SCM_RIGHTS || c.cmsg_type == SCM_CREDENTIALS) {
          // ignored by UDP, as in the kernel
        } else {
          return PassReason::unmodelled_cmsg;  // SO_MARK, timestamping, ...: the kernel decides
        }
      } else if (e.family == AF_INET && c.cmsg_level == IPPROTO_IP) {
        if (c.cmsg_type == IP_PKTINFO) {
          if (c.cmsg_len != CMSG_LEN(sizeof(in_pktinfo))) return PassReason::kernel_decides;
          in_pktinfo pi{};
          std::memcpy(&pi, data, sizeof(pi));
          plan.source = rt::Address::v4(pi.ipi_spec_dst, 0);
          plan.source_ifindex = static_cast<std::uint32_t>(pi.ipi_ifindex);
          if (pi.ipi_spec_dst.s_addr == 0 && pi.ipi_ifindex != 0) return PassReason::unmodelled_cmsg;
          if (pi.ipi_spec_dst.s_addr == 0) plan.source = rt::Address{};
        } else if (c.cmsg_type == IP_TOS) {
          int tos = 0;
          if (c.cmsg_len == CMSG_LEN(sizeof(int)))
            std::memcpy(&tos, data, sizeof(int));
          else if (c.cmsg_len == CMSG_LEN(sizeof(std::uint8_t)))
            tos = *data;
          else
            return PassReason::kernel_decides;
          if (tos < 0 || tos > 255) return PassReason::kernel_decides;
          // The record carries only the ECN bits (send-path.md): a DSCP
          // other than the socket's goes to the kernel as given.
          if ((tos & ~3) != 0) return PassReason::unmodelled_cmsg;
          plan.ecn = static_cast<rt::Ecn>(tos & 3);
          plan.priority = tos_priority(tos);
        } else {
          return PassReason::unmodelled_cmsg;  // IP_TTL, IP_RETOPTS, ... (or EINVAL)
        }
      } else if (e.family == AF_INET6 && c.cmsg_level == IPPROTO_IPV6) {
        if (c.cmsg_type == IPV6_PKTINFO) {
          if (c.cmsg_len < CMSG_LEN(sizeof(in6_pktinfo))) return PassReason::kernel_decides;
          in6_pktinfo pi{};
          std::memcpy(&pi, data, sizeof(pi));
          // The kernel checks the interface and that the source is ours.
          if (pi.ipi6_ifindex != 0 || !IN6_IS_ADDR_UNSPECIFIED(&pi.ipi6_addr))
            return PassReason::unmodelled_cmsg;
        } else if (c.cmsg_type == IPV6_TCLASS) {
          if (c.cmsg_len != CMSG_LEN(sizeof(int))) return PassReason::kernel_decides;
          int tc = 0;
          std::memcpy(&tc, data, sizeof(int));
          if (tc < -1 || tc > 255) return PassReason::kernel_decides;
          if (tc >= 0 && (tc & ~3) != 0) return PassReason::unmodelled_cmsg;
          if (tc >= 0) plan.ecn = static_cast<rt::Ecn>(tc & 3);
        } else {
          return PassReason::unmodelled_cmsg;
        }
      } else if (e.family == AF_INET6 && c.cmsg_level == IPPROTO_IP) {
        return PassReason::unmodelled_cmsg;  // IP_* on an IPv6 socket (v4-mapped rules)
      }
      // Other levels are skipped, as the kernel skips them.
      (void)dlen;
      off += CMSG_ALIGN(c.cmsg_len);
    }
  }
  if (plan.gso_size && plan.size > plan.gso_size) {
    // Trains the egress cannot send as one (more segments than it takes):
    // the kernel's rules decide.
    if ((plan.size + plan.gso_size - 1) / plan.gso_size > rt::kMaxGsoSegments) return PassReason::kernel_decides;
  } else {
    plan.gso_size = 0;
  }
  return PassReason::none;
}

}  // namespace ufq::run
