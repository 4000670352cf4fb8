// The simulation run with the kernel-shaped reference scheduler
// (ufq::reference::FqScheduler) instead of the public one: the same output
// byte for byte (tests/sim/test_simulation.cpp), slower. Library
// ufq_sim_reference; `ufq sim --scheduler reference` uses it.
#pragma once

#include <functional>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {

// As simulate(), whatever cfg.scheduler says.
SimResult simulate_reference(const SimConfig& cfg, const std::function<void(double)>& progress = {},
                             const std::function<void(Sample&)>& on_sample = {});

}  // namespace ufq::sim
