// EDT-stamped flows, the common part of edt, onoff and churn: each flow
// stamps its packets `rate / flows` apart, from a random phase within one gap.
#pragma once

#include <cmath>

#include "ufq/sim/simulation.hpp"
#include "ufq/sim/traffic.hpp"

namespace ufq::sim::traffic {

class Paced : public TrafficSource {
 public:
  explicit Paced(bool measure_rate) : measure_rate_(measure_rate) {}

  Time init(TrafficFlow& f, TrafficHost& host) override {
    const SimConfig& c = host.config();
    f.owner.tcp = true;
    f.gap = static_cast<Time>(std::llround(1e9 / (c.rate_pps / c.flows)));
    f.target_pps = measure_rate_ ? 1e9 / static_cast<double>(f.gap) : 0;
    const Time phase = host.rng().below(f.gap);
    f.next_stamp = phase + 1;  // 0 would mean "no timestamp"
    return phase;
  }

 private:
  bool measure_rate_;  // short lives (churn) and pauses (onoff) make the rate error meaningless
};

}  // namespace ufq::sim::traffic
