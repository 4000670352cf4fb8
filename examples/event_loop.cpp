// Event-loop mode in one file (docs/embedding.md): the application's own
// epoll loop drives ufq::rt::EventLoop. Three owners paced at 1 Mbit/s send
// 20 packets each to a sink; the loop arms epoll_pwait2 for the returned
// window with its slack. Exits 0 when every packet came back sent.
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/event_loop.hpp"
#include "ufq/rt/sink_egress.hpp"

int main() {
  using namespace ufq;
  std::array<FlowOwner, 3> owners{};
  for (std::size_t i = 0; i < owners.size(); ++i) {
    owners[i].id = i + 1;
    owners[i].pacing_rate = 125'000;  // bytes/s: one 1250-byte packet per 10 ms after the first burst
  }
  std::array<Packet, 60> pkts{};
  for (std::size_t i = 0; i < pkts.size(); ++i) {
    pkts[i].len = 1250;
    pkts[i].owner = &owners[i % owners.size()];
    pkts[i].cookie = i;
  }

  rt::SinkEgress sink;  // or a UdpEgress: any rt::Egress
  rt::EventLoopConfig cfg;
  cfg.fq.timer_slack_ns = 50'000;
  std::size_t sent = 0;
  rt::EventLoop loop(cfg, sink, [&](Packet&, rt::PacketFate f, Time) {
    if (f == rt::PacketFate::sent) ++sent;  // the packet is ours again
  });

  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  for (Packet& p : pkts) loop.enqueue(p, rt::mono_now());
  std::size_t wakeups = 0;
  for (;;) {
    const rt::Wakeup w = loop.run(rt::mono_now());
    if (w.why == rt::WakeFor::quota) continue;  // more is due: at once
    if (w.why == rt::WakeFor::packet) break;    // nothing throttled: all sent
    // (WakeFor::egress would add w.fd for EPOLLOUT; a sink never refuses.)
    rt::set_timer_slack_ns(w.slack());
    const Time now = rt::mono_now();
    const timespec timeout = rt::to_timespec(w.soft > now ? w.soft - now : 0);
    epoll_event ev{};
    ::epoll_pwait2(ep, &ev, 1, &timeout, nullptr);
    ++wakeups;
  }
  ::close(ep);
  const rt::EventLoopStats s = loop.stats(rt::mono_now());
  std::printf("sent %zu packets in %zu wake-ups; fq: %llu throttled, accounting: %s\n", sent,
              wakeups, static_cast<unsigned long long>(s.fq.throttled),
              loop.accounting().format().c_str());
  return sent == pkts.size() && loop.accounting().balanced() ? 0 : 1;
}
