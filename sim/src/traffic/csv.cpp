// csv: departure times from a CSV file, one packet a line:
//
//   time_ns,flow[,bytes]
//
// `time_ns` is the packet's departure time in simulated ns (a non-negative
// integer; lines in non-decreasing time order), `flow` any non-negative
// integer naming its flow (flows are numbered in order of first appearance),
// `bytes` its length (64..65535; default --packet-size). Blank lines, lines
// starting with '#' and a first other line that starts with a letter (a
// header) are skipped. Each flow is started 1 ms ahead of its first departure and
// sends its packets in file order, as pcap does (docs/simulator.md).
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "trace_replay.hpp"

namespace ufq::sim {
namespace {

constexpr std::size_t kMaxLine = 4096;

// A non-negative decimal integer, the whole field; false otherwise.
bool parse_count(const std::string& field, std::uint64_t& out) {
  if (field.empty() || field.size() > 19) return false;
  std::uint64_t v = 0;
  for (char ch : field) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  out = v;
  return true;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

Trace read_csv(const std::string& path, std::uint32_t default_len) {
  const auto refuse = [&](const std::string& where, const std::string& expected) {
    throw SimConfigError("csv", path + where, expected);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) refuse("", std::string("a readable file (") + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) refuse("", "a regular file");
  std::ifstream in(path);
  if (!in) refuse("", std::string("a readable file (") + std::strerror(errno) + ")");
  Trace t;
  std::map<std::uint64_t, std::uint32_t> flow_index;
  Time previous = 0;
  std::size_t lineno = 0;
  bool seen_line = false;  // a line other than blank or comment
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    const std::string at = " line " + std::to_string(lineno);
    if (line.size() > kMaxLine) refuse(at, "lines of at most " + std::to_string(kMaxLine) + " characters");
    const std::string l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    const bool first = !seen_line;
    seen_line = true;
    if (first && std::isalpha(static_cast<unsigned char>(l[0]))) continue;  // a header
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (;;) {
      const auto comma = l.find(',', from);
      fields.push_back(trim(l.substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (fields.size() < 2 || fields.size() > 3)
      refuse(at, "time_ns,flow[,bytes] (got " + std::to_string(fields.size()) + " fields)");
    static const char* const kNames[] = {"time_ns", "flow", "bytes"};
    std::uint64_t v[3] = {0, 0, default_len};
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (!parse_count(fields[i], v[i]))
        refuse(at, std::string(kNames[i]) + " a non-negative integer (got \"" + fields[i] + "\")");
    if (v[0] >= kNever / 2) refuse(at, "time_ns below " + std::to_string(kNever / 2));
    if (v[0] < previous)
      refuse(at, "times in non-decreasing order (time_ns " + std::to_string(v[0]) + " after " +
                     std::to_string(previous) + ")");
    if (v[2] < 64 || v[2] > 65535) refuse(at, "bytes 64..65535 (got " + std::to_string(v[2]) + ")");
    previous = v[0];
    const auto [it, added] = flow_index.try_emplace(v[1], static_cast<std::uint32_t>(flow_index.size()));
    (void)added;
    t.packets.push_back({v[0], static_cast<std::uint32_t>(v[2]), it->second});
  }
  if (in.bad()) refuse("", "a readable file (read error)");
  if (t.packets.empty()) refuse("", "at least one packet line (time_ns,flow[,bytes])");
  t.flows = flow_index.size();
  return t;
}

}  // namespace

const TrafficModelInfo& traffic_model_csv() {
  static const TrafficModelInfo info{
      .name = "csv",
      .help = "departure times from a CSV file (--csv): time_ns,flow[,bytes] a line",
      .params = {{.name = "csv", .type = TrafficParam::Type::file,
                  .help = "departure times to replay, time_ns,flow[,bytes] a line"}},
      .ignores = {{"flows", "the file's flow column makes the flows"}, {"rate", "the file's times set the pace"}},
      .flows_apart = true,
      .packets = [](const SimConfig&) { return TrafficWork{0, "packets", {}}; },  // as many as the file holds
      .make = [](const SimConfig& c, const TrafficSettings& s) -> std::unique_ptr<TrafficSource> {
        const auto path = std::get<std::string>(traffic_setting(traffic_model_csv(), s, "csv"));
        return std::make_unique<traffic::TraceReplay>(read_csv(path, c.packet_size));
      },
  };
  return info;
}

}  // namespace ufq::sim
