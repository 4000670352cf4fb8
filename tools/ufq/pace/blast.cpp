#include "pace/blast.hpp"

#include <pthread.h>
#include <poll.h>

#include <ctime>
#include <thread>
#include <vector>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

BlastResult run_blast_packets(const WorkloadConfig& wc, PacketPool& pool, Egress& egress,
                              std::uint64_t packets, int cpu) {
  BlastResult r;
  r.accounting.produced = packets;
  std::vector<std::uint32_t> seq(wc.flows, 0);
  std::vector<FlowOwner> owners(wc.flows);
  for (std::uint32_t f = 0; f < wc.flows; ++f) owners[f].id = f + 1;
  std::uint64_t completed = 0;
  egress.set_tx_done([&](Packet& p, TxResult res, Time when, int error) {
    if (res == TxResult::sent) {
      if (r.sent++ == 0) r.first = when;
      r.last = when;
      ++r.accounting.sent;
    } else {
      r.accounting.failed.add(error);
    }
    ++completed;
    pool.release(p);
  });
  std::thread t([&] {
    ::pthread_setname_np(::pthread_self(), "ufq-blast");
    if (cpu >= 0) pin_current_thread(cpu);
    constexpr std::uint32_t kBulk = 64;
    std::uint64_t made = 0;
    std::uint32_t f = 0;
    while (made < packets) {
      // Wait for the socket while a refused send is staged.
      while (egress.tx_room() == 0) {
        if (const int fd = egress.poll_fd(); fd >= 0) {
          pollfd pf{fd, POLLOUT, 0};
          ::poll(&pf, 1, 10);
        } else {
          const timespec ts{0, 50'000};
          ::nanosleep(&ts, nullptr);
        }
        egress.flush();
      }
      const std::uint32_t room = egress.tx_room();
      const std::uint64_t n = std::min<std::uint64_t>({kBulk, room, packets - made});
      const Time now = mono_now();
      for (std::uint64_t i = 0; i < n; ++i) {
        Packet* p = pool.acquire();
        if (!p) {  // every pooled packet is staged: send what is staged first
          egress.flush();
          break;
        }
        p->len = wc.payload + frame_overhead(wc.dest.empty() ? AF_INET : wc.dest.family());
        p->owner = &owners[f];
        p->hash = f * 2654435761U;
        pool.fill(*p, f, seq[f]++, now, wc.dest, wc.flow_fds.empty() ? -1 : wc.flow_fds[f], wc.payload);
        ++made;
        f = f + 1 == wc.flows ? 0 : f + 1;
        egress.xmit(*p, i + 1 < n && made < packets);
      }
    }
    while (completed < packets) {
      if (egress.flush() == 0 && egress.pending() > 0) {
        if (const int fd = egress.poll_fd(); fd >= 0) {
          pollfd pf{fd, POLLOUT, 0};
          ::poll(&pf, 1, 10);
        }
      }
    }
    r.thread_cpu_ns = thread_cpu_ns();
  });
  t.join();
  egress.set_tx_done({});
  return r;
}

}  // namespace ufq::rt
