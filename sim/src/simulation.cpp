// The seed's experiment, simulated. A packet's way: a traffic source enqueues
// it into the fq of its flow's transmit queue; that queue's CPU runs the qdisc
// (QdiscRunner) after enqueues, on NIC completion interrupts and on the fq
// watchdog's hrtimer; the runner hands packets to the NIC model; the NIC's
// completion interrupt gives them back to their source, which enqueues the
// next one (TCP small queues). Counters at every step feed the vmstat-like
// samples and the cost model.

#include "ufq/sim/simulation.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "simulation_impl.hpp"
#include "ufq/scheduler.hpp"

namespace ufq::sim {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool ignored_by(const TrafficModelInfo& m, std::string_view setting) {
  for (const IgnoredSetting& i : m.ignores)
    if (i.setting == setting) return true;
  return false;
}

}  // namespace

void validate(const SimConfig& c) {
  const TrafficModelInfo* model = find_traffic_model(c.traffic);
  if (!model) throw SimConfigError("traffic", c.traffic, traffic_model_names());
  if (c.flows == 0 && !ignored_by(*model, "flows")) throw SimConfigError("flows", "0", "at least 1");
  if (c.queues == 0) throw SimConfigError("queues", "0", "at least 1");
  if (c.cpus < c.queues) throw SimConfigError("cpus", std::to_string(c.cpus), "at least queues (" + std::to_string(c.queues) + ")");
  if (!(c.rate_pps > 0) && !ignored_by(*model, "rate")) throw SimConfigError("rate", number(c.rate_pps), "above 0");
  if (c.packet_size == 0 && !ignored_by(*model, "packet-size")) throw SimConfigError("packet-size", "0", "at least 1");
  if (c.duration == 0) throw SimConfigError("duration", "0", "a positive time");
  if (c.interval == 0) throw SimConfigError("interval", "0", "a positive time");
  if (c.inflight == 0) throw SimConfigError("inflight", "0", "at least 1");
  // Every setting given is one the model declares, and in its range.
  for (const auto& [name, value] : c.traffic_settings) {
    (void)value;
    if (std::none_of(model->params.begin(), model->params.end(), [&](const TrafficParam& p) { return p.name == name; }))
      throw SimConfigError(name, "", "not a setting of traffic " + c.traffic);
  }
  for (const TrafficParam& p : model->params) (void)traffic_setting(*model, c.traffic_settings, p.name);
}

EventCounts& EventCounts::operator+=(const EventCounts& o) {
  packets += o.packets;
  timer_interrupts += o.timer_interrupts;
  timers_run += o.timers_run;
  device_writes += o.device_writes;
  nic_interrupts += o.nic_interrupts;
  completions += o.completions;
  other_interrupts += o.other_interrupts;
  watchdog_fires += o.watchdog_fires;
  qdisc_runs += o.qdisc_runs;
  doorbells += o.doorbells;
  return *this;
}

EventCounts operator-(const EventCounts& a, const EventCounts& b) {
  EventCounts d = a;
  d.packets -= b.packets;
  d.timer_interrupts -= b.timer_interrupts;
  d.timers_run -= b.timers_run;
  d.device_writes -= b.device_writes;
  d.nic_interrupts -= b.nic_interrupts;
  d.completions -= b.completions;
  d.other_interrupts -= b.other_interrupts;
  d.watchdog_fires -= b.watchdog_fires;
  d.qdisc_runs -= b.qdisc_runs;
  d.doorbells -= b.doorbells;
  return d;
}

Time cpu_time(const EventCounts& c, const CostModel& m) {
  return c.timer_interrupts * m.timer_interrupt + c.timers_run * m.timer_callback +
         c.device_writes * m.reprogram + c.nic_interrupts * m.nic_interrupt +
         c.completions * m.completion + c.other_interrupts * m.other_interrupt +
         c.qdisc_runs * m.qdisc_run + c.packets * m.packet + c.doorbells * m.doorbell;
}

double SimResult::cpu_sys_pct() const {
  const double cpu_ns = seconds() * 1e9 * config.cpus;
  return cpu_ns > 0 ? 100.0 * static_cast<double>(total.busy) / cpu_ns + config.base_sy_pct : 0;
}

double SimResult::mean_batch() const {
  return runs_sending ? static_cast<double>(packets_sent) / static_cast<double>(runs_sending) : 0;
}

SimResult simulate(const SimConfig& cfg, const std::function<void(double)>& progress,
                   const std::function<void(Sample&)>& on_sample) {
  if (cfg.scheduler == SchedulerKind::reference)
    throw std::invalid_argument(
        "scheduler reference: run it with simulate_reference() (ufq/sim/simulation_reference.hpp, "
        "library ufq_sim_reference)");
  detail::Simulation<FqScheduler> sim(cfg, progress, on_sample);
  return sim.run();
}

}  // namespace ufq::sim
