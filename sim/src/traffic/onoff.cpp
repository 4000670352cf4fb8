// onoff: EDT flows that alternate exponential on and off periods.
#include <algorithm>

#include "paced.hpp"

namespace ufq::sim {
namespace {

class OnOff : public traffic::Paced {
 public:
  OnOff(Time on, Time off) : Paced(/*measure_rate=*/false), on_(on), off_(off) {}

  void started(TrafficFlow& f, TrafficHost& host) override {
    host.wake_at(f, host.now() + host.rng().exponential(static_cast<double>(on_)));
  }
  void wake(TrafficFlow& f, TrafficHost& host) override {
    f.on = !f.on;
    if (f.on) {
      f.next_stamp = std::max(f.next_stamp, host.now());
      host.resume(f);
    }
    host.wake_at(f, host.now() + host.rng().exponential(static_cast<double>(f.on ? on_ : off_)));
  }

 private:
  Time on_, off_;
};

}  // namespace

const TrafficModelInfo& traffic_model_onoff() {
  // Below 1us the switches alone swamp the run; above a day the exponential draws overflow.
  static const TrafficModelInfo info{
      .name = "onoff",
      .help = "edt flows that alternate exponential on and off periods (--on, --off)",
      .params = {{.name = "on", .type = TrafficParam::Type::time, .help = "mean on period",
                  .default_time = 100 * kNsecPerMsec, .min = kNsecPerUsec, .max = 86400 * kNsecPerSec},
                 {.name = "off", .type = TrafficParam::Type::time, .help = "mean off period",
                  .default_time = 100 * kNsecPerMsec, .min = kNsecPerUsec, .max = 86400 * kNsecPerSec}},
      .work = [](const SimConfig& c) {
        const TrafficModelInfo& self = traffic_model_onoff();
        const Time on = std::get<Time>(traffic_setting(self, c.traffic_settings, "on"));
        const Time off = std::get<Time>(traffic_setting(self, c.traffic_settings, "off"));
        return TrafficWork{static_cast<double>(c.flows) * 2e9 / static_cast<double>(on + off), "on/off switches",
                           {"flows", "duration", "on", "off"}};
      },
      .make = [](const SimConfig&, const TrafficSettings& s) -> std::unique_ptr<TrafficSource> {
        const TrafficModelInfo& self = traffic_model_onoff();
        return std::make_unique<OnOff>(std::get<Time>(traffic_setting(self, s, "on")),
                                       std::get<Time>(traffic_setting(self, s, "off")));
      },
  };
  return info;
}

}  // namespace ufq::sim
