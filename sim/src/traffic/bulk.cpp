// bulk: unpaced owners, always backlogged: the NIC sets the pace.
#include <algorithm>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {
namespace {

class Bulk : public TrafficSource {
 public:
  Time init(TrafficFlow&, TrafficHost& host) override { return host.rng().below(1000); }
};

}  // namespace

const TrafficModelInfo& traffic_model_bulk() {
  static const TrafficModelInfo info{
      .name = "bulk",
      .help = "unpaced owners, always backlogged: the NIC sets the pace",
      .ignores = {{"rate", "unpaced flows: the NIC sets the pace"}},
      .flows_apart = true,
      .packets =
          [](const SimConfig& c) {
            if (!c.nic.dummy) return TrafficWork{1e300, "packets (bulk traffic at line rate)", {"nic-rate", "queues", "packet-size"}};
            // A dummy NIC hands each packet back after its latency.
            const double per_packet_s = std::max<double>(static_cast<double>(c.nic.irq_latency), 0.5) / 1e9;
            return TrafficWork{static_cast<double>(c.flows) * c.inflight / per_packet_s,
                               "packets (bulk traffic over a dummy NIC)", {"flows", "inflight", "nic-latency"}};
          },
      .make = [](const SimConfig&, const TrafficSettings&) -> std::unique_ptr<TrafficSource> {
        return std::make_unique<Bulk>();
      },
  };
  return info;
}

}  // namespace ufq::sim
