// pcap: the replay of a capture: flows by 5-tuple, each packet with its
// captured length, departing at its capture time.
#include "trace_replay.hpp"
#include "ufq/sim/pcap_trace.hpp"

namespace ufq::sim {

const TrafficModelInfo& traffic_model_pcap() {
  static const TrafficModelInfo info{
      .name = "pcap",
      .help = "replay of a capture (--pcap): flows by 5-tuple, departures at capture times",
      .params = {{.name = "pcap", .type = TrafficParam::Type::file, .help = "pcap: capture to replay (flows by 5-tuple)"}},
      .ignores = {{"flows", "the capture's 5-tuples make the flows"},
                  {"rate", "the capture's times set the pace"},
                  {"packet-size", "each packet keeps its captured length"}},
      .flows_apart = true,
      .packets = [](const SimConfig&) { return TrafficWork{0, "packets", {}}; },  // as many as the capture holds
      .make = [](const SimConfig&, const TrafficSettings& s) -> std::unique_ptr<TrafficSource> {
        const auto path = std::get<std::string>(traffic_setting(traffic_model_pcap(), s, "pcap"));
        Trace t = read_pcap(path);
        if (t.flows == 0) throw SimConfigError("pcap", path, "a capture with at least one packet");
        return std::make_unique<traffic::TraceReplay>(std::move(t));
      },
  };
  return info;
}

}  // namespace ufq::sim
