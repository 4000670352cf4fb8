// maxrate: unpaced owners; fq's maxrate paces every flow (by default
// --rate / --flows each when fq's maxrate is not given).
#include "ufq/sim/simulation.hpp"

namespace ufq::sim {
namespace {

class MaxRate : public TrafficSource {
 public:
  Time init(TrafficFlow& f, TrafficHost& host) override {
    const SimConfig& c = host.config();
    f.target_pps = static_cast<double>(c.fq.maxrate) / c.packet_size;
    return host.rng().below(static_cast<std::uint64_t>(1e9 / (c.rate_pps / c.flows)));
  }
};

}  // namespace

const TrafficModelInfo& traffic_model_maxrate() {
  static const TrafficModelInfo info{
      .name = "maxrate",
      .help = "unpaced owners, fq's maxrate paces them (default maxrate: --rate / --flows per flow)",
      .flows_apart = true,
      .adjust =
          [](SimConfig& c) {
            if (c.fq.maxrate == kUnlimitedRate) c.fq.maxrate = static_cast<Rate>(c.rate_pps / c.flows * c.packet_size);
          },
      .packets =
          [](const SimConfig& c) {
            if (c.fq.maxrate != kUnlimitedRate)
              return TrafficWork{static_cast<double>(c.flows) * static_cast<double>(c.fq.maxrate) / c.packet_size,
                                 "packets (fq maxrate per flow)", {"flows", "packet-size"}};
            return TrafficWork{c.rate_pps, "packets", {"rate", "duration"}};
          },
      .make = [](const SimConfig&, const TrafficSettings&) -> std::unique_ptr<TrafficSource> {
        return std::make_unique<MaxRate>();
      },
  };
  return info;
}

}  // namespace ufq::sim
