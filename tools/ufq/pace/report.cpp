#include "pace/report.hpp"

#include <cstdio>
#include <sstream>

#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"
#include "ufq/tc/stats_print.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::rt {
namespace {

std::string fmt(const char* f, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), f, args...);
  return buf;
}

std::string us(std::uint64_t ns) { return fmt("%.1f", static_cast<double>(ns) / 1e3); }

std::string time_ns(std::uint64_t ns) {
  if (ns >= 10'000'000) return fmt("%.1f ms", static_cast<double>(ns) / 1e6);
  return fmt("%.1f us", static_cast<double>(ns) / 1e3);
}

nlohmann::ordered_json quantiles(const Histogram& h) {
  nlohmann::ordered_json j;
  j["p50"] = h.quantile(0.50);
  j["p99"] = h.quantile(0.99);
  j["max"] = h.max();
  j["mean"] = static_cast<std::uint64_t>(h.mean());
  j["count"] = h.count();
  return j;
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }

}  // namespace

std::string format_interval_header() {
  return "  time |     in/s     cs/s  us  sy  id | wake-ups/s pkts/wake-up      pkts/s  pacer-cpu\n";
}

std::string format_interval(const IntervalReport& r) {
  return fmt("%6.1f | %8.0f %8.0f %3.0f %3.0f %3.0f | %10.0f %12.2f %11.0f %9.1f%%\n", r.t_s,
             r.system.interrupts_per_s, r.system.context_switches_per_s, r.system.user_pct,
             r.system.system_pct, r.system.idle_pct, r.wakeups_per_s, r.packets_per_wakeup, r.pps,
             r.pacer_cpu_pct);
}

std::string format_timer_latency(const TimerLatency& t) {
  return fmt("timer wake-up latency (%s, %s sleeps, slack %s, %llu samples): p50 %s us, p99 %s us, max %s us\n",
             to_string(t.kind), tc::format_time64_ns(static_cast<std::int64_t>(t.period_ns)).c_str(),
             tc::format_time64_ns(static_cast<std::int64_t>(t.slack_ns)).c_str(),
             static_cast<unsigned long long>(t.lateness.count()), us(t.lateness.quantile(0.5)).c_str(),
             us(t.lateness.quantile(0.99)).c_str(), us(t.lateness.max()).c_str());
}

std::string format_summary(const PaceReport& r) {
  std::ostringstream o;
  const auto& w = r.workload;
  o << "== ufq pace" << (r.label.empty() ? "" : " [" + r.label + "]") << ": " << w.flows
    << " flows x " << fmt("%.4g", w.rate_pps / w.flows) << " pkt/s = " << fmt("%.0f", w.rate_pps)
    << " pkt/s, " << w.payload << " B payload, " << fmt("%.1f", r.seconds) << " s"
    << (r.stopped_by_signal ? " (stopped by signal)" : "") << "\n";
  o << "   timer " << r.timer << ", fq timer_slack "
    << tc::format_time64_ns(static_cast<std::int64_t>(r.fq.timer_slack_ns)) << ", egress " << r.egress
    << ", path " << r.path << "\n";
  o << fmt("   pacer:   %.0f wake-ups/s, %.2f packets/wake-up, %.0f packets/s, %.1f runs/wake-up\n",
           r.wakeups_per_s, r.packets_per_wakeup, r.pps,
           r.pacer.counters.wakeups ? static_cast<double>(r.pacer.counters.runs) /
                                          static_cast<double>(r.pacer.counters.wakeups)
                                    : 0.0);
  o << fmt("   system:  %.0f interrupts/s, %.0f context switches/s, us %.0f%% sy %.0f%% id %.0f%%\n",
           r.system.interrupts_per_s, r.system.context_switches_per_s, r.system.user_pct,
           r.system.system_pct, r.system.idle_pct);
  o << fmt("   CPU:     pacer thread%s %.1f%%, sender (pacer + producer) %.1f%%, receiver %.1f%%, process %.1f%% (of one CPU)\n",
           r.queues > 1 ? "s" : "", r.pacer_cpu_pct, r.cpu_pct, r.receiver_cpu_pct, r.process_cpu_pct);
  o << fmt("   per packet: pacer %.0f ns, sender %.0f ns, sender + ksoftirqd %.0f ns; softirq %.1f%% of all CPUs, ksoftirqd %.1f%% of one, NET_RX %.0f/s, NET_TX %.0f/s\n",
           r.pacer_ns_per_packet, r.sender_ns_per_packet, r.sender_softirq_ns_per_packet,
           r.system.softirq_pct, r.system.ksoftirqd_cpu_pct, r.system.net_rx_per_s,
           r.system.net_tx_per_s);
  if (r.receiver)
    o << fmt("   packets: generated %llu, sent %llu, received %llu, lost %llu%s\n",
             static_cast<unsigned long long>(r.packets_generated),
             static_cast<unsigned long long>(r.packets_sent),
             static_cast<unsigned long long>(r.packets_received),
             static_cast<unsigned long long>(r.packets_lost),
             r.packets_extra ? fmt(", %llu more than sent (error)",
                                   static_cast<unsigned long long>(r.packets_extra)).c_str()
                             : "");
  else
    o << fmt("   packets: generated %llu, sent %llu (no built-in receiver: arrivals not measured)\n",
             static_cast<unsigned long long>(r.packets_generated),
             static_cast<unsigned long long>(r.packets_sent));
  o << "   accounting: " << r.accounting.format() << "\n";
  o << "   lateness (send returned - intended departure): p50 " << time_ns(r.lateness.quantile(0.5))
    << ", p99 " << time_ns(r.lateness.quantile(0.99)) << ", max " << time_ns(r.lateness.max()) << "\n";
  if (r.transit.count())
    o << "   arrival (receive timestamp - intended):        p50 " << time_ns(r.transit.quantile(0.5))
      << ", p99 " << time_ns(r.transit.quantile(0.99)) << ", max " << time_ns(r.transit.max()) << "\n";
  o << fmt("   flows:   %u measured, rate error max %.3f%%, mean %.4f%%", r.flows_measured,
           100.0 * r.flow_rate_error_max, 100.0 * r.flow_rate_error_mean);
  if (r.gaps.count())
    o << ", arrival gap p1 " << time_ns(r.gaps.quantile(0.01)) << " p50 "
      << time_ns(r.gaps.quantile(0.5)) << " p99 " << time_ns(r.gaps.quantile(0.99)) << " (intended "
      << time_ns(r.period_ns) << ")";
  o << "\n";
  const EgressStats& e = r.pacer.egress;
  o << fmt("   egress:  %llu send calls (%.2f packets/call), %llu messages, %llu GSO messages (%llu packets), %llu refused sends (EAGAIN %llu, ENOBUFS %llu) retried, EINTR %llu and ECONNREFUSED %llu sent again\n",
           static_cast<unsigned long long>(e.send_calls),
           e.send_calls ? static_cast<double>(e.packets) / static_cast<double>(e.send_calls) : 0.0,
           static_cast<unsigned long long>(e.messages),
           static_cast<unsigned long long>(e.gso_messages), static_cast<unsigned long long>(e.gso_packets),
           static_cast<unsigned long long>(e.blocked), static_cast<unsigned long long>(e.eagain),
           static_cast<unsigned long long>(e.enobufs), static_cast<unsigned long long>(e.eintr),
           static_cast<unsigned long long>(e.econnrefused_retries));
  o << fmt("   producer: waited on a full ring %llu times, an empty pool %llu times; handed over late %llu\n",
           static_cast<unsigned long long>(r.ring_full), static_cast<unsigned long long>(r.pool_empty),
           static_cast<unsigned long long>(r.late_handover));
  if (r.timer_latency) o << "   " << format_timer_latency(*r.timer_latency);
  if (r.timer == "blast") {
    // A blast has no qdisc.
  } else if (r.queues > 1) {
    o << fmt("   queues:  %u (flows steered by the hash of their owner; every figure above is the total)\n",
             r.queues);
    o << "   queue  cpu  flows    pkts/s  wake-ups/s  pacer%  producer%  rate err max  accounting\n";
    for (const PaceQueueReport& q : r.per_queue)
      o << fmt("   %5u %4s %6u %9.0f %11.0f %6.1f%% %9.1f%% %12.3f%%  %s\n", q.queue,
               q.cpu < 0 ? "-" : std::to_string(q.cpu).c_str(), q.flows, q.pps, q.wakeups_per_s,
               q.pacer_cpu_pct, q.producer_cpu_pct, 100.0 * q.flow_rate_error_max,
               q.accounting.balanced() ? "balanced" : q.accounting.format().c_str());
    o << format_mq_qdisc(r);
  } else {
    o << tc::format_qdisc(r.fq, r.fq_stats);
  }
  return o.str();
}

namespace {

std::vector<FqConfig> queue_configs(const PaceReport& r) { return std::vector<FqConfig>(r.per_queue.size(), r.fq); }
std::vector<FqStats> queue_stats(const PaceReport& r) {
  std::vector<FqStats> v;
  for (const PaceQueueReport& q : r.per_queue) v.push_back(q.pacer.fq);
  return v;
}

nlohmann::ordered_json accounting_json(const PacketAccounting& a) {
  nlohmann::ordered_json by_errno = nlohmann::ordered_json::object();
  a.failed.for_each([&](const std::string& name, std::uint64_t n) { by_errno[name] = n; });
  return {{"produced", a.produced},
          {"sent", a.sent},
          {"dropped",
           {{"limit", a.drop_limit}, {"flow_limit", a.drop_flow_limit}, {"horizon", a.drop_horizon},
            {"total", a.dropped()}}},
          {"failed", {{"by_errno", by_errno}, {"total", a.failed.total()}}},
          {"unsent",
           {{"producer", a.unsent_producer}, {"ring", a.unsent_ring}, {"scheduler", a.unsent_scheduler},
            {"egress", a.unsent_egress}, {"total", a.unsent()}}},
          {"balanced", a.balanced()}};
}

}  // namespace

std::string format_mq_qdisc(const PaceReport& r) {
  const auto cfgs = queue_configs(r);
  const auto stats = queue_stats(r);
  return tc::format_mq_qdisc(cfgs, stats);
}

std::string format_comparison(const std::vector<PaceReport>& runs) {
  std::ostringstream o;
  o << fmt("%-22s %-9s %10s %9s %9s %9s %7s %7s %8s %9s %9s %9s %9s %6s %8s\n", "run", "timer",
           "wake-ups/s", "pkts/wake", "pkts/s", "intr/s", "pacer%", "cpu%", "ns/pkt", "+ksirq ns",
           "late p50", "late p99", "late max", "lost", "rate err");
  for (const auto& r : runs)
    o << fmt("%-22s %-9s %10.0f %9.2f %9.0f %9.0f %6.1f%% %6.1f%% %8.0f %9.0f %9s %9s %9s %6llu %7.3f%%\n",
             r.label.c_str(), r.timer.c_str(), r.wakeups_per_s, r.packets_per_wakeup, r.pps,
             r.system.interrupts_per_s, r.pacer_cpu_pct, r.cpu_pct, r.sender_ns_per_packet,
             r.sender_softirq_ns_per_packet,
             (us(r.lateness.quantile(0.5)) + "us").c_str(), (us(r.lateness.quantile(0.99)) + "us").c_str(),
             (us(r.lateness.max()) + "us").c_str(), static_cast<unsigned long long>(r.packets_lost),
             100.0 * r.flow_rate_error_max);
  return o.str();
}

std::string format_json(const PaceReport& r) {
  nlohmann::ordered_json j;
  j["label"] = r.label;
  j["timer"] = r.timer;
  j["egress"] = r.egress;
  j["path"] = r.path;
  j["flows"] = r.workload.flows;
  j["rate_pps"] = r.workload.rate_pps;
  j["packet_size"] = r.workload.payload;
  j["timer_slack_ns"] = r.fq.timer_slack_ns;
  j["seconds"] = round2(r.seconds);
  j["stopped_by_signal"] = r.stopped_by_signal;
  j["pps"] = round2(r.pps);
  j["wakeups_per_s"] = round2(r.wakeups_per_s);
  j["packets_per_wakeup"] = round2(r.packets_per_wakeup);
  j["interrupts_per_s"] = round2(r.system.interrupts_per_s);
  j["context_switches_per_s"] = round2(r.system.context_switches_per_s);
  j["system_cpu"] = {{"user_pct", round2(r.system.user_pct)},
                     {"system_pct", round2(r.system.system_pct)},
                     {"idle_pct", round2(r.system.idle_pct)}};
  j["cpu_pct"] = round2(r.cpu_pct);
  j["pacer_cpu_pct"] = round2(r.pacer_cpu_pct);
  j["producer_cpu_pct"] = round2(r.producer_cpu_pct);
  j["receiver_cpu_pct"] = round2(r.receiver_cpu_pct);
  j["process_cpu_pct"] = round2(r.process_cpu_pct);
  j["cpu_ns_per_packet"] = {{"pacer", round2(r.pacer_ns_per_packet)},
                            {"sender", round2(r.sender_ns_per_packet)},
                            {"sender_with_ksoftirqd", round2(r.sender_softirq_ns_per_packet)}};
  j["softirq"] = {{"system_softirq_pct", round2(r.system.softirq_pct)},
                  {"ksoftirqd_cpu_pct", round2(r.system.ksoftirqd_cpu_pct)},
                  {"net_rx_per_s", round2(r.system.net_rx_per_s)},
                  {"net_tx_per_s", round2(r.system.net_tx_per_s)}};
  j["packets_generated"] = r.packets_generated;
  j["packets_sent"] = r.packets_sent;
  j["receiver"] = r.receiver;
  if (r.receiver) {
    j["packets_received"] = r.packets_received;
    j["packets_lost"] = r.packets_lost;
    j["packets_extra"] = r.packets_extra;
  } else {  // not measured
    j["packets_received"] = nullptr;
    j["packets_lost"] = nullptr;
    j["packets_extra"] = nullptr;
  }
  nlohmann::ordered_json drops;
  for (PacketFate f : {PacketFate::drop_limit, PacketFate::drop_flow_limit, PacketFate::drop_horizon})
    drops[to_string(f)] = r.fates[static_cast<std::size_t>(f)];
  j["packets_dropped"] = drops;
  j["packets_failed"] = r.fates[static_cast<std::size_t>(PacketFate::failed)];
  j["packets_unsent_at_exit"] = r.unsent_at_exit;
  j["accounting"] = accounting_json(r.accounting);
  j["producer"] = {{"ring_full", r.ring_full}, {"pool_empty", r.pool_empty},
                   {"late_handover", r.late_handover}};
  j["flows_measured"] = r.flows_measured;
  j["flow_rate_error_max"] = r.flow_rate_error_max;
  j["flow_rate_error_mean"] = r.flow_rate_error_mean;
  j["lateness_ns"] = quantiles(r.lateness);
  j["transit_ns"] = quantiles(r.transit);
  j["arrival_gap_ns"] = quantiles(r.gaps);
  j["intended_gap_ns"] = r.period_ns;
  const EgressStats& e = r.pacer.egress;
  j["egress_stats"] = {{"send_calls", e.send_calls},     {"messages", e.messages},
                       {"gso_messages", e.gso_messages}, {"gso_packets", e.gso_packets},
                       {"eagain", e.eagain},             {"enobufs", e.enobufs},
                       {"retries", e.retries},           {"failed", e.failed},
                       {"blocked", e.blocked},           {"eintr", e.eintr},
                       {"econnrefused_retries", e.econnrefused_retries}};
  j["runs"] = r.pacer.counters.runs;
  j["runs_sending"] = r.pacer.runner.runs_sending;
  j["due_without_sleep"] = r.pacer.counters.due_without_sleep;
  j["quota_runs"] = r.pacer.counters.quota_runs;
  j["ring_rechecks"] = r.pacer.counters.ring_rechecks;
  j["blocked_waits"] = r.pacer.counters.blocked_waits;
  j["doorbell_wakeups"] = r.pacer.counters.doorbell_wakeups;
  j["watchdog_arms"] = r.pacer.watchdog_arms;
  if (r.timer_latency) {
    nlohmann::ordered_json t = quantiles(r.timer_latency->lateness);
    t["strategy"] = to_string(r.timer_latency->kind);
    t["slack_ns"] = r.timer_latency->slack_ns;
    t["sleep_ns"] = r.timer_latency->period_ns;
    j["timer_latency_ns"] = t;
  }
  nlohmann::ordered_json iv = nlohmann::ordered_json::array();
  for (const auto& i : r.intervals)
    iv.push_back({{"t_s", round2(i.t_s)},
                  {"interrupts_per_s", round2(i.system.interrupts_per_s)},
                  {"context_switches_per_s", round2(i.system.context_switches_per_s)},
                  {"user_pct", round2(i.system.user_pct)},
                  {"system_pct", round2(i.system.system_pct)},
                  {"idle_pct", round2(i.system.idle_pct)},
                  {"wakeups_per_s", round2(i.wakeups_per_s)},
                  {"packets_per_wakeup", round2(i.packets_per_wakeup)},
                  {"pps", round2(i.pps)},
                  {"pacer_cpu_pct", round2(i.pacer_cpu_pct)},
                  {"ring_full", i.ring_full},
                  {"pool_empty", i.pool_empty}});
  j["intervals"] = iv;
  // Per queue (one entry with one queue); the figures above are the totals.
  j["queues"] = r.queues;
  nlohmann::ordered_json pq = nlohmann::ordered_json::array();
  for (const PaceQueueReport& q : r.per_queue)
    pq.push_back({{"queue", q.queue},
                  {"cpu", q.cpu},
                  {"flows", q.flows},
                  {"pps", round2(q.pps)},
                  {"wakeups_per_s", round2(q.wakeups_per_s)},
                  {"pacer_cpu_pct", round2(q.pacer_cpu_pct)},
                  {"producer_cpu_pct", round2(q.producer_cpu_pct)},
                  {"packets_generated", q.packets_generated},
                  {"packets_sent", q.accounting.sent},
                  {"flow_rate_error_max", q.flow_rate_error_max},
                  {"accounting", accounting_json(q.accounting)},
                  {"fq", nlohmann::ordered_json::parse(tc::format_fq_stats_json(q.pacer.fq), nullptr, false)}});
  j["per_queue"] = pq;
  // The qdisc as `tc -j -s qdisc show` prints it (its text keeps tc's
  // duplicate "throttled" key, so it is spliced in rather than parsed).
  std::string out = j.dump();
  out.pop_back();
  // With several queues: the mq root and its fq children, `tc -j -s`'s array.
  if (r.queues > 1)
    out += ",\"qdisc\":" + tc::format_mq_qdisc_json(queue_configs(r), queue_stats(r)) + "}";
  else
    out += ",\"qdisc\":" + tc::format_qdisc_json(r.fq, r.fq_stats) + "}";
  return out;
}

}  // namespace ufq::rt
