#include "stats_report.hpp"

#include <string>

#include "ufq/tc/qdisc_print.hpp"

namespace ufq::run {
namespace {

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string passed_text(const Report& r) {
  std::string s;
  std::uint64_t total = 0;
  for (std::size_t i = 1; i < r.passed.size(); ++i) {
    total += r.passed[i];
    if (r.passed[i])
      s += std::string(s.empty() ? "" : ", ") + to_string(static_cast<PassReason>(i)) + " " +
           std::to_string(r.passed[i]);
  }
  return std::to_string(total) + (s.empty() ? "" : " (" + s + ")");
}

}  // namespace

std::string report_text(const Report& r) {
  tc::QdiscHeader h;
  h.dev = "ufq-run";
  std::string s = "ufq run: pid " + std::to_string(r.pid) + " (" + r.program + ") " +
                  (r.final ? "at " + r.why : "while running") + ":\n";
  s += tc::format_qdisc(r.cfg, r.fq, h);
  const rt::PacketAccounting& a = r.account;
  if (r.final) {
    s += "ufq run: datagrams " + a.format() + "\n";
  } else {
    s += "ufq run: datagrams handed over " + std::to_string(a.produced) + " = sent " + std::to_string(a.sent) +
         " + dropped " + std::to_string(a.dropped()) + " + failed " + std::to_string(a.failed.total()) +
         " + in flight " + std::to_string(r.in_flight) + "\n";
  }
  s += "ufq run: calls refused: EAGAIN " + std::to_string(r.eagain) + " (SO_SNDTIMEO " +
       std::to_string(r.timed_out) + "), EINTR " + std::to_string(r.interrupted) + "; waited for room " +
       std::to_string(r.waits) + "; held at the stop " + std::to_string(r.held_at_stop) +
       "; passed to the kernel unpaced " + passed_text(r) + "\n";
  return s;
}

std::string report_json(const Report& r) {
  const rt::PacketAccounting& a = r.account;
  std::string failed = "{";
  bool first = true;
  a.failed.for_each([&](const std::string& name, std::uint64_t n) {
    failed += std::string(first ? "" : ",") + quoted(name) + ":" + std::to_string(n);
    first = false;
  });
  failed += "}";
  std::string passed = "{";
  for (std::size_t i = 1; i < r.passed.size(); ++i)
    passed += std::string(i > 1 ? "," : "") + quoted(to_string(static_cast<PassReason>(i))) + ":" +
              std::to_string(r.passed[i]);
  passed += "}";
  tc::QdiscHeader h;
  h.dev = "ufq-run";
  std::string s = "{\"pid\":" + std::to_string(r.pid) + ",\"ppid\":" + std::to_string(r.ppid) +
                  ",\"program\":" + quoted(r.program) + ",\"final\":" + (r.final ? "true" : "false") +
                  ",\"why\":" + quoted(r.why) + ",\"qdisc\":" + tc::format_qdisc_json(r.cfg, r.fq, h);
  s += ",\"account\":{\"handed_over\":" + std::to_string(a.produced) + ",\"sent\":" + std::to_string(a.sent) +
       ",\"dropped\":{\"limit\":" + std::to_string(a.drop_limit) + ",\"flow_limit\":" +
       std::to_string(a.drop_flow_limit) + ",\"horizon\":" + std::to_string(a.drop_horizon) +
       "},\"failed\":" + failed + ",\"failed_total\":" + std::to_string(a.failed.total());
  if (r.final)
    s += ",\"unsent\":{\"ring\":" + std::to_string(a.unsent_ring) + ",\"fq\":" +
         std::to_string(a.unsent_scheduler) + ",\"egress\":" + std::to_string(a.unsent_egress) +
         "},\"unsent_total\":" + std::to_string(a.unsent()) + ",\"balanced\":" + (a.balanced() ? "true" : "false");
  else
    s += ",\"in_flight\":" + std::to_string(r.in_flight);
  s += "},\"refused\":{\"EAGAIN\":" + std::to_string(r.eagain) + ",\"sndtimeo\":" + std::to_string(r.timed_out) +
       ",\"EINTR\":" + std::to_string(r.interrupted) + "},\"waited\":" + std::to_string(r.waits) +
       ",\"passed_through\":" + passed + ",\"large_payloads\":" + std::to_string(r.large_payloads) +
       ",\"held_at_stop\":" + std::to_string(r.held_at_stop);
  s += ",\"pacer\":{\"wakeups\":" + std::to_string(r.pacer.wakeups) + ",\"timer_wakeups\":" +
       std::to_string(r.pacer.timer_wakeups) + ",\"doorbell_wakeups\":" + std::to_string(r.pacer.doorbell_wakeups) +
       ",\"runs\":" + std::to_string(r.pacer.runs) + ",\"doorbells\":" + std::to_string(r.pacer.rings) + ",\"cpu_ns\":" + std::to_string(r.pacer.thread_cpu_ns) + "}";
  s += ",\"egress\":{\"send_calls\":" + std::to_string(r.egress.send_calls) + ",\"messages\":" +
       std::to_string(r.egress.messages) + ",\"gso_messages\":" + std::to_string(r.egress.gso_messages) +
       ",\"eagain\":" + std::to_string(r.egress.eagain) + ",\"enobufs\":" + std::to_string(r.egress.enobufs) +
       ",\"ce_marked\":" + std::to_string(r.egress.ce_marked) + "}}";
  return s;
}

}  // namespace ufq::run
