// Simulator speed: simulated packets per wall-clock second on the seed's
// workload (1000 EDT flows, 1 Mpps, default fq of 5.7, 8 queues).
#include <benchmark/benchmark.h>

#include "ufq/sim/simulation.hpp"

namespace {

void BM_SeedWorkload(benchmark::State& state) {
  ufq::sim::SimConfig cfg;
  cfg.duration = 2 * ufq::kNsecPerSec;
  cfg.fq.timer_slack_ns = static_cast<std::uint32_t>(state.range(0));
  std::uint64_t packets = 0;
  for (auto _ : state) {
    const auto r = ufq::sim::simulate(cfg);
    packets += r.packets_sent;
    benchmark::DoNotOptimize(r.total.busy);
  }
  state.counters["sim_packets_per_s"] =
      benchmark::Counter(static_cast<double>(packets), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_SeedWorkload)->Arg(0)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
