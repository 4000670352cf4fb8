// Simulator speed: simulated packets per CPU second on the main job as the
// user runs it (`ufq sim` with no arguments: 1000 EDT flows, 1 Mpps, 20 s
// simulated, the default fq of 5.7, 8 queues), and the same at timer_slack 0.
// CPU time of the process, so the figure does not depend on other load as
// much as wall-clock time; instruction counts (callgrind) are steadier still
// (docs/simulator.md, "Speed").
#include <benchmark/benchmark.h>

#include "ufq/sim/simulation.hpp"

namespace {

void BM_MainJob(benchmark::State& state) {
  ufq::sim::SimConfig cfg;  // the defaults are the main job
  cfg.fq.timer_slack_ns = static_cast<std::uint32_t>(state.range(0));
  std::uint64_t packets = 0;
  for (auto _ : state) {
    const auto r = ufq::sim::simulate(cfg);
    packets += r.packets_sent;
    benchmark::DoNotOptimize(r.total.busy);
  }
  state.counters["sim_packets_per_cpu_s"] =
      benchmark::Counter(static_cast<double>(packets), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_MainJob)->Arg(10000)->Arg(0)->Unit(benchmark::kSecond)->Iterations(1)->MeasureProcessCPUTime();
BENCHMARK_MAIN();
