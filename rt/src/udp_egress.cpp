#include "ufq/rt/udp_egress.hpp"

#include <fcntl.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
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

// Payload bytes after the header: all zeros, shared by every datagram.
const std::uint8_t kZeros[65536] = {};

int open_socket(const UdpEgressConfig& cfg, bool connect_it) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  int buf = cfg.sndbuf;
  if (buf > 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  if (connect_it &&
      ::connect(fd, reinterpret_cast<const sockaddr*>(&cfg.dest), sizeof(cfg.dest)) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "connect");
  }
  return fd;
}

bool kernel_has_udp_gso(int fd) {
  int size = 1200;
  if (::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size)) != 0) return false;
  size = 0;
  ::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof(size));
  return true;
}

}  // namespace

UdpEgress::UdpEgress(UdpEgressConfig cfg) : cfg_(std::move(cfg)) {
  if (!cfg_.describe) throw std::invalid_argument("UdpEgress: describe function required");
  if (!cfg_.send)
    cfg_.send = [](int fd, mmsghdr* m, unsigned n, int flags) { return ::sendmmsg(fd, m, n, flags); };
  const bool per_flow = cfg_.sockets == UdpEgressConfig::Sockets::per_flow;
  const std::uint32_t n = per_flow ? std::max<std::uint32_t>(cfg_.flows, 1) : 1;
  fds_.reserve(n);
  try {
    for (std::uint32_t i = 0; i < n; ++i) fds_.push_back(open_socket(cfg_, per_flow));
  } catch (...) {
    for (int fd : fds_) ::close(fd);
    throw;
  }
  gso_ = cfg_.gso && kernel_has_udp_gso(fds_[0]);
  update_description();
}

UdpEgress::~UdpEgress() {
  for (int fd : fds_) ::close(fd);
}

void UdpEgress::update_description() {
  description_ = cfg_.sockets == UdpEgressConfig::Sockets::per_flow ? "udp per-flow sockets, sendmmsg"
                                                                    : "udp shared socket, sendmmsg";
  if (gso_) description_ += "+gso";
}

std::uint32_t UdpEgress::tx_room() { return blocked_ ? 0 : kStage - count_; }

int UdpEgress::fd_of(std::uint32_t i) const {
  if (fds_.size() == 1) return fds_[0];
  return fds_[dgram_[i].socket % fds_.size()];
}

int UdpEgress::poll_fd() const { return head_ < count_ ? fd_of(head_) : fds_[0]; }

bool UdpEgress::xmit(Packet& p, bool more) {
  if (blocked_ || count_ >= kStage) return false;
  const std::uint32_t i = count_++;
  staged_[i] = &p;
  dgram_[i] = cfg_.describe(p);
  hdr_[i] = dgram_[i].header;
  const std::uint32_t payload = std::min<std::uint32_t>(dgram_[i].payload, sizeof(kZeros));
  const std::uint32_t h = std::min<std::uint32_t>(payload, kWireHeaderSize);
  dgram_[i].payload = payload;
  iov_[2 * i] = iovec{&hdr_[i], h};
  iov_[2 * i + 1] = iovec{const_cast<std::uint8_t*>(kZeros), payload - h};
  if (!more || count_ == kStage) send_staged();
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

// Packets from i that can travel in one GSO message: same socket, same flow,
// same size, within the segment and byte limits.
std::uint32_t UdpEgress::run_length(std::uint32_t i) const {
  if (!gso_) return 1;
  const Datagram& a = dgram_[i];
  std::uint32_t n = 1;
  while (i + n < count_ && n < kMaxSegments && (n + 1) * a.payload <= kMaxGsoBytes) {
    const Datagram& b = dgram_[i + n];
    if (b.socket != a.socket || b.header.flow != a.header.flow || b.payload != a.payload) break;
    ++n;
  }
  return n;
}

std::uint32_t UdpEgress::send_staged() {
  std::uint32_t sent = 0;
  bool econnrefused_retried = false;
  std::uint32_t interrupted = 0;
  while (head_ < count_) {
    const int fd = fd_of(head_);
    std::uint32_t nmsg = 0;
    for (std::uint32_t i = head_; i < count_ && fd_of(i) == fd;) {
      const std::uint32_t seg = run_length(i);
      mmsghdr& m = msgs_[nmsg];
      m = mmsghdr{};
      if (fds_.size() == 1) {
        m.msg_hdr.msg_name = &cfg_.dest;
        m.msg_hdr.msg_namelen = sizeof(cfg_.dest);
      }
      m.msg_hdr.msg_iov = &iov_[2 * i];
      m.msg_hdr.msg_iovlen = 2 * seg;
      if (seg > 1) {
        m.msg_hdr.msg_control = cmsg_[nmsg].buf;
        m.msg_hdr.msg_controllen = sizeof(cmsg_[nmsg].buf);
        cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        const auto gso_size = static_cast<std::uint16_t>(dgram_[i].payload);
        std::memcpy(CMSG_DATA(c), &gso_size, sizeof(gso_size));
      }
      msg_first_[nmsg] = i;
      msg_count_[nmsg] = seg;
      ++nmsg;
      i += seg;
    }
    const int r = cfg_.send(fd, msgs_.data(), nmsg, 0);
    const Time t = mono_now();
    if (r > 0) {
      ++stats_.send_calls;
      interrupted = 0;
      for (int m = 0; m < r; ++m) {
        const std::uint32_t seg = msg_count_[m];
        ++stats_.messages;
        if (seg > 1) {
          ++stats_.gso_messages;
          stats_.gso_packets += seg;
        }
        for (std::uint32_t k = 0; k < seg; ++k) {
          Packet& p = *staged_[msg_first_[m] + k];
          ++stats_.packets;
          ++sent;
          complete(p, TxResult::sent, t);
        }
        head_ += seg;
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
    if (msg_count_[0] > 1 && (err == EINVAL || err == EIO || err == EOPNOTSUPP)) {
      // The path cannot take GSO: send the same packets one by one.
      gso_ = false;
      update_description();
      continue;
    }
    // A hard error: the packets of the first message are given up (counted).
    stats_.last_errno = err;
    for (std::uint32_t k = 0; k < msg_count_[0]; ++k) {
      ++stats_.failed;
      complete(*staged_[msg_first_[0] + k], TxResult::failed, t, err);
    }
    head_ += msg_count_[0];
  }
  count_ = head_ = 0;
  blocked_ = false;
  return sent;
}

void UdpEgress::abandon(const std::function<void(Packet&)>& fn) {
  for (std::uint32_t i = head_; i < count_; ++i) fn(*staged_[i]);
  count_ = head_ = 0;
  blocked_ = false;
}

}  // namespace ufq::rt
