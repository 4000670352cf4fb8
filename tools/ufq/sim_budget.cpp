#include "sim_budget.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "memory_budget.hpp"

namespace ufq::cli {
namespace {

// Measured on the release build (peak RSS over --flows and --inflight
// sweeps): about 220 bytes per flow (its state, start event and fq's flow
// record), 100 per pooled packet, 20 KiB per transmit queue and 32 per
// bucket of the reference scheduler's flow table. Rounded up for headroom.
constexpr double kBytesPerFlow = 320;
constexpr double kBytesPerPacket = 128;
constexpr double kBytesPerQueue = 32 * 1024;
constexpr double kBytesPerReferenceBucket = 40;
constexpr double kBaseBytes = 16 * 1024 * 1024;

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

struct Term {
  double amount;
  const char* what;  // the options that drive it
};

// Packets per second the traffic can offer: an upper bound, not a forecast.
Term packet_rate(const sim::SimConfig& c) {
  const double wire_pps = c.nic.dummy ? 1e300
                                      : static_cast<double>(c.queues) * static_cast<double>(c.nic.line_rate_bps) /
                                            (8.0 * (c.packet_size + c.nic.wire_overhead));
  switch (c.traffic) {
    case sim::TrafficModel::bulk: {
      // Unpaced: the NIC sets the pace; a dummy NIC returns each packet after --nic-latency.
      if (!c.nic.dummy)
        return {wire_pps, "packets (bulk traffic at line rate: --nic-rate x --queues / --packet-size)"};
      const double per_packet_s = std::max<double>(static_cast<double>(c.nic.irq_latency), 0.5) / 1e9;
      return {static_cast<double>(c.flows) * c.inflight / per_packet_s,
              "packets (bulk traffic over --nic-dummy: --flows x --inflight / --nic-latency)"};
    }
    case sim::TrafficModel::maxrate:
      if (c.fq.maxrate != kUnlimitedRate)
        return {std::min(wire_pps, static_cast<double>(c.flows) * static_cast<double>(c.fq.maxrate) / c.packet_size),
                "packets (--flows x fq maxrate / --packet-size)"};
      return {std::min(wire_pps, c.rate_pps), "packets (--rate x --duration)"};
    case sim::TrafficModel::pcap:
      return {0, "packets"};  // as many as the capture holds
    default:
      return {std::min(wire_pps, c.rate_pps), "packets (--rate x --duration)"};
  }
}

}  // namespace

std::string check_sim_plan(const sim::SimConfig& c, std::size_t runs) {
  const double seconds = static_cast<double>(c.duration) / 1e9;
  const double samples = static_cast<double>(c.duration) / static_cast<double>(c.interval);
  if (samples > kMaxSimSamples)
    return "--interval: --duration / --interval is " + sci(samples) + " samples, more than " + sci(kMaxSimSamples) +
           " per run; give a longer --interval";

  // Work: the events the run would simulate, the biggest term named.
  std::vector<Term> work;
  const Term rate = packet_rate(c);
  work.push_back({rate.amount * seconds, rate.what});
  if (c.traffic == sim::TrafficModel::onoff)
    work.push_back({static_cast<double>(c.flows) * seconds * 2e9 / static_cast<double>(c.on_mean + c.off_mean),
                    "on/off switches (--flows x --duration / --on, --off)"});
  if (c.traffic == sim::TrafficModel::churn)
    work.push_back({static_cast<double>(c.flows) * seconds * 1e9 / static_cast<double>(c.flow_lifetime),
                    "flow replacements (--flows x --duration / --flow-lifetime)"});
  work.push_back(
      {static_cast<double>(c.tick_hz) * c.queues * seconds, "timer ticks (--tick-hz x --queues x --duration)"});
  work.push_back({c.other_irq_per_s * seconds, "other interrupts (--other-irq-rate x --duration)"});
  work.push_back({static_cast<double>(c.flows), "flows (--flows)"});
  double events = 0;
  const Term* biggest = &work.front();
  for (const Term& t : work) {
    events += t.amount;
    if (t.amount > biggest->amount) biggest = &t;
  }
  events *= static_cast<double>(runs);
  if (!(events <= kMaxSimEvents))
    return "the run would simulate about " + sci(events) + " events, mostly " + biggest->what + ", more than " +
           sci(kMaxSimEvents) + " (hours of CPU)" +
           (runs > 1 ? " over " + std::to_string(runs) + " --compare runs" : "") +
           "; shorten --duration or scale the workload down";

  // Memory: one run's flows, packets and tables at a time, every run's samples.
  std::vector<Term> memory;
  memory.push_back({static_cast<double>(c.flows) * kBytesPerFlow, "--flows"});
  memory.push_back({static_cast<double>(c.flows) * c.inflight * kBytesPerPacket, "--flows x --inflight"});
  memory.push_back({static_cast<double>(c.queues) * kBytesPerQueue, "--queues"});
  if (c.scheduler == sim::SchedulerKind::reference)
    memory.push_back({static_cast<double>(c.queues) * static_cast<double>(c.fq.buckets()) * kBytesPerReferenceBucket,
                      "--queues x fq buckets (--scheduler reference)"});
  memory.push_back({samples * sizeof(sim::Sample) * 2 * static_cast<double>(runs), "--duration / --interval"});
  double bytes = kBaseBytes;
  const Term* largest = &memory.front();
  for (const Term& t : memory) {
    bytes += t.amount;
    if (t.amount > largest->amount) largest = &t;
  }
  return check_memory(bytes, largest->what, "lower it");
}

}  // namespace ufq::cli
