// `ufq gaps`: capture one UDP stream's datagrams and report their arrival
// gaps (quantiles, burst fraction) and rate: how evenly a program's traffic
// leaves, with or without `ufq run` (docs/run.md, "Measured").
//
//   ufq gaps [-i IFACE | -r FILE.pcap] [--port N | --filter EXPR] [--duration T]
//            [--idle T] [--count N] [--burst-gap T] [--segment BYTES] [--json]
//
// Live capture needs root or CAP_NET_RAW. Once listening it says so on stderr
// ("ufq: note: capturing on lo ..."), so a script can start the traffic then.
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "command.hpp"
#include "gaps/capture.hpp"
#include "gaps/gap_stats.hpp"
#include "gaps/report.hpp"

namespace ufq::cli {
namespace {

struct GapsArgs {
  std::string interface = "lo";
  std::string file;
  std::uint32_t port = 0;
  std::string filter;
  std::string duration = "30s";
  std::string idle = "0";
  std::uint64_t count = 0;
  std::string burst_gap = "20us";
  std::uint32_t segment = 0;
  bool json = false;
};

int gaps(const GapsArgs& a, CLI::App& sub) {
  gaps::CaptureOptions o;
  o.interface = a.interface;
  o.file = a.file;
  if (sub.count("--port") && sub.count("--filter"))
    return fail("give either --port or --filter, not both");
  if (sub.count("--port"))
    o.filter = "udp dst port " + std::to_string(a.port);
  else if (!a.filter.empty())
    o.filter = a.filter;
  constexpr Time kDay = 86400LL * 1'000'000'000LL;
  const auto duration = parse_time_arg(a.duration, 1e9);
  if (!duration || *duration == 0 || *duration > kDay)
    return fail("--duration: \"" + a.duration + "\" is not a time from 1ns to a day (e.g. 10s, 500ms; bare: seconds)");
  const auto idle = parse_time_arg(a.idle, 1e9);
  if (!idle || *idle > kDay)
    return fail("--idle: \"" + a.idle + "\" is not a time from 0 (off) to a day (e.g. 1s, 200ms; bare: seconds)");
  const auto burst = parse_time_arg(a.burst_gap, 1e3);
  if (!burst || *burst == 0 || *burst > 1'000'000'000)
    return fail("--burst-gap: \"" + a.burst_gap + "\" is not a time from 1ns to 1s (e.g. 20us; bare: microseconds)");
  o.max_ns = static_cast<std::uint64_t>(*duration);
  o.idle_ns = static_cast<std::uint64_t>(*idle);
  o.max_datagrams = a.count;
  o.segment = a.segment;

  gaps::GapStats stats(static_cast<std::uint64_t>(*burst));
  gaps::CaptureCounts counts;
  try {
    counts = gaps::capture(o, stats, [&] { note("capturing on " + o.interface + " (" + o.filter + ")"); });
  } catch (const std::runtime_error& e) {
    return fail(e.what());
  }
  if (a.json)
    std::cout << gaps::to_json(stats, counts, o).dump(2) << "\n";
  else
    std::cout << gaps::to_text(stats, counts, o);
  if (counts.kernel_dropped || counts.interface_dropped)
    note("the capture dropped packets: the gaps around them are too long");
  return kExitOk;
}

}  // namespace

void add_gaps_command(Commands& commands) {
  auto a = std::make_shared<GapsArgs>();
  CLI::App* sub = commands.add("gaps", "Capture a UDP stream and report its arrival gaps and rate",
                               [a](CLI::App& s) { return gaps(*a, s); });
  auto* iface = sub->add_option("-i,--interface", a->interface, "Interface to capture on (live; root or CAP_NET_RAW)")
                    ->capture_default_str();
  sub->add_option("-r,--read", a->file, "Read a pcap file instead (e.g. tcpdump --time-stamp-precision=nano -w)")
      ->excludes(iface);
  sub->add_option("--port", a->port, "Only UDP datagrams to this port (filter \"udp dst port N\")")
      ->check(integer_in(0, 65535));
  sub->add_option("--filter", a->filter, "BPF filter (pcap-filter(7)); default \"udp\"");
  sub->add_option("--duration", a->duration, "Stop a live capture after this long")->capture_default_str();
  sub->add_option("--idle", a->idle, "Stop once this long passes without a datagram after the first (0: off)")
      ->capture_default_str();
  sub->add_option("--count", a->count, "Stop after this many datagrams (0: no limit)")
      ->check(integer_in(0, 1ULL << 62));
  sub->add_option("--burst-gap", a->burst_gap, "Gaps below this count as bursts")->capture_default_str();
  sub->add_option("--segment", a->segment,
                  "Count a UDP payload above BYTES as back-to-back BYTES-sized datagrams (a GSO train; 0: off)")
      ->check(integer_in(0, 65535));
  sub->add_flag("-j,--json", a->json, "Print JSON");
}

}  // namespace ufq::cli
