// The simulation instantiated for the reference scheduler (library
// ufq_sim_reference, so that ufq_sim itself does not link the reference).
#include "ufq/sim/simulation_reference.hpp"

#include "simulation_impl.hpp"
#include "ufq/reference/scheduler.hpp"

namespace ufq::sim {

SimResult simulate_reference(const SimConfig& cfg, const std::function<void(double)>& progress,
                             const std::function<void(Sample&)>& on_sample) {
  detail::Simulation<reference::FqScheduler> sim(cfg, progress, on_sample);
  return sim.run();
}

}  // namespace ufq::sim
