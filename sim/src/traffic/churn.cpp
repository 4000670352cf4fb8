// churn: EDT flows that live an exponential time, then fall silent for good;
// a flow with a never-seen key takes each one's place (`flows` stay alive).
#include "paced.hpp"

namespace ufq::sim {
namespace {

class Churn : public traffic::Paced {
 public:
  explicit Churn(Time lifetime) : Paced(/*measure_rate=*/false), lifetime_(lifetime) {}

  void started(TrafficFlow& f, TrafficHost& host) override {
    host.wake_at(f, host.now() + host.rng().exponential(static_cast<double>(lifetime_)));
  }
  // The successor's first departure is a random phase within one gap away, as
  // the first flows' were.
  void wake(TrafficFlow& f, TrafficHost& host) override {
    host.renew(f);
    f.next_stamp = host.now() + host.rng().below(f.gap) + 1;
    host.start(f);
  }

 private:
  Time lifetime_;
};

}  // namespace

const TrafficModelInfo& traffic_model_churn() {
  static const TrafficModelInfo info{
      .name = "churn",
      .help = "edt flows that live an exponential time (--flow-lifetime), each replaced by a new key",
      .params = {{.name = "flow-lifetime", .type = TrafficParam::Type::time,
                  .help = "mean life of a flow (exponential); --flows stay alive, each replaced by a new key",
                  .default_time = 30 * kNsecPerSec, .min = kNsecPerMsec, .max = 86400 * kNsecPerSec}},
      .shared_wakes = true,
      .work = [](const SimConfig& c) {
        const Time life = std::get<Time>(traffic_setting(traffic_model_churn(), c.traffic_settings, "flow-lifetime"));
        return TrafficWork{static_cast<double>(c.flows) * 1e9 / static_cast<double>(life), "flow replacements",
                           {"flows", "duration", "flow-lifetime"}};
      },
      .make = [](const SimConfig&, const TrafficSettings& s) -> std::unique_ptr<TrafficSource> {
        return std::make_unique<Churn>(std::get<Time>(traffic_setting(traffic_model_churn(), s, "flow-lifetime")));
      },
  };
  return info;
}

}  // namespace ufq::sim
