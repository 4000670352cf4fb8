// The whole simulation: determinism, accounting, and the properties the
// timer-slack experiment rests on, on small workloads.
#include <gtest/gtest.h>

#include <pcap/pcap.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/report.hpp"
#include "ufq/sim/simulation.hpp"
#include "ufq/sim/simulation_reference.hpp"

namespace ufq::sim {
namespace {

SimConfig small(std::uint32_t slack_ns, const std::string& traffic = "edt") {
  SimConfig c;
  c.traffic = traffic;
  c.flows = 200;
  c.rate_pps = 200'000;
  c.duration = 500 * kNsecPerMsec;
  c.interval = 100 * kNsecPerMsec;
  c.queues = 2;
  c.cpus = 4;
  c.fq.timer_slack_ns = slack_ns;
  return c;
}

void expect_accounting(const SimResult& r) {
  EXPECT_EQ(r.packets_offered, r.packets_sent + r.packets_dropped + r.packets_queued);
  EXPECT_EQ(r.qdisc.offered, r.qdisc.dequeued + r.qdisc.drops + r.qdisc.purged + r.qdisc.qlen);
}

TEST(Simulation, SameSeedSameBytes) {
  const SimConfig c = small(10'000);
  const std::string a = to_json(simulate(c));
  const std::string b = to_json(simulate(c));
  EXPECT_EQ(a, b);
  SimConfig other = c;
  other.seed = 2;
  EXPECT_NE(a, to_json(simulate(other)));
}

// The fast scheduler decides exactly as the reference, so a whole simulation
// gives the same bytes with either.
TEST(Simulation, FastAndReferenceSchedulersGiveTheSameRun) {
  for (std::string t : {"edt", "rate", "onoff"}) {
    SimConfig c = small(10'000, t);
    c.scheduler = SchedulerKind::reference;
    const std::string ref = to_json(simulate_reference(c));
    c.scheduler = SchedulerKind::fast;
    EXPECT_EQ(ref, to_json(simulate(c))) << t;
  }
}

// The event trace writes one "wd" line per watchdog fire and changes nothing
// else (a traced fire takes its own path, Cpu::watchdog_fired_traced, to the
// same NET_TX); the fires counted are the watchdog adapter's.
TEST(Simulation, EventTraceListsEveryWatchdogFireAndChangesNothing) {
  SimConfig c = small(10'000);
  const SimResult plain = simulate(c);
  const std::string path = testing::TempDir() + "ufq_test_event_trace.txt";
  c.guest.event_trace = path;
  const SimResult traced = simulate(c);
  EXPECT_EQ(traced.packets_sent, plain.packets_sent);
  EXPECT_EQ(traced.events, plain.events);
  EXPECT_EQ(traced.total.n.qdisc_runs, plain.total.n.qdisc_runs);
  EXPECT_EQ(traced.total.n.watchdog_fires, plain.total.n.watchdog_fires);
  EXPECT_EQ(traced.lateness.quantile(0.99), plain.lateness.quantile(0.99));
  std::FILE* f = std::fopen(path.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::uint64_t wd_lines = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f))
    if (std::string(line).find(" wd ") != std::string::npos) ++wd_lines;
  std::fclose(f);
  std::filesystem::remove(path);
  EXPECT_GT(wd_lines, 1000u);
  EXPECT_EQ(wd_lines, plain.total.n.watchdog_fires);
}

TEST(Simulation, AccountsForEveryPacket) {
  for (std::string t : {"edt", "rate", "bulk", "maxrate",
                 "onoff"}) {
    SCOPED_TRACE(t);
    const SimResult r = simulate(small(10'000, t));
    EXPECT_GT(r.packets_sent, 0u);
    expect_accounting(r);
  }
}

TEST(Simulation, EdtFlowsKeepTheirRate) {
  SimConfig c = small(10'000);
  c.duration = 2 * kNsecPerSec;
  for (std::uint32_t slack : {0u, 10'000u, 100'000u}) {
    c.fq.timer_slack_ns = slack;
    const SimResult r = simulate(c);
    EXPECT_LT(r.flow_rate_error_max, 0.001) << "slack " << slack;
    EXPECT_NEAR(r.per_s(r.total.n.packets), 200'000, 2'000);
  }
}

TEST(Simulation, RateFlowsPacedByFqKeepTheirRate) {
  SimConfig c = small(10'000, "rate");
  c.duration = 2 * kNsecPerSec;
  c.inflight = 4;
  const SimResult r = simulate(c);
  // fq lets a new flow send its initial quantum (10 packets) back to back, so
  // over 2 s (2000 packets a flow) the measured rate is high by about 9/2000.
  EXPECT_LT(r.flow_rate_error_max, 0.006);
  EXPECT_GT(r.flow_rate_error_max, 0.003);
}

TEST(Simulation, LatenessStaysInsideTheSlackWindow) {
  // A packet leaves at the latest at hard expiry of a kept timer (2 x slack)
  // plus the interrupt latency.
  for (std::uint32_t slack : {0u, 10'000u, 50'000u}) {
    SimConfig c = small(slack);
    const SimResult r = simulate(c);
    EXPECT_LE(r.lateness.max(), 2 * static_cast<Time>(slack) + c.irq_latency) << "slack " << slack;
  }
}

TEST(Simulation, SlackCutsTimerInterrupts) {
  SimConfig c = small(0);
  c.rate_pps = 400'000;
  c.flows = 400;
  const SimResult none = simulate(c);
  c.fq.timer_slack_ns = 10'000;
  const SimResult ten = simulate(c);
  EXPECT_LT(ten.total.n.timer_interrupts * 2, none.total.n.timer_interrupts);
  EXPECT_GT(ten.mean_batch(), none.mean_batch());
  EXPECT_LT(ten.cpu_sys_pct(), none.cpu_sys_pct());
}

TEST(Simulation, SamplesCoverTheRun) {
  const SimResult r = simulate(small(10'000));
  ASSERT_EQ(r.samples.size(), 5u);
  EXPECT_EQ(r.samples.front().start, 0u);
  EXPECT_EQ(r.samples.back().end, 500 * kNsecPerMsec);
  std::uint64_t packets = 0;
  for (const Sample& s : r.samples) packets += s.n.packets;
  EXPECT_EQ(packets, r.packets_sent);
}

TEST(Simulation, RefusesImpossibleConfigurations) {
  SimConfig c = small(0);
  c.flows = 0;
  EXPECT_THROW(simulate(c), std::invalid_argument);
  c = small(0);
  c.cpus = 1;
  EXPECT_THROW(simulate(c), std::invalid_argument);
  c = small(0, "pcap");
  EXPECT_THROW(simulate(c), std::invalid_argument);  // no --pcap file
  c.traffic_settings["pcap"] = std::string("/nonexistent/trace.pcap");
  EXPECT_THROW(simulate(c), std::invalid_argument);
}

// Writes a capture of `flows` UDP flows, each sending every `gap_us`.
std::string write_trace(int flows, int packets_per_flow, int gap_us) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ufq_test_trace_" + std::to_string(::getpid()) + ".pcap")).string();
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  for (int k = 0; k < packets_per_flow; ++k) {
    for (int f = 0; f < flows; ++f) {
      std::array<u_char, 42> frame{};
      frame[12] = 0x08;  // IPv4
      u_char* ip = frame.data() + 14;
      ip[0] = 0x45;
      ip[9] = 17;  // UDP
      ip[12] = 10;
      ip[15] = static_cast<u_char>(f + 1);
      ip[16] = 10;
      ip[19] = 99;
      ip[20] = static_cast<u_char>(f);  // source port high byte
      pcap_pkthdr h{};
      const long us = static_cast<long>(k) * gap_us + f;
      h.ts.tv_sec = us / 1'000'000;
      h.ts.tv_usec = us % 1'000'000;
      h.caplen = static_cast<bpf_u_int32>(frame.size());
      h.len = 1000;
      pcap_dump(reinterpret_cast<u_char*>(d), &h, frame.data());
    }
  }
  pcap_dump_close(d);
  pcap_close(dead);
  return path;
}

TEST(Simulation, ReplaysACapture) {
  const std::string path = write_trace(5, 100, 1000);
  SimConfig c = small(10'000, "pcap");
  c.traffic_settings["pcap"] = path;
  c.duration = 200 * kNsecPerMsec;
  const SimResult r = simulate(c);
  std::filesystem::remove(path);
  EXPECT_EQ(r.config.flows, 5u);
  EXPECT_EQ(r.packets_sent, 500u);
  EXPECT_EQ(r.qdisc.bytes, 500u * 1000u);
  expect_accounting(r);
  EXPECT_LE(r.lateness.max(), 2 * 10'000u + c.irq_latency);
}

}  // namespace
}  // namespace ufq::sim

namespace ufq::sim {
namespace {

// The library refuses in its own words: the setting's name, never a command
// line's option (ufq sim maps them, tests/cli/test_bad_input.cpp).
TEST(Simulation, RefusalsNameTheSettingInTheLibrarysWords) {
  struct Case {
    SimConfig c;
    std::string setting, what;
  };
  std::vector<Case> cases;
  auto add = [&](auto change, const std::string& setting, const std::string& what) {
    SimConfig c;
    change(c);
    cases.push_back({c, setting, what});
  };
  add([](SimConfig& c) { c.flows = 0; }, "flows", "flows 0: expected 1..10000000");
  add([](SimConfig& c) { c.packet_size = 10; }, "packet-size", "packet-size 10: expected 64..65535");
  add([](SimConfig& c) { c.cpus = 4; }, "cpus", "cpus 4: expected at least queues (8)");
  add([](SimConfig& c) { c.duration = 0; }, "duration", "duration 0ns: expected a time from 1ns to 3600s");
  add([](SimConfig& c) { c.traffic = "nope"; }, "traffic",
      "traffic nope: expected bulk, churn, csv, edt, maxrate, mixed, onoff, pcap or rate");
  add([](SimConfig& c) {
        c.traffic = "onoff";
        c.traffic_settings["on"] = Time{10};
      },
      "on", "on 10ns: expected a time from 1us to 86400s");
  add([](SimConfig& c) { c.traffic_settings["csv"] = std::string("x.csv"); }, "csv",
      "csv \"\": expected not a setting of traffic edt");
  add([](SimConfig& c) { c.traffic = "csv"; }, "csv", "csv \"\": expected a file to read (traffic csv needs one)");
  for (const Case& k : cases) {
    try {
      validate(k.c);
      ADD_FAILURE() << k.what << ": accepted";
    } catch (const SimConfigError& e) {
      EXPECT_EQ(e.setting(), k.setting);
      EXPECT_EQ(std::string(e.what()), k.what);
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    }
    EXPECT_THROW(simulate(k.c), SimConfigError) << k.what;
  }
}

}  // namespace
}  // namespace ufq::sim
