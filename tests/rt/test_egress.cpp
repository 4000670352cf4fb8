// UDP egress: a send refused with EAGAIN or ENOBUFS is kept and retried,
// never lost, in order; hard errors are reported per packet; GSO and
// per-flow sockets deliver real datagrams on loopback. Failures are injected
// through the sendmmsg seam.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "ufq/rt/udp_egress.hpp"

#include "loopback_socket.hpp"
#include "test_datagrams.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

// What a test datagram carries: its flow and sequence number, then zeros.
struct Tag {
  std::uint32_t flow = 0, seq = 0;
};

// Reads back the tags of what arrived.
struct TagReceiver : LoopbackSocket {
  // Datagrams received within `ms` of quiet.
  std::vector<Tag> read_all(int ms = 300) {
    std::vector<Tag> out;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, ms) <= 0) return out;
      std::uint8_t buf[2048];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      Tag t;
      if (n >= static_cast<ssize_t>(sizeof(t))) {
        std::memcpy(&t, buf, sizeof(t));
        out.push_back(t);
      }
    }
  }
};

struct Harness {
  Datagrams pkts;
  std::vector<std::array<std::uint8_t, 100>> payload;
  std::vector<std::pair<std::uint64_t, TxResult>> done;
  std::deque<int> script;  // per call: >= 0 messages to report sent (clamped), < 0 -errno
  int calls = 0;

  // n datagrams of 100 bytes to `dest`, tagged flow = i % flows, seq = i.
  explicit Harness(std::size_t n, std::uint32_t flows = 1, sockaddr_in dest = Address::loopback_v4(9).in4())
      : pkts(n, Address::from(reinterpret_cast<const sockaddr*>(&dest), sizeof(dest)), 100), payload(n) {
    for (std::size_t i = 0; i < n; ++i) set_flow(i, static_cast<std::uint32_t>(i % flows));
  }
  void set_flow(std::size_t i, std::uint32_t flow) {
    const Tag t{flow, static_cast<std::uint32_t>(i)};
    payload[i].fill(0);
    std::memcpy(payload[i].data(), &t, sizeof(t));
    pkts.datagram(i).data = payload[i].data();
    pkts[i].hash = flow;
  }
  UdpEgressConfig config(bool gso) {
    UdpEgressConfig c;
    c.gso = gso;
    c.send = [this](int, mmsghdr*, unsigned n, int) {
      ++calls;
      if (script.empty()) return static_cast<int>(n);
      const int s = script.front();
      script.pop_front();
      if (s < 0) {
        errno = -s;
        return -1;
      }
      return std::min(s, static_cast<int>(n));
    };
    return c;
  }
  void attach(Egress& e) {
    e.set_tx_done([this](Packet& p, TxResult r, Time, int) { done.emplace_back(p.cookie, r); });
  }
  void xmit_all(Egress& e) {
    for (std::size_t i = 0; i < pkts.size(); ++i) ASSERT_TRUE(e.xmit(pkts[i], i + 1 < pkts.size()));
  }
};

}  // namespace

TEST(UdpEgress, EagainKeepsPacketsAndFlushRetriesInOrder) {
  Harness h(10);
  h.script = {-EAGAIN};
  UdpEgress e(h.config(false));
  h.attach(e);
  h.xmit_all(e);
  EXPECT_TRUE(e.blocked());
  EXPECT_EQ(e.tx_room(), 0U) << "a stopped queue takes nothing";
  EXPECT_EQ(e.pending(), 10U);
  EXPECT_TRUE(h.done.empty());
  Datagrams extra(1);
  EXPECT_FALSE(e.xmit(extra[0], false)) << "refused while blocked: the caller keeps it";
  EXPECT_EQ(e.flush(), 10U);
  EXPECT_FALSE(e.blocked());
  ASSERT_EQ(h.done.size(), 10U);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(h.done[i].first, i);
    EXPECT_EQ(h.done[i].second, TxResult::sent);
  }
  EXPECT_EQ(e.stats().eagain, 1U);
  EXPECT_EQ(e.stats().retries, 1U);
  EXPECT_EQ(e.stats().packets, 10U);
  EXPECT_EQ(e.tx_room(), 64U);
}

TEST(UdpEgress, PartialSendThenEnobufsResumesWhereItStopped) {
  Harness h(10);
  h.script = {3, -ENOBUFS, -ENOBUFS, 4};
  UdpEgress e(h.config(false));
  h.attach(e);
  h.xmit_all(e);
  EXPECT_EQ(h.done.size(), 3U);
  EXPECT_EQ(e.pending(), 7U);
  EXPECT_EQ(e.flush(), 0U);  // ENOBUFS again
  EXPECT_EQ(e.pending(), 7U);
  EXPECT_EQ(e.flush(), 7U);  // 4, then the rest
  ASSERT_EQ(h.done.size(), 10U);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(h.done[i].first, i);
  EXPECT_EQ(e.stats().enobufs, 2U);
  EXPECT_EQ(e.stats().failed, 0U);
}

TEST(UdpEgress, HardErrorFailsOnlyThatMessage) {
  Harness h(5);
  h.script = {-EMSGSIZE};
  UdpEgress e(h.config(false));
  h.attach(e);
  h.xmit_all(e);
  ASSERT_EQ(h.done.size(), 5U);
  EXPECT_EQ(h.done[0].second, TxResult::failed);
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(h.done[i].second, TxResult::sent);
  EXPECT_EQ(e.stats().failed, 1U);
  EXPECT_EQ(e.stats().last_errno, EMSGSIZE);
}

TEST(UdpEgress, AbandonReturnsPendingPackets) {
  Harness h(6);
  h.script = {-EAGAIN};
  UdpEgress e(h.config(false));
  h.attach(e);
  h.xmit_all(e);
  std::size_t abandoned = 0;
  e.abandon([&](Packet&) { ++abandoned; });
  EXPECT_EQ(abandoned, 6U);
  EXPECT_EQ(e.pending(), 0U);
  EXPECT_TRUE(h.done.empty());
}

TEST(UdpEgress, RealLoopbackSendWithGso) {
  TagReceiver rx;
  Harness h(40, 2, rx.addr);
  UdpEgressConfig c = h.config(true);
  c.send = nullptr;  // the real sendmmsg
  // Runs of one flow: packets 0..19 flow 0, 20..39 flow 1; flow 1 marked
  // ECT(0), so that its datagrams travel on another path than flow 0's.
  for (std::size_t i = 0; i < 40; ++i) {
    h.set_flow(i, i < 20 ? 0 : 1);
    if (i >= 20) h.pkts.datagram(i).ecn = Ecn::ect0;
  }
  UdpEgress e(c);
  h.attach(e);
  h.xmit_all(e);
  EXPECT_EQ(h.done.size(), 40U);
  const auto got = rx.read_all();
  EXPECT_EQ(got.size(), 40U) << "GSO segments arrive as separate datagrams";
  EXPECT_EQ(e.stats().send_calls, 1U);
  if (e.gso_enabled()) {
    EXPECT_EQ(e.stats().gso_messages, 2U);
    EXPECT_EQ(e.stats().gso_packets, 40U);
  }
}

TEST(UdpEgress, RealLoopbackPerFlowSockets) {
  TagReceiver rx;
  Harness h(30, 3, rx.addr);
  // The application's own connected sockets, one per flow.
  std::vector<int> fds;
  for (int f = 0; f < 3; ++f) {
    fds.push_back(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ASSERT_EQ(::connect(fds.back(), reinterpret_cast<const sockaddr*>(&rx.addr), sizeof(rx.addr)), 0);
  }
  for (std::size_t i = 0; i < 30; ++i) h.pkts.datagram(i).fd = fds[i % 3];
  UdpEgressConfig c = h.config(true);
  c.send = nullptr;
  {
    UdpEgress e(c);
    h.attach(e);
    h.xmit_all(e);
    EXPECT_EQ(h.done.size(), 30U);
    EXPECT_EQ(e.stats().send_calls, 30U) << "one sendmmsg per run of one socket";
  }
  const auto got = rx.read_all();
  ASSERT_EQ(got.size(), 30U);
  std::vector<int> per_flow(3, 0);
  for (const auto& w : got) ++per_flow.at(w.flow);
  EXPECT_EQ(per_flow, (std::vector<int>{10, 10, 10}));
  for (int fd : fds) ::close(fd);
}
