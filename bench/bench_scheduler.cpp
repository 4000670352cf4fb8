// Enqueue+dequeue cost per packet of the reference scheduler (Google Benchmark).
// Each iteration is one packet in and, in steady state, one packet out.
#include <benchmark/benchmark.h>

#include <vector>

#include "ufq/scheduler.hpp"

namespace {

// Every flow paced by EDT: flow i's packets leave every `flows` microseconds,
// so every flow is throttled between its packets, as in the seed's workload.
void BM_Paced(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  ufq::FqConfig cfg;
  cfg.timer_slack_ns = static_cast<std::uint32_t>(state.range(1));
  cfg.buckets_log = 16;
  cfg.horizon_us = 0xFFFFFFFF;
  cfg.limit = 0xFFFFFFFF;  // every flow holds a packet: more than the default 10000
  ufq::FqScheduler fq(cfg);
  std::vector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  std::vector<ufq::Packet> ring(flows * 4);
  std::size_t next = 0;
  ufq::Time now = 1'000'000'000;
  const ufq::Time gap = flows * 1000;  // ns between packets of one flow
  for (auto _ : state) {
    ufq::Packet& p = ring[next];
    next = next + 1 == ring.size() ? 0 : next + 1;
    p = ufq::Packet{};
    p.len = 1514;
    p.owner = &owners[next % flows];
    p.tstamp = now + gap;
    benchmark::DoNotOptimize(fq.enqueue(p, now));
    now += 1000;
    while (ufq::Packet* out = fq.dequeue(now)) benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  const auto st = fq.stats(now);
  state.counters["throttled/pkt"] =
      static_cast<double>(st.throttled) / static_cast<double>(state.iterations());
  state.counters["flows"] = st.flows;
}

void BM_Unpaced(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  ufq::FqConfig cfg;
  cfg.buckets_log = 16;
  cfg.limit = 0xFFFFFFFF;
  ufq::FqScheduler fq(cfg);
  std::vector<ufq::FlowOwner> owners(flows);
  for (std::size_t i = 0; i < flows; ++i) owners[i].id = i + 1;
  std::vector<ufq::Packet> ring(flows * 2 + 2);
  // Keep every flow backlogged with one packet so the fast path never applies.
  std::size_t next = 0;
  for (std::size_t i = 0; i < flows; ++i) {
    ring[next] = ufq::Packet{.len = 1514, .owner = &owners[i]};
    fq.enqueue(ring[next++], 0);
  }
  std::size_t f = 0;
  for (auto _ : state) {
    ufq::Packet& p = ring[next];
    next = next + 1 == ring.size() ? 0 : next + 1;
    p = ufq::Packet{.len = 1514, .owner = &owners[f]};
    f = f + 1 == flows ? 0 : f + 1;
    benchmark::DoNotOptimize(fq.enqueue(p, 0));
    benchmark::DoNotOptimize(fq.dequeue(0));
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_Paced)->ArgsProduct({{1, 1000, 100000}, {0, 10000}});
BENCHMARK(BM_Unpaced)->Arg(1)->Arg(1000)->Arg(100000);
BENCHMARK_MAIN();
