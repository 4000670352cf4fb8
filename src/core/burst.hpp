// What the batched calls (enqueue_burst, dequeue_burst) of both schedulers
// share: the argument check, and the flow count above which the public
// scheduler prefetches (docs/architecture.md#batched-calls).
#pragma once

#include <atomic>
#include <cstddef>

namespace ufq::detail {

// Throws std::invalid_argument naming both sizes when a burst's verdict span
// is shorter than its packet span.
void check_burst_sizes(std::size_t packets, std::size_t verdicts);

// FqScheduler's burst calls prefetch only when it has more flow records than
// this (default 4096: fewer stay in the L2 cache, with their owners and
// packets, and prefetching them only costs instructions), and then only while
// the flows it releases lie scattered in memory. Prefetches never
// change a decision; tests and the fuzzer set 0 so that the prefetching code
// runs under their sanitizers at any size. Process-wide, read once per burst
// (inline: a call per burst was ~6 instructions of the simulator's qdisc run).
inline std::atomic<std::size_t> g_burst_prefetch_min_flows{4096};
inline std::size_t burst_prefetch_min_flows() { return g_burst_prefetch_min_flows.load(std::memory_order_relaxed); }
inline void set_burst_prefetch_min_flows(std::size_t flows) {
  g_burst_prefetch_min_flows.store(flows, std::memory_order_relaxed);
}

}  // namespace ufq::detail
