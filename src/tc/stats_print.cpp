// `tc -s qdisc show` statistics for fq (docs/fq-rules.md#tc-output).
#include "ufq/tc/stats_print.hpp"

#include <string_view>

#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

// Appends `"key":value` pairs, comma separated. Keys are fixed identifiers,
// so no escaping is needed; tc's own JSON repeats "throttled", which a JSON
// library object could not hold.
class Members {
 public:
  void add(std::string_view key, std::uint64_t value) {
    if (!text_.empty()) text_ += ',';
    text_ += '"';
    text_ += key;
    text_ += "\":";
    text_ += num(value);
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace

std::string format_fq_stats(const FqStats& st) {
  std::string out;
  out += " Sent " + num(st.bytes) + " bytes " + num(st.packets) + " pkt (dropped " + num(st.drops) +
         ", overlimits " + num(st.overlimits) + " requeues " + num(st.requeues) + ") \n";
  out += " backlog " + format_size(st.backlog) + " " + num(st.qlen) + "p requeues " +
         num(st.requeues) + "\n";

  out += "  flows " + num(st.flows) + " (inactive " + num(st.inactive_flows) + " throttled " +
         num(st.throttled_flows) + ")";
  for (std::size_t b = 0; b < kBands; ++b)
    out += " band" + num(b) + "_pkts " + num(st.band_pkt_count[b]);
  if (st.time_next_delayed_flow > 0)
    out += " next_packet_delay " + format_time64_ns(st.time_next_delayed_flow);
  out += "\n";

  out += "  gc " + num(st.gc_flows) + " highprio " + num(st.highprio_packets);
  if (st.fastpath_packets != 0) out += " fastpath " + num(st.fastpath_packets);
  if (st.tcp_retrans != 0) out += " retrans " + num(st.tcp_retrans);
  out += " throttled " + num(st.throttled);
  if (st.unthrottle_latency_ns != 0)
    out += " latency " + format_time64_ns(st.unthrottle_latency_ns);
  if (st.ce_mark != 0) out += " ce_mark " + num(st.ce_mark);
  if (st.flows_plimit != 0) out += " flows_plimit " + num(st.flows_plimit);
  out += "\n";

  std::string last;
  if (st.pkts_too_long != 0) last += " pkts_too_long " + num(st.pkts_too_long);
  if (st.allocation_errors != 0) last += " alloc_errors " + num(st.allocation_errors);
  if (st.horizon_drops != 0) last += " horizon_drops " + num(st.horizon_drops);
  if (st.horizon_caps != 0) last += "  horizon_caps " + num(st.horizon_caps);  // two spaces, as tc
  for (std::size_t b = 0; b < kBands; ++b)
    if (st.band_drops[b] != 0) last += " band" + num(b) + "_drops " + num(st.band_drops[b]);
  if (!last.empty()) out += last + "\n";
  return out;
}

std::string fq_stats_json_members(const FqStats& st) {
  Members m;
  m.add("bytes", st.bytes);
  m.add("packets", st.packets);
  m.add("drops", st.drops);
  m.add("overlimits", st.overlimits);
  m.add("requeues", st.requeues);
  m.add("backlog", st.backlog);
  m.add("qlen", st.qlen);
  m.add("flows", st.flows);
  m.add("inactive", st.inactive_flows);
  m.add("throttled", st.throttled_flows);
  m.add("band0_pkts", st.band_pkt_count[0]);
  m.add("band1_pkts", st.band_pkt_count[1]);
  m.add("band2_pkts", st.band_pkt_count[2]);
  if (st.time_next_delayed_flow > 0)
    m.add("next_packet_delay", static_cast<std::uint64_t>(st.time_next_delayed_flow));
  m.add("gc", st.gc_flows);
  m.add("highprio", st.highprio_packets);
  if (st.fastpath_packets != 0) m.add("fastpath", st.fastpath_packets);
  if (st.tcp_retrans != 0) m.add("retrans", st.tcp_retrans);
  m.add("throttled", st.throttled);
  if (st.unthrottle_latency_ns != 0) m.add("latency", st.unthrottle_latency_ns);
  if (st.ce_mark != 0) m.add("ce_mark", st.ce_mark);
  if (st.flows_plimit != 0) m.add("flows_plimit", st.flows_plimit);
  if (st.pkts_too_long != 0) m.add("pkts_too_long", st.pkts_too_long);
  if (st.allocation_errors != 0) m.add("alloc_errors", st.allocation_errors);
  if (st.horizon_drops != 0) m.add("horizon_drops", st.horizon_drops);
  if (st.horizon_caps != 0) m.add("horizon_caps", st.horizon_caps);
  if (st.band_drops[0] != 0) m.add("band0_drops", st.band_drops[0]);
  if (st.band_drops[1] != 0) m.add("band1_drops", st.band_drops[1]);
  if (st.band_drops[2] != 0) m.add("band2_drops", st.band_drops[2]);
  return m.take();
}

std::string format_fq_stats_json(const FqStats& stats) {
  // Appended piecewise: `"{" + s + "}"` trips GCC 12's -Wrestrict false positive at -O3.
  std::string out = "{";
  out += fq_stats_json_members(stats);
  out += '}';
  return out;
}

}  // namespace ufq::tc
