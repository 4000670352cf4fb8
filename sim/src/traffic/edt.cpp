// edt: owners stamp departure times at their own rate (TCP's EDT); fq
// enforces them. The seed's workload.
#include "paced.hpp"

namespace ufq::sim {

const TrafficModelInfo& traffic_model_edt() {
  static const TrafficModelInfo info{
      .name = "edt",
      .help = "TCP-like owners stamp departure times (EDT) at --rate / --flows each",
      .flows_apart = true,
      .make = [](const SimConfig&, const TrafficSettings&) -> std::unique_ptr<TrafficSource> {
        return std::make_unique<traffic::Paced>(/*measure_rate=*/true);
      },
  };
  return info;
}

}  // namespace ufq::sim
