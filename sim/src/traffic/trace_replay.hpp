// A trace's packets replayed: the common part of pcap and csv. Each flow is
// started a little ahead of its first departure (as TSQ lets TCP queue ahead)
// and sends its packets in trace order, each stamped with its time.
#pragma once

#include <algorithm>
#include <vector>

#include "ufq/sim/pcap_trace.hpp"
#include "ufq/sim/simulation.hpp"
#include "ufq/sim/traffic.hpp"

namespace ufq::sim::traffic {

class TraceReplay : public TrafficSource {
 public:
  explicit TraceReplay(Trace t)
      : TrafficSource(OwnPackets{}), trace_(std::move(t)), per_flow_(trace_.flows), next_(trace_.flows, 0) {
    for (std::uint32_t k = 0; k < trace_.packets.size(); ++k) per_flow_[trace_.packets[k].flow].push_back(k);
  }

  std::uint32_t flows(const SimConfig&) const override { return static_cast<std::uint32_t>(trace_.flows); }

  Time init(TrafficFlow& f, TrafficHost&) override {
    const auto& mine = per_flow_[f.slot];
    if (mine.empty()) return kNever;
    const Time t = trace_.packets[mine.front()].time;
    return t > kLead ? t - kLead : 0;
  }

  bool own_next(TrafficFlow& f, Time& tstamp, std::uint32_t& len) override {
    std::size_t& k = next_[f.slot];
    const auto& mine = per_flow_[f.slot];
    if (k >= mine.size()) return false;
    const TracePacket& p = trace_.packets[mine[k++]];
    len = p.len;
    tstamp = std::max<Time>(p.time, 1);
    return true;
  }

 private:
  static constexpr Time kLead = kNsecPerMsec;
  Trace trace_;
  std::vector<std::vector<std::uint32_t>> per_flow_;  // the trace's packets of each flow, by index
  std::vector<std::size_t> next_;                     // each flow's next packet in per_flow_
};

}  // namespace ufq::sim::traffic
