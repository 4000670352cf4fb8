#include "ufq/rt/udp_egress.hpp"

#include <netinet/udp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "ufq/rt/clock.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

namespace ufq::rt {
namespace {

int open_socket(int family, int sndbuf) {
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return -1;
  if (family == AF_INET6) {
    int on = 1;  // IPv4 destinations use the IPv4 socket
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  }
  int buf = sndbuf;
  if (buf > 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  return fd;
}

bool kernel_has_udp_gso(int fd) {
  int size = 1200;
  if (::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size)) != 0) return false;
  size = 0;
  ::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size));
  return true;
}

bool same_path(const Datagram& a, const Datagram& b) {
  return a.dest == b.dest && a.source == b.source && a.source_ifindex == b.source_ifindex &&
         a.wire_ecn() == b.wire_ecn();
}

cmsghdr* put_cmsg(cmsghdr* c, int level, int type, const void* data, std::size_t len) {
  c->cmsg_level = level;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(len);
  std::memcpy(CMSG_DATA(c), data, len);
  return c;
}

}  // namespace

UdpEgress::UdpEgress(UdpEgressConfig cfg) : cfg_(std::move(cfg)) {
  if (!cfg_.send)
    cfg_.send = [](int fd, mmsghdr* m, unsigned n, int flags) { return ::sendmmsg(fd, m, n, flags); };
  if (cfg_.open_ipv4) {
    fd4_ = open_socket(AF_INET, cfg_.sndbuf);
    if (fd4_ < 0) throw std::system_error(errno, std::generic_category(), "socket(AF_INET)");
  }
  if (cfg_.open_ipv6) fd6_ = open_socket(AF_INET6, cfg_.sndbuf);  // no IPv6: left out
  const int probe = fd4_ >= 0 ? fd4_ : fd6_;
  gso_ = cfg_.gso && probe >= 0 && kernel_has_udp_gso(probe);
  if (cfg_.gso && probe < 0) {
    // Only the application's sockets: probe with a scratch one.
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    gso_ = s >= 0 && kernel_has_udp_gso(s);
    if (s >= 0) ::close(s);
  }
  update_description();
}

UdpEgress::~UdpEgress() {
  if (fd4_ >= 0) ::close(fd4_);
  if (fd6_ >= 0) ::close(fd6_);
}

void UdpEgress::update_description() {
  description_ = "udp sendmmsg";
  if (gso_) description_ += "+gso";
}

std::uint32_t UdpEgress::tx_room() { return blocked_ ? 0 : kStage - count_; }

int UdpEgress::poll_fd() const {
  if (head_ < count_) return fd_[head_];
  return fd4_ >= 0 ? fd4_ : fd6_;
}

// The descriptor a datagram is sent on, checked the first time it is seen:
// open, a socket, UDP, and able to reach the destination's family as the
// kernel decides it: an IPv4 destination on a dual-stack IPv6 socket is
// sent (the kernel takes a sockaddr_in there), on an IPV6_V6ONLY one it is
// ENETUNREACH; an IPv6 destination on an IPv4 socket is EAFNOSUPPORT.
// Remembered (a few) so the hot path makes no system call for it; a hard
// send error forgets it.
Refusal UdpEgress::resolve_fd(const Datagram& d, int& fd) {
  const int fam = d.dest.family();
  if (d.fd < 0) {
    fd = fam == AF_INET6 ? fd6_ : fd4_;
    if (fd < 0) return {EAFNOSUPPORT, "the egress has no socket of the destination's family"};
    return {};
  }
  fd = d.fd;
  int domain = 0;
  bool v6only = false;
  bool known = false;
  for (const FdInfo& f : fds_seen_)
    if (f.fd == fd) {
      domain = f.domain;
      v6only = f.v6only;
      known = true;
      break;
    }
  if (!known) {
    int type = 0, proto = 0;
    socklen_t len = sizeof(type);
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
      if (errno == EBADF) return {EBADF, "the descriptor is not open"};
      if (errno == ENOTSOCK) return {ENOTSOCK, "the descriptor is not a socket"};
      return {errno, "the descriptor cannot be checked (getsockopt SO_TYPE)"};
    }
    len = sizeof(proto);
    if (::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0) proto = 0;
    len = sizeof(domain);
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) domain = 0;
    if (type != SOCK_DGRAM || proto != IPPROTO_UDP) return {EPROTOTYPE, "the descriptor is not a UDP socket"};
    if (domain != AF_INET && domain != AF_INET6) return {EAFNOSUPPORT, "the socket is neither IPv4 nor IPv6"};
    if (domain == AF_INET6) {
      int on = 0;
      len = sizeof(on);
      v6only = ::getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, &len) == 0 && on != 0;
    }
    fds_seen_[fd_next_] = FdInfo{fd, domain, v6only};
    fd_next_ = (fd_next_ + 1) % kFdCache;
  }
  if (domain == AF_INET && fam == AF_INET6)
    return {EAFNOSUPPORT, "an IPv6 destination on an IPv4 socket"};
  if (domain == AF_INET6 && fam == AF_INET && v6only)
    return {ENETUNREACH, "an IPv4 destination on an IPV6_V6ONLY socket"};
  return {};
}

void UdpEgress::forget_fd(int fd) {
  for (FdInfo& f : fds_seen_)
    if (f.fd == fd) f = FdInfo{};
}

void UdpEgress::refuse(Datagram& d, const Refusal& r) {
  d.error = r.error;
  d.why = r.why;
  ++stats_.failed;
  ++stats_.refused;
  stats_.last_errno = r.error;
  complete(d.packet, TxResult::failed, mono_now(), r.error);
}

bool UdpEgress::xmit(Packet& p, bool more) {
  if (blocked_ || count_ >= kStage) return false;
  Datagram& d = Datagram::of(p);
  d.error = 0;
  d.why = nullptr;
  int fd = -1;
  Refusal r = check_datagram(d);
  if (!r) r = resolve_fd(d, fd);
  if (r) {
    refuse(d, r);
  } else {
    const std::uint32_t i = count_++;
    staged_[i] = &d;
    fd_[i] = fd;
    seg_sent_[i] = 0;
  }
  if ((!more || count_ == kStage) && count_ > head_) send_staged();
  return true;
}

std::uint32_t UdpEgress::flush() {
  if (head_ >= count_) {
    blocked_ = false;
    count_ = head_ = 0;
    return 0;
  }
  ++stats_.retries;
  blocked_ = false;
  return send_staged();
}

// Single datagrams from i that can share one GSO message: same socket and
// wire path (destination, source, codepoint), the size of the first (the
// last may be shorter, and ends the run), within the segment and byte limits.
std::uint32_t UdpEgress::merge_length(std::uint32_t i) const {
  const Datagram& a = *staged_[i];
  if (!gso_ || a.segments() > 1 || a.size == 0) return 1;
  const std::uint32_t limit = max_udp_payload(a.dest.family());
  std::uint32_t n = 1, bytes = a.size;
  while (i + n < count_ && n < kMaxGsoSegments) {
    const Datagram& b = *staged_[i + n];
    if (fd_[i + n] != fd_[i] || b.segments() > 1 || b.size == 0 || b.size > a.size || bytes + b.size > limit ||
        !same_path(a, b))
      break;
    bytes += b.size;
    ++n;
    if (b.size < a.size) break;  // a shorter segment can only be the last
  }
  return n;
}

void UdpEgress::fill_msg(std::uint32_t nmsg, const Datagram& d, iovec* iov, std::size_t niov,
                         std::uint16_t gso_size) {
  mmsghdr& m = msgs_[nmsg];
  m = mmsghdr{};
  m.msg_hdr.msg_name = const_cast<sockaddr*>(d.dest.sockaddr_ptr());
  m.msg_hdr.msg_namelen = d.dest.length();
  m.msg_hdr.msg_iov = iov;
  m.msg_hdr.msg_iovlen = niov;
  unsigned char* buf = cmsg_[nmsg].buf;
  std::size_t used = 0;
  const bool v6 = d.dest.family() == AF_INET6;
  auto next = [&](std::size_t len) {
    auto* c = reinterpret_cast<cmsghdr*>(buf + used);
    used += CMSG_SPACE(len);
    return c;
  };
  if (!d.source.empty() || d.source_ifindex != 0) {
    if (v6) {
      in6_pktinfo pi{};
      if (!d.source.empty()) pi.ipi6_addr = d.source.in6().sin6_addr;
      pi.ipi6_ifindex = d.source_ifindex;
      put_cmsg(next(sizeof(pi)), IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi));
    } else {
      in_pktinfo pi{};
      if (!d.source.empty()) pi.ipi_spec_dst = d.source.in4().sin_addr;
      pi.ipi_ifindex = static_cast<int>(d.source_ifindex);
      put_cmsg(next(sizeof(pi)), IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
    }
  }
  const Ecn ecn = d.wire_ecn();
  if (ecn != Ecn::not_ect) {
    const int tos = static_cast<int>(ecn);
    if (v6)
      put_cmsg(next(sizeof(int)), IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
    else
      put_cmsg(next(sizeof(int)), IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  }
  if (gso_size) put_cmsg(next(sizeof(gso_size)), SOL_UDP, UDP_SEGMENT, &gso_size, sizeof(gso_size));
  if (used) {
    m.msg_hdr.msg_control = buf;
    m.msg_hdr.msg_controllen = used;
  }
}

// Messages for the run of staged datagrams on `fd` from head_.
std::uint32_t UdpEgress::build(int fd, std::uint32_t& nmsg) {
  std::uint32_t niov = 0;
  nmsg = 0;
  for (std::uint32_t i = head_; i < count_ && fd_[i] == fd && nmsg < kMaxMsgs;) {
    const Datagram& d = *staged_[i];
    const std::uint32_t segs = d.segments();
    if (segs > 1 && !gso_) {
      // A train without GSO: one message per segment still to send.
      std::uint32_t s = seg_sent_[i];
      for (; s < segs && nmsg < kMaxMsgs; ++s) {
        const std::uint32_t off = s * d.gso_size;
        iov_[niov] = iovec{const_cast<std::uint8_t*>(d.data) + off, std::min<std::uint32_t>(d.gso_size, d.size - off)};
        fill_msg(nmsg, d, &iov_[niov], 1, 0);
        msg_[nmsg] = Msg{i, s + 1 == segs ? 1U : 0U, 1, false, true};
        ++niov;
        ++nmsg;
      }
      if (s < segs) break;  // the rest next call
      ++i;
      continue;
    }
    if (segs > 1) {  // the application's train: one UDP_SEGMENT message
      iov_[niov] = iovec{const_cast<std::uint8_t*>(d.data), d.size};
      fill_msg(nmsg, d, &iov_[niov], 1, d.gso_size);
      msg_[nmsg] = Msg{i, 1, segs, true, false};
      ++niov;
      ++nmsg;
      ++i;
      continue;
    }
    const std::uint32_t run = merge_length(i);
    for (std::uint32_t k = 0; k < run; ++k)
      iov_[niov + k] = iovec{const_cast<std::uint8_t*>(staged_[i + k]->data), staged_[i + k]->size};
    fill_msg(nmsg, d, &iov_[niov], run, run > 1 ? static_cast<std::uint16_t>(d.size) : 0);
    msg_[nmsg] = Msg{i, run, run, run > 1, false};
    niov += run;
    ++nmsg;
    i += run;
  }
  return niov;
}

std::uint32_t UdpEgress::send_staged() {
  std::uint32_t sent = 0;
  bool econnrefused_retried = false;
  std::uint32_t interrupted = 0;
  while (head_ < count_) {
    const int fd = fd_[head_];
    std::uint32_t nmsg = 0;
    build(fd, nmsg);
    const int r = cfg_.send(fd, msgs_.data(), nmsg, MSG_DONTWAIT);
    const Time t = mono_now();
    if (r > 0) {
      ++stats_.send_calls;
      interrupted = 0;
      for (int k = 0; k < r; ++k) {
        const Msg& m = msg_[static_cast<std::size_t>(k)];
        ++stats_.messages;
        if (m.gso) {
          ++stats_.gso_messages;
          stats_.gso_packets += m.count;
          stats_.gso_segments += m.segments;
        }
        if (m.piece) {
          ++seg_sent_[m.first];
          if (m.count == 0) continue;  // more segments of this train to go
        }
        for (std::uint32_t j = 0; j < m.count; ++j) {
          Datagram& d = *staged_[m.first + j];
          d.sent_ecn = d.wire_ecn();
          if (d.sent_ecn == Ecn::ce && d.packet.ce) ++stats_.ce_marked;
          ++stats_.packets;
          ++sent;
          complete(d.packet, TxResult::sent, t);
        }
        head_ = m.first + m.count;
      }
      continue;
    }
    const int err = r < 0 ? errno : EAGAIN;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
      ++stats_.blocked;
      if (err == ENOBUFS)
        ++stats_.enobufs;
      else
        ++stats_.eagain;
      blocked_ = true;
      return sent;
    }
    if (err == EINTR) {
      // Interrupted before anything was sent: send again, but a storm of
      // signals is treated as a refused send (kept for flush()), so the
      // pacer gets back to its loop and sees a stop request.
      ++stats_.eintr;
      if (++interrupted < kMaxInterrupted) continue;
      blocked_ = true;
      return sent;
    }
    if (err == ECONNREFUSED && !econnrefused_retried) {
      // A connected socket reports an earlier ICMP error once; the datagram
      // itself was not sent: send it again.
      ++stats_.econnrefused_retries;
      econnrefused_retried = true;
      continue;
    }
    if (msg_[0].gso && (err == EINVAL || err == EIO || err == EOPNOTSUPP)) {
      // The path cannot take GSO: send the same datagrams one segment per message.
      gso_ = false;
      ++stats_.gso_fallbacks;
      update_description();
      continue;
    }
    // A hard error: the datagrams of the first message are given up (a
    // train met by it mid-way fails whole: some segments may have left).
    if (err == EBADF || err == ENOTSOCK) forget_fd(fd);
    stats_.last_errno = err;
    const Msg m = msg_[0];
    const std::uint32_t n = m.piece ? 1 : m.count;
    for (std::uint32_t j = 0; j < n; ++j) {
      Datagram& d = *staged_[m.first + j];
      d.error = err;
      d.why = "the send failed";
      ++stats_.failed;
      complete(d.packet, TxResult::failed, t, err);
    }
    head_ = m.first + n;
  }
  count_ = head_ = 0;
  blocked_ = false;
  return sent;
}

void UdpEgress::abandon(const std::function<void(Packet&)>& fn) {
  for (std::uint32_t i = head_; i < count_; ++i) fn(staged_[i]->packet);
  count_ = head_ = 0;
  blocked_ = false;
}

}  // namespace ufq::rt
