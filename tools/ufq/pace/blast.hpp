// An unpaced blast: the workload's packets (the same flows, payloads,
// sockets and egress as a paced `ufq pace` run) handed to the egress in
// bulks of 64 as fast as the socket takes them, with no scheduler, no
// producer thread and no timer; after a refused send the thread waits for
// POLLOUT (or 50 us when the egress has no descriptor to poll). It is the
// yardstick for the price of precision (docs/results.md): the CPU a packet
// costs to move at all, beside what pacing it at 10 us or on a 1 ms tick
// costs.
#pragma once

#include <cstdint>

#include "pace/packet_pool.hpp"
#include "pace/workload.hpp"
#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"

namespace ufq::rt {

struct BlastResult {
  std::uint64_t sent = 0;
  Time first = 0, last = 0;        // send-call returns of the first and last packet
  std::uint64_t thread_cpu_ns = 0; // the sending thread
  PacketAccounting accounting;     // produced = sent + failed (nothing is unsent)
};

// Sends `packets` datagrams round-robin over the workload's flows from a
// thread of its own (pinned to `cpu` when >= 0) and waits until the egress
// has completed every one. The pool must hold at least 64 packets; each
// packet's wire header carries its send time as the intended departure, so
// a receiver's transit figures stay meaningful.
BlastResult run_blast_packets(const WorkloadConfig& wc, PacketPool& pool, Egress& egress,
                              std::uint64_t packets, int cpu);

}  // namespace ufq::rt
