// rate: owners set only a pacing rate (UDP's SO_MAX_PACING_RATE); fq spaces
// their packets.
#include <cmath>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {
namespace {

class RatePaced : public TrafficSource {
 public:
  Time init(TrafficFlow& f, TrafficHost& host) override {
    const SimConfig& c = host.config();
    const double per_flow_pps = c.rate_pps / c.flows;
    f.owner.pacing_rate = f.owner.max_pacing_rate = static_cast<Rate>(std::llround(per_flow_pps * c.packet_size));
    f.target_pps = static_cast<double>(f.owner.pacing_rate) / c.packet_size;
    return host.rng().below(static_cast<std::uint64_t>(1e9 / per_flow_pps));
  }
};

}  // namespace

const TrafficModelInfo& traffic_model_rate() {
  static const TrafficModelInfo info{
      .name = "rate",
      .help = "UDP-like owners set a pacing rate (SO_MAX_PACING_RATE) of --rate / --flows each; fq spaces them",
      .flows_apart = true,
      .make = [](const SimConfig&, const TrafficSettings&) -> std::unique_ptr<TrafficSource> {
        return std::make_unique<RatePaced>();
      },
  };
  return info;
}

}  // namespace ufq::sim
