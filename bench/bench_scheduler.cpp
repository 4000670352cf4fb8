// Scheduler cost (Google Benchmark), three implementations side by side in one
// run: Reference = ufq::reference::FqScheduler (kernel-shaped structures), Fast =
// ufq::FqScheduler (the public one: same decisions, flat structures), Heap = a binary heap of next-send times
// (the common user-space pacer). bench/run.sh runs it with repetitions and
// turns the medians into bench/results/.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "bench_config.hpp"
#include "fifo_floor.hpp"
#include "heap_pacer.hpp"
#include "paced_burst.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/reference/scheduler.hpp"

namespace {

using Reference = ufq::reference::FqScheduler;
using Fast = ufq::FqScheduler;
using FastSingleCalls = ufq::bench::SingleCalls<ufq::FqScheduler>;
using ufq::bench::FifoFloor;
using ufq::bench::FlowFloor;
using ufq::bench::HeapPacer;

using ufq::bench::config_for;
using ufq::bench::fill;

using ufq::bench::kBaseline;
using ufq::bench::make;

// Every flow paced by EDT: flow i's packets leave every `flows` microseconds,
// so every flow is throttled between its packets, as in the seed's workload.
// Warmed up to steady state (every flow created and holding a packet) first.
// kShuffled = false: flows take turns in a fixed order (round robin), so flow
// state created in that order is also visited in memory order. kShuffled =
// true: every round visits the flows in a new random order (two permutations
// alternate), so each packet's flow, owner and flow-record accesses are random
// in memory: the harder, more realistic case at 100k and 1M flows.
template <class S, bool kShuffled>
void BM_PacedOrder(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  const auto cfg = config_for(flows, static_cast<std::uint32_t>(state.range(1)));
  S fq = make<S>(cfg);
  ufq::bench::AppVector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  std::array<std::vector<std::uint32_t>, 2> order;
  if constexpr (kShuffled) {
    std::mt19937_64 rng(42);
    for (auto& o : order) {
      o.resize(flows);
      std::iota(o.begin(), o.end(), 0U);
      std::shuffle(o.begin(), o.end(), rng);
    }
  }
  ufq::bench::AppVector<ufq::Packet> ring((kShuffled ? 3 : 2) * flows + 16);  // shuffled: a flow may hold 2
  std::size_t next = 0;
  std::size_t f = 0, round = 0;
  ufq::Time now = 1'000'000'000;
  const ufq::Time gap = flows * 1000;  // ns between packets of one flow (on average when shuffled)
  auto one = [&] {
    ufq::Packet& p = ring[next];
    next = next + 1 == ring.size() ? 0 : next + 1;
    fill(p, 1514, kShuffled ? &owners[order[round & 1][f]] : &owners[f], now + gap);
    if (++f == flows) {
      f = 0;
      ++round;
    }
    benchmark::DoNotOptimize(fq.enqueue(p, now));
    now += 1000;
    while (ufq::Packet* out = fq.dequeue(now)) benchmark::DoNotOptimize(out);
  };
  for (std::size_t i = 0; i < 2 * flows + 1000; ++i) one();
  for (auto _ : state) one();
  state.SetItemsProcessed(state.iterations());
}

template <class S>
void BM_Paced(benchmark::State& state) {
  BM_PacedOrder<S, false>(state);
}
template <class S>
void BM_PacedShuffled(benchmark::State& state) {
  BM_PacedOrder<S, true>(state);
}

// Google Benchmark calls a benchmark function several times per repetition
// (growing the iteration count until min_time is reached); at 1M flows each
// call's set-up and warm-up take seconds. The burst benchmarks keep the last
// warmed-up workload and continue it (the workload is stationary: any number
// of wake-ups leaves it in the same steady state), so that is paid once per
// repetition. One workload at a time: another benchmark's frees it first.
struct KeptWorkload {
  const void* type = nullptr;
  std::int64_t flows = 0, burst = 0;
  std::shared_ptr<void> workload;
};
KeptWorkload g_kept;
template <class W>
constexpr char kWorkloadTag = 0;

template <class W>
W& kept_workload(std::int64_t flows, std::int64_t burst) {
  if (g_kept.type != &kWorkloadTag<W> || g_kept.flows != flows || g_kept.burst != burst) {
    g_kept = KeptWorkload{};
    auto w = std::make_shared<W>(static_cast<std::size_t>(flows), static_cast<std::size_t>(burst));
    w->warm_up();
    g_kept = KeptWorkload{&kWorkloadTag<W>, flows, burst, w};
  }
  return *static_cast<W*>(g_kept.workload.get());
}

// BM_Paced's flows and arrivals through the batched calls (paced_burst.hpp):
// a pacer thread that wakes every `burst` arrivals. Per packet: one wake-up's
// time over the packets it enqueued.
template <class S, bool kShuffled>
void BM_PacedOrderBurst(benchmark::State& state) {
  auto& w = kept_workload<ufq::bench::PacedBurst<S, kShuffled>>(state.range(0), state.range(1));
  for (auto _ : state) w.wake();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * w.burst()));
}

template <class S>
void BM_PacedBurst(benchmark::State& state) {
  BM_PacedOrderBurst<S, false>(state);
}
template <class S>
void BM_PacedShuffledBurst(benchmark::State& state) {
  BM_PacedOrderBurst<S, true>(state);
}

// When a pacer thread that sleeps on the scheduler's timer wakes up: the
// watchdog's hard expiry (soft expiry + slack: an hrtimer with slack fires then
// unless something else wakes the CPU earlier), or, for the binary heap, its
// earliest due time plus the same slack (the FIFO floor: its head's). kNever:
// nothing is throttled.
template <class S>
ufq::Time wake_time(const S& fq, ufq::Time slack) {
  if constexpr (kBaseline<S>) {
    const ufq::Time t = fq.next_due();
    return t == ufq::kNever ? t : t + slack;
  } else {
    return fq.watchdog().queued() ? fq.watchdog().hard_expiry() : ufq::kNever;
  }
}

// The seed's workload as a pacer thread runs it: packets arrive one per
// microsecond (each flow paced by EDT as in BM_Paced) and are enqueued as they
// arrive; the thread dequeues only when its timer fires, releasing every packet
// due by then. With slack 0 that is one wake-up per packet (BM_Paced's
// pattern); with 10 us slack one wake-up releases about ten packets, so the
// per-wake-up work (the dequeue that finds nothing due, the timer re-arm) is
// shared by them: what timer slack buys, per packet.
template <class S>
void BM_PacedTimer(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  const auto slack = static_cast<ufq::Time>(state.range(1));
  S fq = make<S>(config_for(flows, static_cast<std::uint32_t>(slack)));
  ufq::bench::AppVector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  ufq::bench::AppVector<ufq::Packet> ring(2 * flows + 64);
  std::size_t next = 0, f = 0;
  ufq::Time now = 1'000'000'000;
  ufq::Time wake = now;
  const ufq::Time gap = flows * 1000;
  auto one = [&] {
    ufq::Packet& p = ring[next];
    next = next + 1 == ring.size() ? 0 : next + 1;
    fill(p, 1514, &owners[f], now + gap);
    f = f + 1 == flows ? 0 : f + 1;
    benchmark::DoNotOptimize(fq.enqueue(p, now));
    now += 1000;
    if (now >= wake) {
      if constexpr (!kBaseline<S>) fq.watchdog().expire();
      while (ufq::Packet* out = fq.dequeue(now)) benchmark::DoNotOptimize(out);
      wake = wake_time(fq, slack);
      if (wake == ufq::kNever) wake = now;  // nothing throttled: look again at the next arrival
    }
  };
  for (std::size_t i = 0; i < 2 * flows + 1000; ++i) one();
  for (auto _ : state) one();
  state.SetItemsProcessed(state.iterations());
}

// Every flow backlogged with one packet, no pacing: DRR alone.
template <class S>
void BM_Unpaced(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  S fq = make<S>(config_for(flows, 10000));
  ufq::bench::AppVector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  ufq::bench::AppVector<ufq::Packet> ring(flows * 2 + 2);
  std::size_t next = 0;
  for (std::size_t i = 0; i < flows; ++i) {
    ring[next] = ufq::Packet{.len = 1514, .owner = &owners[i]};
    fq.enqueue(ring[next++], 0);
  }
  std::size_t f = 0;
  for (auto _ : state) {
    ufq::Packet& p = ring[next];
    next = next + 1 == ring.size() ? 0 : next + 1;
    fill(p, 1514, &owners[f], 0);
    f = f + 1 == flows ? 0 : f + 1;
    benchmark::DoNotOptimize(fq.enqueue(p, 0));
    benchmark::DoNotOptimize(fq.dequeue(0));
  }
  state.SetItemsProcessed(state.iterations());
}

// Flow lookup alone: an enqueue to a flow that already holds flow_limit (1)
// packets is refused right after the lookup.
template <class S>
void BM_Lookup(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  auto cfg = config_for(flows, 10000);
  cfg.flow_limit = 1;
  S fq(cfg);
  ufq::bench::AppVector<ufq::FlowOwner> owners(flows);
  ufq::bench::AppVector<ufq::Packet> held(flows);
  for (std::size_t i = 0; i < flows; ++i) {
    owners[i].id = i + 1;
    held[i] = ufq::Packet{.len = 1514, .tstamp = 1'000'000'000'000, .owner = &owners[i]};
    fq.enqueue(held[i], 0);
  }
  ufq::Packet p{.len = 1514};
  std::uint64_t x = 1;
  for (auto _ : state) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // random flow order
    p.owner = &owners[(x >> 33) % flows];
    benchmark::DoNotOptimize(fq.enqueue(p, 0));
  }
  state.SetItemsProcessed(state.iterations());
}

// Throttle and unthrottle alone: N flows each holding one packet due later;
// one dequeue throttles all N (timed per flow in BM_Throttle), one dequeue at
// their due time releases all N (BM_Unthrottle). Untimed: refill and drain.
template <class S, bool kThrottle>
void BM_ThrottleCycle(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  S fq(config_for(flows, 10000));
  ufq::bench::AppVector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  ufq::bench::AppVector<ufq::Packet> pk(flows);
  ufq::Time now = 1'000'000'000;
  std::uint64_t x = 7;
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < flows; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      pk[i] = ufq::Packet{.len = 1514, .tstamp = now + 1'000'000 + ((x >> 33) % 1'000'000), .owner = &owners[i]};
      fq.enqueue(pk[i], now);
    }
    if (kThrottle) state.ResumeTiming();
    benchmark::DoNotOptimize(fq.dequeue(now));  // throttles every flow
    if (kThrottle) state.PauseTiming();
    now += 2'000'000;
    if (!kThrottle) state.ResumeTiming();
    benchmark::DoNotOptimize(fq.dequeue(now));  // releases every flow (+ sends one packet)
    if (!kThrottle) state.PauseTiming();
    while (fq.dequeue(now)) {
    }
    now += 1'000'000;
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * flows));
}

// Memory: heap bytes per idle flow (N flows created, their packets sent, the
// flows detached) and scheduler bytes per queued packet (the private fields in
// ufq::Packet plus any heap the scheduler takes per packet).
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small chunks + mmap-ed large blocks
}

template <class S>
void BM_Memory(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  double per_flow = 0, per_packet = 0;
  for (auto _ : state) {
    std::vector<ufq::FlowOwner> owners(flows);
    for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
    std::vector<ufq::Packet> pk(flows * 4);
    ufq::FlowOwner sentinel{.id = 1ULL << 40};
    ufq::Packet sp{.len = 100, .tstamp = 1'000'000'000'000, .owner = &sentinel};
    const std::size_t before = heap_in_use();
    auto* fq = new S(config_for(flows, 10000));
    for (std::size_t i = 0; i < flows; ++i) {
      pk[i] = ufq::Packet{.len = 1514, .owner = &owners[i]};
      fq->enqueue(pk[i], 1000);
    }
    while (fq->dequeue(1000)) {
    }
    fq->enqueue(sp, 1000);
    while (fq->dequeue(1000)) {  // the sentinel keeps qlen > 0 so emptied flows get detached
    }
    const std::size_t idle = heap_in_use();
    // Three more packets per flow (due later: they stay queued).
    for (std::size_t i = 0; i < flows * 3; ++i) {
      pk[flows + i] = ufq::Packet{.len = 1514, .tstamp = 2'000'000'000'000, .owner = &owners[i % flows]};
      fq->enqueue(pk[flows + i], 2000);
    }
    const std::size_t busy = heap_in_use();
    per_flow = static_cast<double>(idle - before) / static_cast<double>(flows);
    // The scheduler's private members of the packet (two groups since the
    // layout of docs/architecture.md#memory-layout).
    constexpr std::size_t kPrivate = sizeof(ufq::Packet::time_to_send_) + sizeof(ufq::Packet::next_) +
                                     sizeof(ufq::Packet::right_bits_) + sizeof(ufq::Packet::parent_color_);
    static_assert(kPrivate == 32);
    per_packet = static_cast<double>(kPrivate) +
                 static_cast<double>(busy > idle ? busy - idle : 0) / static_cast<double>(flows * 3);
    fq->reset();
    delete fq;
  }
  state.counters["bytes_per_flow"] = per_flow;
  state.counters["bytes_per_packet"] = per_packet;
}

}  // namespace

#define UFQ_BENCH3(name, ...)                  \
  BENCHMARK_TEMPLATE(name, Reference) __VA_ARGS__; \
  BENCHMARK_TEMPLATE(name, Fast) __VA_ARGS__;      \
  BENCHMARK_TEMPLATE(name, HeapPacer) __VA_ARGS__
// The paced workloads also run the FIFO floor (fifo_floor.hpp).
#define UFQ_BENCH4(name, ...) \
  UFQ_BENCH3(name, __VA_ARGS__); \
  BENCHMARK_TEMPLATE(name, FifoFloor) __VA_ARGS__

UFQ_BENCH4(BM_Paced, ->ArgsProduct({{1, 1000, 100000, 1000000}, {0, 10000}}));
UFQ_BENCH4(BM_PacedTimer, ->ArgsProduct({{1, 1000, 100000, 1000000}, {0, 10000}}));
UFQ_BENCH4(BM_PacedShuffled, ->ArgsProduct({{1000, 100000, 1000000}, {10000}}));
// Burst of 32 arrivals per wake-up (the batched calls); 8 in the full suite.
UFQ_BENCH4(BM_PacedBurst, ->ArgsProduct({{1000, 100000, 1000000}, {8, 32}}));
UFQ_BENCH4(BM_PacedShuffledBurst, ->ArgsProduct({{1000, 100000, 1000000}, {8, 32}}));
// The same harness over the fast scheduler's single calls: what batching gains.
BENCHMARK_TEMPLATE(BM_PacedBurst, FastSingleCalls)->ArgsProduct({{1000, 1000000}, {32}});
BENCHMARK_TEMPLATE(BM_PacedShuffledBurst, FastSingleCalls)->ArgsProduct({{1000, 1000000}, {32}});
// The per-flow floor (flow_floor.hpp): what flow order costs a queue that keeps per-flow state.
BENCHMARK_TEMPLATE(BM_PacedBurst, FlowFloor)->ArgsProduct({{1000, 1000000}, {32}});
BENCHMARK_TEMPLATE(BM_PacedShuffledBurst, FlowFloor)->ArgsProduct({{1000, 1000000}, {32}});
UFQ_BENCH3(BM_Unpaced, ->Arg(1)->Arg(1000)->Arg(100000)->Arg(1000000));
BENCHMARK_TEMPLATE(BM_Lookup, Reference)->Arg(1000)->Arg(1000000);
BENCHMARK_TEMPLATE(BM_Lookup, Fast)->Arg(1000)->Arg(1000000);
BENCHMARK_TEMPLATE(BM_ThrottleCycle, Reference, true)->Name("BM_Throttle<Reference>")->Arg(1000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_ThrottleCycle, Fast, true)->Name("BM_Throttle<Fast>")->Arg(1000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_ThrottleCycle, Reference, false)->Name("BM_Unthrottle<Reference>")->Arg(1000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_ThrottleCycle, Fast, false)->Name("BM_Unthrottle<Fast>")->Arg(1000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_Memory, Reference)->Arg(1000)->Arg(1000000)->Iterations(1);
BENCHMARK_TEMPLATE(BM_Memory, Fast)->Arg(1000)->Arg(1000000)->Iterations(1);
BENCHMARK_MAIN();
