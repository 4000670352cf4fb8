// UDP egress for application datagrams (datagram.hpp): every packet given to
// it is a Datagram's `packet`, and each message uses its datagram's socket,
// destination, source (IP_PKTINFO / IPV6_PKTINFO), ECN codepoint (IP_TOS /
// IPV6_TCLASS, CE when the scheduler marked it) and GSO segment size
// (UDP_SEGMENT). docs/send-path.md is the full description.
//
// Batching: one sendmmsg per run of datagrams on one socket. With GSO on,
// consecutive single datagrams with the same socket, destination, source,
// codepoint and size (the last may be shorter) travel as one UDP_SEGMENT
// message, up to 64 segments and the family's UDP payload limit; the
// scheduler released them all before this send, so none leaves early and
// none waits for another. A train the application built (gso_size) goes as
// its own message. EIO, EINVAL or EOPNOTSUPP on a GSO message switch GSO off
// for good and the same datagrams are sent again one segment per message.
//
// Errors: EAGAIN and ENOBUFS keep the datagrams staged for flush() (nothing
// is lost); EINTR sends again (16 in a row count as a refused send);
// ECONNREFUSED (a connected socket's earlier ICMP error) sends again once.
// Any other errno fails the datagrams of the message that met it. A
// datagram that cannot be sent as described (check_datagram, or its
// descriptor closed, not a socket, not UDP, of the other family) is refused
// in xmit(): it comes back at once as failed, with Datagram::error and
// Datagram::why set. Every datagram comes back exactly once.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "ufq/driver/qdisc_runner.hpp"
#include "ufq/rt/datagram.hpp"
#include "ufq/rt/egress.hpp"

namespace ufq::rt {

// The sendmmsg(2) system call, replaceable for tests (failure injection).
using SendmmsgFn = std::function<int(int fd, mmsghdr* msgs, unsigned n, int flags)>;

struct UdpEgressConfig {
  bool gso = true;          // use UDP GSO when the kernel supports it
  bool open_ipv4 = true;    // the egress's own sockets, for datagrams with fd = -1
  bool open_ipv6 = true;    // (an IPv6 socket that cannot be opened is left out)
  int sndbuf = 4 << 20;     // SO_SNDBUF of the egress's sockets (SO_SNDBUFFORCE when allowed)
  SendmmsgFn send;          // default: ::sendmmsg
};

class UdpEgress final : public Egress {
 public:
  // Opens the egress's own sockets (in the caller's current network
  // namespace). Throws std::system_error when the IPv4 socket cannot be
  // opened.
  explicit UdpEgress(UdpEgressConfig cfg = {});
  ~UdpEgress() override;

  std::uint32_t tx_room() override;
  // `p` must be a Datagram's packet. Refused datagrams complete inside.
  bool xmit(Packet& p, bool more) override;
  std::uint32_t flush() override;
  std::uint32_t pending() const override { return count_ - head_; }
  int poll_fd() const override;
  void abandon(const std::function<void(Packet&)>& fn) override;
  const char* describe() const override { return description_.c_str(); }

  bool gso_enabled() const { return gso_; }
  bool blocked() const { return blocked_; }
  // The egress's own sockets (-1 when not open), e.g. to bind or read them.
  int socket_v4() const { return fd4_; }
  int socket_v6() const { return fd6_; }

 private:
  static constexpr std::uint32_t kStage = kMaxBulk;     // datagrams staged per bulk
  static constexpr std::uint32_t kMaxMsgs = 64;         // messages per sendmmsg
  static constexpr std::uint32_t kMaxIov = kStage + kMaxMsgs;
  static constexpr std::uint32_t kMaxInterrupted = 16;  // EINTRs in a row before backing off
  static constexpr std::uint32_t kFdCache = 16;         // descriptors checked, remembered

  struct Msg {
    std::uint32_t first = 0;  // staged index
    std::uint32_t count = 0;  // datagrams it completes (0 for a piece of a train)
    std::uint32_t segments = 0;
    bool gso = false;
    bool piece = false;       // one segment of a train sent without GSO
  };
  struct alignas(alignof(cmsghdr)) Cmsg {
    unsigned char buf[CMSG_SPACE(sizeof(in6_pktinfo)) + CMSG_SPACE(sizeof(int)) +
                      CMSG_SPACE(sizeof(std::uint16_t))];
  };
  struct FdInfo {
    int fd = -1;
    int domain = 0;
    bool v6only = false;  // IPV6_V6ONLY on an AF_INET6 socket
  };

  std::uint32_t send_staged();
  std::uint32_t build(int fd, std::uint32_t& nmsg);
  std::uint32_t merge_length(std::uint32_t i) const;
  void fill_msg(std::uint32_t nmsg, const Datagram& d, iovec* iov, std::size_t niov,
                std::uint16_t gso_size);
  Refusal resolve_fd(const Datagram& d, int& fd);
  void forget_fd(int fd);
  void refuse(Datagram& d, const Refusal& r);
  void update_description();

  UdpEgressConfig cfg_;
  int fd4_ = -1, fd6_ = -1;
  bool gso_ = false;
  bool blocked_ = false;
  std::string description_;

  std::array<Datagram*, kStage> staged_{};
  std::array<int, kStage> fd_{};
  std::array<std::uint32_t, kStage> seg_sent_{};  // segments of a train sent one by one
  std::array<iovec, kMaxIov> iov_{};
  std::array<mmsghdr, kMaxMsgs> msgs_{};
  std::array<Msg, kMaxMsgs> msg_{};
  std::array<Cmsg, kMaxMsgs> cmsg_{};
  std::array<FdInfo, kFdCache> fds_seen_{};
  std::uint32_t fd_next_ = 0;
  std::uint32_t count_ = 0;  // staged
  std::uint32_t head_ = 0;   // first not yet sent
};

}  // namespace ufq::rt
