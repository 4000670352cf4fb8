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
#include <string_view>

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

using K = SettingRange::Kind;
constexpr double kSec = 1e9;
// Why the limits: a flow count and in-flight packets that fit memory, times
// whose sums cannot overflow, rates the NIC model's integer serialisation can
// represent, and CPU costs that keep a long run's sums within 64 bits.
constexpr SettingRange kRanges[] = {
    {"flows", K::count, 1, 10'000'000},
    {"rate", K::number, 0, 1e9},  // packets/s; above 0
    {"packet-size", K::count, 64, 65535},
    {"inflight", K::count, 1, 1000},
    {"duration", K::time, 1, 3600 * kSec},
    {"interval", K::time, 1, 3600 * kSec},
    {"queues", K::count, 1, 1024},
    {"cpus", K::count, 1, 4096},  // and at least queues
    {"irq-latency", K::time, 0, 1e6},
    {"nic-latency", K::time, 0, kSec},
    {"tx-usecs", K::time, 0, kSec},
    {"nic-rate", K::rate, 1e6, 1e13},
    {"ring", K::count, 1, 65536},
    {"tx-frames", K::count, 1, 4294967295.0},
    {"tick-hz", K::count, 0, 100'000},  // above 1 GHz the tick period rounds to 0 ns
    {"other-irq-rate", K::number, 0, 1e8},
    {"base-sy", K::number, 0, 100},
    {"guest-sndbuf", K::count, 1, 1000},
    {"guest-wake-at", K::count, 0, 999},  // and below guest-sndbuf
    {"guest-burst", K::count, 1, 1000},
    {"guest-send-cost", K::time, 1, 1e6},  // 0 would let a sender that never blocks stop the clock
    {"guest-epoll-cost", K::time, 0, 1e6},
    {"guest-wake-latency", K::time, 0, kSec},
    {"guest-wake-latency-mean", K::time, 0, kSec},  // and at least guest-wake-latency
    {"guest-lead", K::time, 0, 3600 * kSec},
    {"guest-send-for", K::time, 0, 3600 * kSec},
    {"wheel-timers", K::number, 0, 1e5},
    {"softirq-cost", K::time, 0, 1e6},
    {"cost-timer-irq", K::count, 0, 1e6},
    {"cost-nic-irq", K::count, 0, 1e6},
    {"cost-other-irq", K::count, 0, 1e6},
    {"cost-packet", K::count, 0, 1e6},
    {"cost-run", K::count, 0, 1e6},
};

std::string format_rate(double bits) {
  struct Unit {
    double v;
    const char* s;
  };
  for (const Unit u : {Unit{1e12, "tbit"}, Unit{1e9, "gbit"}, Unit{1e6, "mbit"}, Unit{1e3, "kbit"}})
    if (bits >= u.v) return number(bits / u.v) + u.s;
  return number(bits) + "bit";
}

std::string shown(const SettingRange& r, double v) {
  switch (r.kind) {
    case K::time: return format_time(static_cast<Time>(v));
    case K::rate: return format_rate(v);
    default: return number(v);
  }
}

void check(std::string_view setting, double v) {
  const SettingRange& r = setting_range(setting);
  const bool ok = r.setting == "rate" ? v > 0 && v <= r.max : v >= r.min && v <= r.max;
  if (!ok) throw SimConfigError(std::string(setting), shown(r, v), r.describe());
}

}  // namespace

std::string SettingRange::describe() const {
  switch (kind) {
    case Kind::time:
      return "a time from " + format_time(static_cast<Time>(min)) + " to " + format_time(static_cast<Time>(max));
    case Kind::rate: return "a rate from " + format_rate(min) + " to " + format_rate(max);
    case Kind::number:
      return setting == "rate" ? "above 0, up to " + number(max) + " packets/s" : number(min) + ".." + number(max);
    case Kind::count: return number(min) + ".." + number(max);
  }
  return "";
}

const SettingRange& setting_range(std::string_view setting) {
  for (const SettingRange& r : kRanges)
    if (r.setting == setting) return r;
  throw std::out_of_range("no range for setting " + std::string(setting));
}

void validate(const SimConfig& c) {
  const TrafficModelInfo* model = find_traffic_model(c.traffic);
  if (!model) throw SimConfigError("traffic", c.traffic, traffic_model_names());
  const auto d = [](auto v) { return static_cast<double>(v); };
  if (!ignored_by(*model, "flows")) check("flows", d(c.flows));
  if (!ignored_by(*model, "rate")) check("rate", c.rate_pps);
  if (!ignored_by(*model, "packet-size")) check("packet-size", d(c.packet_size));
  check("inflight", d(c.inflight));
  check("duration", d(c.duration));
  check("interval", d(c.interval));
  check("queues", d(c.queues));
  check("cpus", d(c.cpus));
  if (c.cpus < c.queues)
    throw SimConfigError("cpus", std::to_string(c.cpus), "at least {queues} (" + std::to_string(c.queues) + ")");
  check("irq-latency", d(c.irq_latency));
  check("nic-latency", d(c.nic.irq_latency));
  check("tx-usecs", d(c.nic.tx_usecs));
  check("nic-rate", d(c.nic.line_rate_bps));
  check("ring", d(c.nic.ring_size));
  check("tx-frames", d(c.nic.tx_frames));
  check("tick-hz", d(c.tick_hz));
  check("other-irq-rate", c.other_irq_per_s);
  check("base-sy", c.base_sy_pct);
  const GuestConfig& g = c.guest;
  if (g.sender && c.traffic != "rate" && c.traffic != "edt")
    throw SimConfigError("traffic", c.traffic, "rate or edt with {guest-sender} (the harness's sender)");
  check("guest-sndbuf", d(g.sndbuf));
  check("guest-wake-at", d(g.wake_at));
  if (g.wake_at >= g.sndbuf)
    throw SimConfigError("guest-wake-at", std::to_string(g.wake_at),
                         "below {guest-sndbuf} (" + std::to_string(g.sndbuf) + ")");
  check("guest-burst", d(g.burst));
  check("guest-send-cost", d(g.send_cost));
  check("guest-epoll-cost", d(g.epoll_cost));
  check("guest-wake-latency", d(g.wake_latency_min));
  check("guest-wake-latency-mean", d(g.wake_latency_mean));
  if (g.wake_latency_mean < g.wake_latency_min)
    throw SimConfigError("guest-wake-latency-mean", format_time(g.wake_latency_mean),
                         "at least {guest-wake-latency} (" + format_time(g.wake_latency_min) + ")");
  check("guest-lead", d(g.lead));
  check("guest-send-for", d(g.send_for));
  check("wheel-timers", g.wheel_timers_per_s);
  check("softirq-cost", d(g.softirq_cost));
  check("cost-timer-irq", d(c.cost.timer_interrupt));
  check("cost-nic-irq", d(c.cost.nic_interrupt));
  check("cost-other-irq", d(c.cost.other_interrupt));
  check("cost-packet", d(c.cost.packet));
  check("cost-run", d(c.cost.qdisc_run));
  if (!ignored_by(*model, "flows") && d(c.flows) * c.inflight > 5e7)
    throw SimConfigError("flows", std::to_string(c.flows) + " x {inflight} " + std::to_string(c.inflight),
                         "at most 50000000 packets in flight (memory)");
  // A dummy NIC hands each packet back after its latency; at 0 unpaced flows
  // would resend forever without the simulated clock moving.
  if (c.traffic == "bulk" && c.nic.dummy && c.nic.irq_latency == 0)
    throw SimConfigError("nic-latency", "0",
                         "a time from 1ns to 1s with {nic-dummy} and {traffic} bulk (unpaced flows would resend "
                         "forever at one instant)");
  // Every setting given is one the model declares, and in its range.
  for (const auto& setting : c.traffic_settings) {
    const std::string& name = setting.first;  // not a structured binding: Clang 14 cannot capture one
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
