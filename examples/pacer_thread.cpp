// Pacer-thread mode in one file (docs/embedding.md): the application's
// datagrams (its own bytes, to its own peer, ECN-capable) handed to a pacer
// thread from another thread; the pacer sends them over UDP with sendmmsg,
// paced by fq at each owner's rate. A receiver socket on loopback stands for
// the peer. Exits 0 when every datagram arrived with its bytes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include "ufq/rt/datagram.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/rt/udp_egress.hpp"

int main() {
  using namespace ufq;
  // The peer: a UDP socket on 127.0.0.1, any port.
  const int peer = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof(addr);
  if (::bind(peer, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(peer, reinterpret_cast<sockaddr*>(&addr), &alen) != 0)
    return 2;
  const rt::Address dest = rt::Address::from(reinterpret_cast<sockaddr*>(&addr), alen);

  // Two connections paced at 100 datagrams/s each (1200-byte payloads) once
  // fq's initial quantum (a burst of ~12 datagrams per new flow) is spent.
  std::array<FlowOwner, 2> conns{};
  for (std::size_t i = 0; i < conns.size(); ++i) {
    conns[i].id = i + 1;
    conns[i].pacing_rate = 100 * (1200 + rt::frame_overhead(AF_INET));  // bytes/s on the wire
  }
  static std::array<std::array<std::uint8_t, 1200>, 40> payloads{};  // the application's buffers
  std::array<rt::Datagram, 40> dgrams{};
  for (std::size_t i = 0; i < dgrams.size(); ++i) {
    std::snprintf(reinterpret_cast<char*>(payloads[i].data()), 32, "datagram %zu", i);
    rt::Datagram& d = dgrams[i];
    d.data = payloads[i].data();
    d.size = 1200;
    d.dest = dest;
    d.ecn = rt::Ecn::ect0;
    d.packet.owner = &conns[i % conns.size()];
    d.charge();  // what fq is charged: the bytes on the wire
  }

  rt::UdpEgress egress;  // its own IPv4/IPv6 sockets; a Datagram may name the application's fd
  rt::PacerConfig cfg;
  cfg.fq.timer_slack_ns = 50'000;  // one wake-up may release everything due within 50 us
  std::atomic<std::size_t> sent{0};
  rt::Pacer pacer(cfg, egress, [&](Packet& p, rt::PacketFate f, Time) {
    // On the pacer thread: the datagram (and its buffer) is the application's again.
    if (f == rt::PacketFate::sent) ++sent;
    else std::fprintf(stderr, "not sent: %s\n", rt::Datagram::of(p).why ? rt::Datagram::of(p).why : to_string(f));
  });
  pacer.start();
  std::thread producer([&] {  // any thread may submit
    for (rt::Datagram& d : dgrams)
      while (!pacer.submit(d.packet)) std::this_thread::yield();  // a full ring refuses: retry
  });
  producer.join();
  pacer.stop(2 * kNsecPerSec);  // drain for at most 2 s

  std::size_t got = 0;
  std::array<std::uint8_t, 2048> buf{};
  timeval tv{.tv_sec = 1, .tv_usec = 0};
  ::setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  while (got < dgrams.size() && ::recv(peer, buf.data(), buf.size(), 0) == 1200) ++got;
  ::close(peer);
  const rt::PacerResult& r = pacer.result();
  std::printf("sent %zu, received %zu, %llu wake-ups; %s\n", sent.load(), got,
              static_cast<unsigned long long>(r.counters.wakeups), r.accounting.format().c_str());
  return got == dgrams.size() && r.accounting.balanced() ? 0 : 1;
}
