// UDP egress: packets leave as real datagrams, batched with sendmmsg (one
// system call per bulk) and, for runs of one flow with equal sizes, as UDP
// GSO messages (one message, UDP_SEGMENT, the kernel cuts the segments).
// Sockets are either one unconnected socket shared by every flow (batches
// span flows: each message names its destination) or one connected socket
// per flow (the connected-UDP analog; a batch is a run of one socket).
// EAGAIN and ENOBUFS keep the packets staged for flush(); nothing is lost.
// EINTR sends again (16 in a row count as a refused send). ECONNREFUSED (a
// connected socket's earlier ICMP error) sends again once. Any other error,
// or ECONNREFUSED again, fails the packets of the message that met it, each
// reported with the errno: counted, never retried forever.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "ufq/driver/qdisc_runner.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/wire.hpp"

namespace ufq::rt {

// What the egress needs to know about a packet.
struct Datagram {
  std::uint32_t socket = 0;   // per-flow mode: index of the connected socket
  std::uint32_t payload = 0;  // UDP payload bytes
  WireHeader header;          // written at the start of the payload
};

using DescribeFn = std::function<Datagram(const Packet&)>;
// The sendmmsg(2) system call, replaceable for tests (failure injection).
using SendmmsgFn = std::function<int(int fd, mmsghdr* msgs, unsigned n, int flags)>;

struct UdpEgressConfig {
  enum class Sockets : std::uint8_t { shared, per_flow };
  Sockets sockets = Sockets::shared;
  sockaddr_in dest{};          // the receiver (IPv4)
  std::uint32_t flows = 1;     // per-flow mode: sockets to open
  bool gso = true;             // use UDP GSO when the kernel supports it
  int sndbuf = 4 << 20;        // SO_SNDBUF (SO_SNDBUFFORCE when allowed)
  DescribeFn describe;         // required
  SendmmsgFn send;             // default: ::sendmmsg
};

class UdpEgress final : public Egress {
 public:
  // Opens the sockets (in the caller's current network namespace). Throws
  // std::system_error on failure.
  explicit UdpEgress(UdpEgressConfig cfg);
  ~UdpEgress() override;

  std::uint32_t tx_room() override;
  bool xmit(Packet& p, bool more) override;
  std::uint32_t flush() override;
  std::uint32_t pending() const override { return count_ - head_; }
  int poll_fd() const override;
  void abandon(const std::function<void(Packet&)>& fn) override;
  const char* describe() const override { return description_.c_str(); }

  bool gso_enabled() const { return gso_; }
  bool blocked() const { return blocked_; }

 private:
  static constexpr std::uint32_t kStage = kMaxBulk;   // packets staged per bulk
  static constexpr std::uint32_t kMaxSegments = 64;   // per GSO message
  static constexpr std::uint32_t kMaxGsoBytes = 65000;
  static constexpr std::uint32_t kMaxInterrupted = 16;  // EINTRs in a row before backing off

  std::uint32_t send_staged();
  int fd_of(std::uint32_t i) const;
  std::uint32_t run_length(std::uint32_t i) const;
  void update_description();

  UdpEgressConfig cfg_;
  std::vector<int> fds_;
  bool gso_ = false;
  bool blocked_ = false;
  std::string description_;

  std::array<Packet*, kStage> staged_{};
  std::array<Datagram, kStage> dgram_{};
  std::array<WireHeader, kStage> hdr_{};
  std::array<iovec, 2 * kStage> iov_{};
  std::array<mmsghdr, kStage> msgs_{};
  std::array<std::uint32_t, kStage> msg_first_{};
  std::array<std::uint32_t, kStage> msg_count_{};
  struct alignas(alignof(cmsghdr)) Cmsg {
    unsigned char buf[CMSG_SPACE(sizeof(std::uint16_t))];
  };
  std::array<Cmsg, kStage> cmsg_{};
  std::uint32_t count_ = 0;  // staged
  std::uint32_t head_ = 0;   // first not yet sent
};

}  // namespace ufq::rt
