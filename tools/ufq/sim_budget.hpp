// What a `ufq sim` plan costs, estimated before anything is allocated: the
// memory of its flows, packets, flow tables and samples, and the number of
// events it would simulate. A plan over either bound is refused with a
// message naming the options that drive it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ufq/sim/simulation.hpp"

namespace ufq::cli {

// At most this many samples (--duration / --interval) per run.
inline constexpr double kMaxSimSamples = 1e6;
// At most this many simulated events (packets, timer ticks, interrupts, flow
// switches) per invocation: some hours of CPU at the simulator's few million
// packets per second. Longer runs are split into shorter ones.
inline constexpr double kMaxSimEvents = 1e11;

// Refusal text for `runs` runs of `cfg` (--compare: one per value, with
// `cfg.fq` the largest flow table among them), `concurrent` of them at once
// (--jobs: each holds its flows, packets and tables meanwhile), or empty when
// the plan fits. Pre: 1 <= concurrent <= runs.
std::string check_sim_plan(const sim::SimConfig& cfg, std::size_t runs, std::size_t concurrent = 1);

// The most runs of the sweep `configs` that fit at once, at most `wanted`
// (--jobs): each config's check_sim_plan with that many concurrent. 1 when
// even one at a time does not fit (check_sim_plan(c, size) then says why).
// Pre: configs not empty, wanted >= 1.
std::size_t sim_runs_that_fit(const std::vector<sim::SimConfig>& configs, std::size_t wanted);

}  // namespace ufq::cli
