// The qdisc header line around the fq options and statistics (docs/fq-rules.md#tc-output).
#include "ufq/tc/qdisc_print.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/stats_print.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

std::string hex(std::uint32_t v) {
  char buf[16];
  const int n = std::snprintf(buf, sizeof buf, "%x", v);
  return std::string(buf, static_cast<std::size_t>(n));
}

// tc's class-id notation for a parent: "maj:min", ":min", "maj:".
std::string classid(std::uint32_t id) {
  const std::uint32_t maj = id >> 16;
  const std::uint32_t min = id & 0xFFFF;
  std::string out;
  if (maj != 0) out += hex(maj);
  out += ':';
  if (min != 0 || maj == 0) out += hex(min);
  return out;
}

std::string header_text(const QdiscHeader& h) {
  std::string out = "qdisc fq " + hex(h.major) + ": ";
  if (!h.dev.empty()) out += "dev " + h.dev + " ";
  if (h.parent == kRootParent)
    out += "root ";
  else if (h.parent != 0)
    out += "parent " + classid(h.parent) + " ";
  if (h.refcnt != 1) out += "refcnt " + std::to_string(h.refcnt) + " ";
  return out;
}

std::string header_json(const QdiscHeader& h) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["kind"] = "fq";
  j["handle"] = hex(h.major) + ":";
  if (!h.dev.empty()) j["dev"] = h.dev;
  if (h.parent == kRootParent)
    j["root"] = true;
  else if (h.parent != 0)
    j["parent"] = classid(h.parent);
  if (h.refcnt != 1) j["refcnt"] = h.refcnt;
  std::string text = j.dump();
  text.pop_back();  // reopen the object for the members that follow
  return text;
}

}  // namespace

std::string format_qdisc(const FqConfig& cfg, const QdiscHeader& header) {
  return header_text(header) + format_fq_options(cfg) + "\n";
}

std::string format_qdisc(const FqConfig& cfg, const FqStats& stats, const QdiscHeader& header) {
  return format_qdisc(cfg, header) + format_fq_stats(stats);
}

std::string format_qdisc_json(const FqConfig& cfg, const QdiscHeader& header) {
  return header_json(header) + ",\"options\":" + fq_options_json(cfg) + "}";
}

std::string format_qdisc_json(const FqConfig& cfg, const FqStats& stats,
                              const QdiscHeader& header) {
  return header_json(header) + ",\"options\":" + fq_options_json(cfg) + "," +
         fq_stats_json_members(stats) + "}";
}

namespace {

// What mq reports for itself: its children's generic counters, summed.
FqStats mq_totals(std::span<const FqStats> stats) {
  FqStats t;
  for (const FqStats& s : stats) {
    t.bytes += s.bytes;
    t.packets += s.packets;
    t.drops += s.drops;
    t.overlimits += s.overlimits;
    t.requeues += s.requeues;
    t.backlog += s.backlog;
    t.qlen += s.qlen;
  }
  return t;
}

QdiscHeader child_header(std::uint16_t mq_major, std::size_t q) {
  QdiscHeader h;
  h.major = 0;  // mq's default children have no handle of their own
  h.parent = static_cast<std::uint32_t>(mq_major) << 16 | static_cast<std::uint32_t>(q + 1);
  h.refcnt = 1;
  return h;
}

}  // namespace

std::string format_mq_qdisc(std::span<const FqConfig> cfgs, std::span<const FqStats> stats,
                            std::uint16_t mq_major) {
  const FqStats t = mq_totals(stats);
  std::string out = "qdisc mq " + hex(mq_major) + ": root \n";
  out += " Sent " + std::to_string(t.bytes) + " bytes " + std::to_string(t.packets) + " pkt (dropped " +
         std::to_string(t.drops) + ", overlimits " + std::to_string(t.overlimits) + " requeues " +
         std::to_string(t.requeues) + ") \n";
  out += " backlog " + format_size(t.backlog) + " " + std::to_string(t.qlen) + "p requeues " +
         std::to_string(t.requeues) + "\n";
  for (std::size_t q = 0; q < cfgs.size() && q < stats.size(); ++q)
    out += format_qdisc(cfgs[q], stats[q], child_header(mq_major, q));
  return out;
}

std::string format_mq_qdisc_json(std::span<const FqConfig> cfgs, std::span<const FqStats> stats,
                                 std::uint16_t mq_major) {
  const FqStats t = mq_totals(stats);
  std::string out = "[{\"kind\":\"mq\",\"handle\":\"" + hex(mq_major) + ":\",\"root\":true,\"options\":{}";
  for (const auto& [key, v] : {std::pair<const char*, std::uint64_t>{"bytes", t.bytes},
                               {"packets", t.packets},
                               {"drops", t.drops},
                               {"overlimits", t.overlimits},
                               {"requeues", t.requeues},
                               {"backlog", t.backlog},
                               {"qlen", t.qlen}}) {
    out += ",\"";
    out += key;
    out += "\":" + std::to_string(v);
  }
  out += '}';
  for (std::size_t q = 0; q < cfgs.size() && q < stats.size(); ++q) {
    out += ',';
    out += format_qdisc_json(cfgs[q], stats[q], child_header(mq_major, q));
  }
  out += ']';
  return out;
}

}  // namespace ufq::tc
