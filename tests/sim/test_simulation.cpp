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

// Every sample's numbers, as text (EXPECT_EQ shows where two runs differ).
std::string samples_text(const std::vector<Sample>& samples) {
  std::string out;
  for (const Sample& s : samples) {
    const EventCounts& n = s.n;
    const FlowCensus& k = s.census;
    for (std::uint64_t v : {s.start, s.end, s.busy, n.packets, n.timer_interrupts, n.timers_run, n.device_writes,
                            n.nic_interrupts, n.completions, n.other_interrupts, n.watchdog_fires, n.qdisc_runs,
                            n.doorbells, k.flows, k.inactive, k.throttled, k.gc_flows, k.created, k.offered,
                            k.dequeued, k.drops, k.purged, k.qlen})
      out += std::to_string(v) + ' ';
    out += '\n';
  }
  return out;
}

// The queues apart (SimConfig::queues_apart: each CPU's events in a queue of
// their own, run up to the simulation's own events) give the run that one
// queue for all CPUs gives, byte for byte, for every model whose flows keep
// to their own: with samples and progress reports at many instants (each CPU
// stops at each), slack 0 and 10us, several queue counts.
TEST(Simulation, QueuesApartGiveTheSameRunAsOneQueue) {
  const std::string csv = testing::TempDir() + "ufq_test_queues_apart.csv";
  {
    std::FILE* f = std::fopen(csv.c_str(), "w");
    ASSERT_NE(f, nullptr);
    for (unsigned long long i = 0; i < 20000; ++i) std::fprintf(f, "%llu,%llu\n", 1000000 + i * 9973, i % 37);
    std::fclose(f);
  }
  for (std::string t : {"edt", "rate", "maxrate", "bulk", "mixed", "csv"})
    for (std::uint32_t queues : {2u, 3u, 8u})
      for (std::uint32_t slack : {0u, 10'000u}) {
        SCOPED_TRACE(t + " queues " + std::to_string(queues) + " slack " + std::to_string(slack));
        SimConfig c = small(slack, t);
        c.queues = queues;
        c.cpus = 2 * queues;
        c.interval = 7 * kNsecPerMsec;  // samples at 7 ms steps, progress at 10 ms ones: some coincide
        if (t == "csv") c.traffic_settings["csv"] = csv;
        std::vector<double> progress_one, progress_apart;
        std::vector<std::string> seen_one, seen_apart;  // on_sample, as it is called
        c.queues_apart = false;
        const SimResult one = simulate(
            c, [&](double x) { progress_one.push_back(x); },
            [&](Sample& s) { seen_one.push_back(samples_text({s})); });
        c.queues_apart = true;
        const SimResult apart = simulate(
            c, [&](double x) { progress_apart.push_back(x); },
            [&](Sample& s) { seen_apart.push_back(samples_text({s})); });
        EXPECT_FALSE(one.queues_apart);
        EXPECT_TRUE(apart.queues_apart);
        EXPECT_GT(apart.packets_sent, 1000u);
        EXPECT_EQ(to_json(one), to_json(apart));
        EXPECT_EQ(samples_text(one.samples), samples_text(apart.samples));
        EXPECT_EQ(seen_one, seen_apart);
        EXPECT_EQ(progress_one, progress_apart);
        EXPECT_EQ(one.packets_queued, apart.packets_queued);
        EXPECT_EQ(one.qdisc.throttled, apart.qdisc.throttled);
        EXPECT_EQ(one.lateness.max(), apart.lateness.max());
      }
  std::filesystem::remove(csv);
}

// A watchdog fire at the very instant of a sample: its interrupt's handler
// was armed after the sampler (a microsecond before, by the device's event),
// so with one queue it runs after the sample, and apart it must too: each CPU
// runs up to the sample's key, not to its time (EventQueue::run_before; the
// stretch's maybe_due_now() is tested in test_event_queue.cpp). The instants
// are fires from a traced run, made the sample interval.
TEST(Simulation, QueuesApartRunAWatchdogFireAtASampleAfterIt) {
  const std::string trace = testing::TempDir() + "ufq_test_apart_fires.txt";
  SimConfig c = small(10'000);
  c.duration = 60 * kNsecPerMsec;
  c.guest.event_trace = trace;
  simulate(c);
  c.guest.event_trace.clear();
  std::vector<Time> fires;
  {
    std::FILE* f = std::fopen(trace.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char line[256];
    unsigned long long t = 0, soft = 0, hard = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "%llu wd %llu %llu", &t, &soft, &hard) == 3 && t > 10 * kNsecPerMsec) fires.push_back(t);
    std::fclose(f);
  }
  std::filesystem::remove(trace);
  ASSERT_GE(fires.size(), 8u);
  std::size_t differ = 0;  // runs whose samples differ
  for (std::size_t k = 0; k < 8; ++k) {
    c.interval = fires[k * fires.size() / 8];
    c.duration = 3 * c.interval;
    c.queues_apart = false;
    const SimResult one = simulate(c);
    c.queues_apart = true;
    const SimResult apart = simulate(c);
    ASSERT_TRUE(apart.queues_apart);
    EXPECT_EQ(samples_text(one.samples), samples_text(apart.samples)) << "interval " << c.interval;
    EXPECT_EQ(to_json(one), to_json(apart));
    differ += samples_text(one.samples) != samples_text(apart.samples);
  }
  EXPECT_EQ(differ, 0u);
}

// The queues run apart only when they share nothing: not with one queue, a
// model whose flows draw from the run's generator (onoff, churn), the guest's
// sender, its NOHZ tick or the event trace, nor when the setting is off.
TEST(Simulation, QueuesApartOnlyWhenTheyShareNothing) {
  const std::string trace = testing::TempDir() + "ufq_test_apart_trace.txt";
  const auto apart = [](SimConfig c) { return simulate(c).queues_apart; };
  EXPECT_TRUE(apart(small(10'000)));
  SimConfig c = small(10'000);
  c.queues = 1;
  EXPECT_FALSE(apart(c));
  EXPECT_FALSE(apart(small(10'000, "onoff")));
  EXPECT_FALSE(apart(small(10'000, "churn")));
  c = small(10'000);
  c.queues_apart = false;
  EXPECT_FALSE(apart(c));
  c = small(10'000);
  c.guest.nohz_idle = true;
  EXPECT_FALSE(apart(c));
  c = small(10'000, "rate");
  c.guest.sender = true;
  EXPECT_FALSE(apart(c));
  c = small(10'000);
  c.guest.event_trace = trace;
  EXPECT_FALSE(apart(c));
  std::filesystem::remove(trace);
}

// The event trace writes one "wd" line per watchdog fire and changes nothing
// else (a traced fire takes its own path, Cpu::watchdog_fired_traced, to the
// same NET_TX); the fires counted are the watchdog adapter's.
TEST(Simulation, EventTraceListsEveryWatchdogFireAndChangesNothing) {
  SimConfig c = small(10'000);
  c.queues_apart = false;  // as the traced run's (the event count may differ apart)
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
