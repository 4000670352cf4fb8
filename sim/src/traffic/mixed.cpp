// mixed: fast and slow EDT flows side by side, the workload of the adaptive
// slack (docs/fq-rules.md#adaptive-slack, docs/results.md): --fast-flows of
// the --flows stamp their packets --fast-gap apart (1514 B every 12us is
// 1 Gbit/s), the others --slow-gap apart (every 12ms, 1 Mbit/s). Each class's
// lateness is reported as a fraction of its gap.
#include <algorithm>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {
namespace {

class Mixed : public TrafficSource {
 public:
  Mixed(std::uint32_t fast_flows, Time fast_gap, Time slow_gap)
      : fast_flows_(fast_flows), fast_gap_(fast_gap), slow_gap_(slow_gap) {}

  Time init(TrafficFlow& f, TrafficHost& host) override {
    const bool fast = f.slot < fast_flows_;
    f.owner.tcp = true;
    f.gap = fast ? fast_gap_ : slow_gap_;
    f.target_pps = 1e9 / static_cast<double>(f.gap);
    f.lateness_class = fast ? 1 : 2;
    const Time phase = host.rng().below(f.gap);
    f.next_stamp = phase + 1;  // 0 would mean "no timestamp"
    return phase;
  }

  std::vector<LatenessClass> lateness_classes() const override {
    return {{"fast", fast_gap_}, {"slow", slow_gap_}};
  }

 private:
  std::uint32_t fast_flows_;
  Time fast_gap_, slow_gap_;
};

struct Settings {
  std::uint32_t fast_flows;
  Time fast_gap, slow_gap;
};

Settings settings_of(const TrafficModelInfo& self, const TrafficSettings& s) {
  return {static_cast<std::uint32_t>(std::get<Time>(traffic_setting(self, s, "fast-flows"))),
          std::get<Time>(traffic_setting(self, s, "fast-gap")), std::get<Time>(traffic_setting(self, s, "slow-gap"))};
}

}  // namespace

const TrafficModelInfo& traffic_model_mixed() {
  static const TrafficModelInfo info{
      .name = "mixed",
      .help = "edt flows of two speeds: --fast-flows of --flows stamp --fast-gap apart, the rest --slow-gap apart",
      .params = {{.name = "fast-flows", .type = TrafficParam::Type::count,
                  .help = "how many of the --flows are fast (the first ones; the rest are slow)",
                  .default_time = 8, .min = 0, .max = 10'000'000},
                 {.name = "fast-gap", .type = TrafficParam::Type::time, .help = "packet gap of a fast flow",
                  .default_time = 12 * kNsecPerUsec, .min = 100, .max = 3600 * kNsecPerSec},
                 {.name = "slow-gap", .type = TrafficParam::Type::time, .help = "packet gap of a slow flow",
                  .default_time = 12 * kNsecPerMsec, .min = 100, .max = 3600 * kNsecPerSec}},
      .ignores = {{"rate", "each flow's gap sets its rate (--fast-gap, --slow-gap)"}},
      .flows_apart = true,
      .packets =
          [](const SimConfig& c) {
            const Settings s = settings_of(traffic_model_mixed(), c.traffic_settings);
            const double fast = std::min<double>(s.fast_flows, c.flows);
            return TrafficWork{fast * 1e9 / static_cast<double>(s.fast_gap) +
                                   (c.flows - fast) * 1e9 / static_cast<double>(s.slow_gap),
                               "packets", {"flows", "fast-flows", "fast-gap", "slow-gap"}};
          },
      .make = [](const SimConfig&, const TrafficSettings& s) -> std::unique_ptr<TrafficSource> {
        const Settings v = settings_of(traffic_model_mixed(), s);
        return std::make_unique<Mixed>(v.fast_flows, v.fast_gap, v.slow_gap);
      },
  };
  return info;
}

}  // namespace ufq::sim
