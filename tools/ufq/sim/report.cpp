#include "sim/report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/stats_print.hpp"

namespace ufq::sim {

namespace {

double per_s(std::uint64_t n, Time span) {
  return span ? static_cast<double>(n) * 1e9 / static_cast<double>(span) : 0.0;
}

double sys_pct(const SimResult& r, const Sample& s) {
  const double cpu_ns = static_cast<double>(s.end - s.start) * r.config.cpus;
  return cpu_ns > 0 ? 100.0 * static_cast<double>(s.busy) / cpu_ns + r.config.base_sy_pct : 0.0;
}

}  // namespace

std::string vmstat_header() {
  return fmt::format("{:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>3} {:>3} {:>9} {:>6}\n", "time", "in",
                     "timer", "nic", "other", "wk", "runs", "sy", "id", "pps", "p/run");
}

std::string vmstat_line(const SimResult& r, const Sample& s) {
  const Time span = s.end - s.start;
  const double sy = sys_pct(r, s);
  const double batch =
      s.n.qdisc_runs ? static_cast<double>(s.n.packets) / static_cast<double>(s.n.qdisc_runs) : 0.0;
  return fmt::format("{:>7.1f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>9.0f} {:>3.0f} {:>3.0f} {:>9.0f} {:>6.2f}\n",
                     static_cast<double>(s.end) / 1e9, per_s(s.n.interrupts(), span),
                     per_s(s.n.timer_interrupts, span), per_s(s.n.nic_interrupts, span),
                     per_s(s.n.other_interrupts, span), per_s(s.n.watchdog_fires, span),
                     per_s(s.n.qdisc_runs, span), sy, std::max(0.0, 100.0 - sy), per_s(s.n.packets, span), batch);
}

std::string summary(const SimResult& r) {
  const auto& t = r.total;
  std::string out;
  out += fmt::format("packets: sent {} dropped {} queued {} (offered {})\n", r.packets_sent,
                     r.packets_dropped, r.packets_queued, r.packets_offered);
  out += fmt::format("rate: {:.0f} pkt/s; flow rate error max {:.4f}% mean {:.4f}%\n", r.per_s(t.n.packets),
                     r.flow_rate_error_max * 100, r.flow_rate_error_mean * 100);
  out += fmt::format("interrupts/s: {:.0f} (timer {:.0f}, nic {:.0f}, other {:.0f}); watchdog wake-ups/s {:.0f}\n",
                     r.per_s(t.n.interrupts()), r.per_s(t.n.timer_interrupts), r.per_s(t.n.nic_interrupts),
                     r.per_s(t.n.other_interrupts), r.per_s(t.n.watchdog_fires));
  out += fmt::format("qdisc runs/s {:.0f}, packets per sending run {:.2f}, packets per timer interrupt {:.2f}\n",
                     r.per_s(t.n.qdisc_runs), r.mean_batch(),
                     t.n.timer_interrupts ? static_cast<double>(t.n.packets) / static_cast<double>(t.n.timer_interrupts) : 0.0);
  out += fmt::format("lateness (departure - due): p50 {} ns, p99 {} ns, max {} ns\n", r.lateness.quantile(0.5),
                     r.lateness.quantile(0.99), r.lateness.max());
  for (const ClassLateness& k : r.classes)
    out += fmt::format("lateness of {} flows ({}, gap {} ns) as a fraction of the gap: p50 {:.4f}, p99 {:.4f}, max {:.4f}\n",
                       k.name, k.flows, k.gap, k.of_gap(0.5), k.of_gap(0.99), k.of_gap(1.0));
  out += fmt::format("cpu: sy {:.1f}% of {} cpus\n", r.cpu_sys_pct(), r.config.cpus);
  return out;
}

std::string soak_header(bool rss) {
  return fmt::format("{:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>5}{}\n", "time", "fq_flows", "inactive",
                     "throttled", "created", "collected", "qlen", "books", rss ? fmt::format(" {:>9}", "rss_MB") : "");
}

std::string soak_line(const Sample& s, bool rss) {
  const FlowCensus& k = s.census;
  return fmt::format("{:>7.1f} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>5}{}\n", static_cast<double>(s.end) / 1e9,
                     k.flows, k.inactive, k.throttled, k.created, k.gc_flows, k.qlen, k.reconciled() ? "ok" : "WRONG",
                     rss ? fmt::format(" {:>9.1f}", static_cast<double>(s.rss_kb) / 1024) : "");
}

namespace {

struct CensusTotals {
  std::uint64_t max_flows = 0;
  Time max_flows_at = 0;
  std::size_t unbalanced = 0;  // samples whose books did not balance
};

CensusTotals census_totals(const SimResult& r) {
  CensusTotals t;
  for (const Sample& s : r.samples) {
    if (s.census.flows > t.max_flows) {
      t.max_flows = s.census.flows;
      t.max_flows_at = s.end;
    }
    if (!s.census.reconciled()) ++t.unbalanced;
  }
  return t;
}

}  // namespace

std::string soak_summary(const SimResult& r) {
  const CensusTotals t = census_totals(r);
  std::string out = fmt::format(
      "flows: created {}, collected {}, most held by fq {} (at {:.1f} s); books balanced at {} of {} samples\n",
      r.flows_created, r.qdisc.gc_flows, t.max_flows, static_cast<double>(t.max_flows_at) / 1e9,
      r.samples.size() - t.unbalanced, r.samples.size());
  if (r.peak_rss_kb) out += fmt::format("peak RSS {:.1f} MB\n", static_cast<double>(r.peak_rss_kb) / 1024);
  return out;
}

std::string compare_table(const std::vector<std::string>& labels, const std::vector<SimResult>& runs) {
  std::string out = fmt::format("{:<26}", "");
  for (const auto& l : labels) out += fmt::format(" {:>16}", l);
  if (runs.size() > 1) out += fmt::format(" {:>9}", "ratio");
  out += "\n";
  auto row = [&](const char* name, auto value, const char* format, bool ratio = true) {
    out += fmt::format("{:<26}", name);
    for (const auto& r : runs) out += fmt::format(fmt::runtime(format), value(r));
    if (runs.size() > 1 && !ratio) {
      out += fmt::format(" {:>9}", "-");
    } else if (runs.size() > 1) {
      const double a = static_cast<double>(value(runs.front()));
      const double b = static_cast<double>(value(runs.back()));
      out += a != 0 ? fmt::format(" {:>9.3f}", b / a) : fmt::format(" {:>9}", "-");
    }
    out += "\n";
  };
  row("in (interrupts/s)", [](const SimResult& r) { return r.per_s(r.total.n.interrupts()); }, " {:>16.0f}");
  row("timer interrupts/s", [](const SimResult& r) { return r.per_s(r.total.n.timer_interrupts); }, " {:>16.0f}");
  row("other interrupts/s", [](const SimResult& r) {
        return r.per_s(r.total.n.nic_interrupts + r.total.n.other_interrupts);
      }, " {:>16.0f}");
  row("watchdog wake-ups/s", [](const SimResult& r) { return r.per_s(r.total.n.watchdog_fires); }, " {:>16.0f}");
  row("sy (%)", [](const SimResult& r) { return r.cpu_sys_pct(); }, " {:>16.1f}");
  row("packets/s", [](const SimResult& r) { return r.per_s(r.total.n.packets); }, " {:>16.0f}");
  row("packets per run", [](const SimResult& r) { return r.mean_batch(); }, " {:>16.2f}");
  row("flow rate error max (%)", [](const SimResult& r) { return r.flow_rate_error_max * 100; }, " {:>16.4f}",
      false);
  row("lateness p50 (us)", [](const SimResult& r) { return static_cast<double>(r.lateness.quantile(0.5)) / 1e3; }, " {:>16.2f}");
  row("lateness p99 (us)", [](const SimResult& r) { return static_cast<double>(r.lateness.quantile(0.99)) / 1e3; }, " {:>16.2f}");
  row("lateness max (us)", [](const SimResult& r) { return static_cast<double>(r.lateness.max()) / 1e3; }, " {:>16.2f}");
  // Per class of flows (a traffic model with classes, e.g. mixed), as a fraction of the class's gap.
  for (std::size_t k = 0; !runs.empty() && k < runs[0].classes.size(); ++k)
    for (const double q : {0.5, 0.99}) {
      const auto name = fmt::format("{} p{:.0f} / gap", runs[0].classes[k].name, q * 100);
      row(name.c_str(), [k, q](const SimResult& r) { return k < r.classes.size() ? r.classes[k].of_gap(q) : 0.0; },
          " {:>16.4f}");
    }
  return out;
}

std::string to_json(const SimResult& r, const std::string& label) {
  using nlohmann::ordered_json;
  ordered_json j;
  if (!label.empty()) j["label"] = label;
  const auto& t = r.total;
  j["pps"] = r.per_s(t.n.packets);
  j["interrupts_per_s"] = r.per_s(t.n.interrupts());
  j["timer_interrupts_per_s"] = r.per_s(t.n.timer_interrupts);
  j["nic_interrupts_per_s"] = r.per_s(t.n.nic_interrupts);
  j["other_interrupts_per_s"] = r.per_s(t.n.other_interrupts);
  j["watchdog_wakeups_per_s"] = r.per_s(t.n.watchdog_fires);
  j["qdisc_runs_per_s"] = r.per_s(t.n.qdisc_runs);
  j["counts"] = {{"packets", t.n.packets},
                 {"timer_interrupts", t.n.timer_interrupts},
                 {"timers_run", t.n.timers_run},
                 {"device_writes", t.n.device_writes},
                 {"nic_interrupts", t.n.nic_interrupts},
                 {"completions", t.n.completions},
                 {"other_interrupts", t.n.other_interrupts},
                 {"watchdog_fires", t.n.watchdog_fires},
                 {"qdisc_runs", t.n.qdisc_runs},
                 {"doorbells", t.n.doorbells}};
  if (r.config.guest.sender || r.config.guest.nohz_idle) {
    const auto& g = r.guest;
    const double span = static_cast<double>(g.window_end - g.window_start) / 1e9;
    j["guest"] = {{"window_start_ns", g.window_start},
                  {"window_end_ns", g.window_end},
                  {"window_timer_interrupts", g.window.timer_interrupts},
                  {"window_watchdog_fires", g.window.watchdog_fires},
                  {"window_packets", g.window.packets},
                  {"window_timer_interrupts_per_s", span > 0 ? static_cast<double>(g.window.timer_interrupts) / span : 0.0},
                  {"tick_expiries", g.tick_expiries},
                  {"tick_stops", g.tick_stops},
                  {"sender_wakeups", g.sender_wakeups},
                  {"sends", g.sends}};
  }
  j["mean_batch"] = r.mean_batch();
  j["cpu_sys_pct"] = r.cpu_sys_pct();
  j["flow_rate_error_max"] = r.flow_rate_error_max;
  j["flow_rate_error_mean"] = r.flow_rate_error_mean;
  j["lateness_ns"] = {{"p50", r.lateness.quantile(0.5)},
                      {"p90", r.lateness.quantile(0.9)},
                      {"p99", r.lateness.quantile(0.99)},
                      {"max", r.lateness.max()},
                      {"mean", r.lateness.mean()}};
  if (!r.classes.empty()) {
    auto& classes = j["lateness_classes"] = nlohmann::ordered_json::array();
    for (const ClassLateness& k : r.classes)
      classes.push_back({{"name", k.name},
                         {"flows", k.flows},
                         {"gap_ns", k.gap},
                         {"p50_ns", k.lateness.quantile(0.5)},
                         {"p99_ns", k.lateness.quantile(0.99)},
                         {"max_ns", k.lateness.max()},
                         {"p50_of_gap", k.of_gap(0.5)},
                         {"p99_of_gap", k.of_gap(0.99)},
                         {"max_of_gap", k.of_gap(1.0)}});
  }
  j["packets_offered"] = r.packets_offered;
  j["packets_sent"] = r.packets_sent;
  j["packets_dropped"] = r.packets_dropped;
  j["packets_queued"] = r.packets_queued;
  const auto& c = r.config;
  j["workload"] = {{"traffic", c.traffic},
                   {"flows", c.flows},
                   {"rate_pps", c.rate_pps},
                   {"packet_size", c.packet_size},
                   {"duration_s", static_cast<double>(c.duration) / 1e9},
                   {"seed", c.seed},
                   {"queues", c.queues},
                   {"cpus", c.cpus}};
  // The model's own settings: times as <name>_s, counts as <name>, files by path.
  if (const TrafficModelInfo* m = find_traffic_model(c.traffic))
    for (const TrafficParam& p : m->params) {
      std::string key = p.name;
      for (char& ch : key)
        if (ch == '-') ch = '_';
      const TrafficValue v = traffic_setting(*m, c.traffic_settings, p.name);
      if (const Time* n = std::get_if<Time>(&v); n && p.type == TrafficParam::Type::count)
        j["workload"][key] = *n;
      else if (const Time* ns = std::get_if<Time>(&v))
        j["workload"][key + "_s"] = static_cast<double>(*ns) / 1e9;
      else
        j["workload"][key] = std::get<std::string>(v);
    }
  j["fq"] = ordered_json::parse(tc::fq_options_json(c.fq));
  ordered_json samples = ordered_json::array();
  for (const Sample& s : r.samples) {
    const Time span = s.end - s.start;
    const FlowCensus& k = s.census;
    ordered_json o = {{"t", static_cast<double>(s.end) / 1e9},
                      {"interrupts_per_s", per_s(s.n.interrupts(), span)},
                      {"timer_interrupts_per_s", per_s(s.n.timer_interrupts, span)},
                      {"watchdog_wakeups_per_s", per_s(s.n.watchdog_fires, span)},
                      {"cpu_sys_pct", sys_pct(r, s)},
                      {"pps", per_s(s.n.packets, span)},
                      {"fq_flows", k.flows},
                      {"inactive_flows", k.inactive},
                      {"throttled_flows", k.throttled},
                      {"flows_created", k.created},
                      {"gc_flows", k.gc_flows},
                      {"offered", k.offered},
                      {"dequeued", k.dequeued},
                      {"drops", k.drops},
                      {"purged", k.purged},
                      {"qlen", k.qlen},
                      {"reconciled", k.reconciled()}};
    if (s.rss_kb) o["rss_kb"] = s.rss_kb;
    samples.push_back(std::move(o));
  }
  j["samples"] = samples;
  const CensusTotals ct = census_totals(r);
  j["flows_created"] = r.flows_created;
  j["flows_collected"] = r.qdisc.gc_flows;
  j["max_fq_flows"] = ct.max_flows;
  j["reconciled_every_sample"] = ct.unbalanced == 0;
  if (r.peak_rss_kb) j["peak_rss_kb"] = r.peak_rss_kb;
  j["qdisc"] = "@QDISC@";
  std::string text = j.dump();
  const std::string marker = "\"@QDISC@\"";
  text.replace(text.find(marker), marker.size(), tc::format_fq_stats_json(r.qdisc));
  return text;
}

}  // namespace ufq::sim
