// Bad input everywhere: every `ufq` subcommand and option, and the fq option
// words, given garbage, negative, zero-where-invalid, extreme and oversized
// values. Each case must end with exit status 2, nothing on stdout and a
// message on stderr that names the option, value or keyword (and, where the
// option states one, its range), within 20 s, without a signal, and without
// creating a socket, a namespace, a thread or a child process (the sandbox's
// seccomp filter kills it with SIGSYS otherwise): a refusal comes before any
// work. The options are read from `ufq <sub> --help` and the fq keywords from
// the usage line: one the table does not cover fails TableCoversEvery*.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sandboxed_run.hpp"

namespace {

using ufq::testing::kAddressSpaceLimited;
using ufq::testing::run_sandboxed;
using ufq::testing::SandboxResult;

struct Case {
  std::string covers;             // the option or keyword this case is about
  std::vector<std::string> args;  // after the binary
  std::vector<std::string> says;  // every one must appear in stderr
  // Refused only because the run would not fit the memory the sandbox's
  // address-space limit leaves (on a big machine it may legitimately run).
  bool needs_memory_cap = false;
};

// A refusal uses next to no memory (an ASan build's runtime included).
constexpr long kRefusalPeakRssKb = 512 * 1024;

std::string show(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args)
    s += (s.empty() ? "" : " ") + (a.empty() || a.find(' ') != std::string::npos ? "'" + a + "'" : a);
  return s;
}

// What is wrong with one run, or "" when the refusal is as it should be.
std::string judge(const Case& c, const SandboxResult& r) {
  std::string why;
  if (!r.ran) return "could not run the binary";
  if (r.timed_out) why += "hang (killed after the time limit); ";
  if (r.signal == SIGSYS)
    why += "started working (socket, namespace, thread or fork) instead of refusing; ";
  else if (r.signal != 0)
    why += std::string("crashed with signal ") + strsignal(r.signal) + "; ";
  if (!r.timed_out && r.signal == 0 && r.exit_status != 2)
    why += "exit status " + std::to_string(r.exit_status) + ", expected 2; ";
  if (!r.out.empty()) why += "wrote to stdout; ";
  if (r.err.rfind("ufq: ", 0) != 0) why += "stderr does not start with \"ufq: \"; ";
  if (r.err.find("bad_alloc") != std::string::npos) why += "ran out of memory (bad_alloc) instead of refusing; ";
  for (const auto& s : c.says)
    if (r.err.find(s) == std::string::npos) why += "stderr does not name \"" + s + "\"; ";
  if (r.peak_rss_kb > kRefusalPeakRssKb) why += "peak RSS " + std::to_string(r.peak_rss_kb) + " KiB; ";
  if (why.empty()) return why;
  return "ufq " + show(c.args) + ": " + why + "\n  stderr: " + r.err.substr(0, 400) +
         (r.out.empty() ? "" : "\n  stdout: " + r.out.substr(0, 200));
}

// Runs the cases two at a time (the machine is small) and reports every bad one.
void expect_refused(const std::vector<Case>& cases) {
  std::vector<std::string> failures;
  std::mutex m;
  std::size_t next = 0;
  auto worker = [&] {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard<std::mutex> lock(m);
        if (next == cases.size()) return;
        i = next++;
      }
      const Case& c = cases[i];
      if (c.needs_memory_cap && !kAddressSpaceLimited) continue;  // ASan: no address-space limit to hit
      const std::string why = judge(c, run_sandboxed(UFQ_BINARY, c.args));
      if (!why.empty()) {
        std::lock_guard<std::mutex> lock(m);
        failures.push_back(why);
      }
    }
  };
  ufq::testing::seccomp_available();  // probe once, before the threads fork
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << cases.size() << " cases not refused properly:\n"
                                << [&] {
                                     std::string all;
                                     for (const auto& f : failures) all += f + "\n";
                                     return all;
                                   }();
  ::testing::Test::RecordProperty("cases", static_cast<int>(cases.size()));
}

// ---------------------------------------------------------------- the table

const std::vector<std::string> kGarbage = {"abc", "", "1x", "nan", "inf", "--"};
const std::vector<std::string> kHuge = {"-1", "9223372036854775808", "1e300", "99999999999999999999",
                                        "-99999999999999999999"};

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class Table {
 public:
  // `ufq <before...> <option> <value> <after...>` for every value; stderr
  // names the option, and `range` too for values other than "" and "--".
  void values(const std::string& option, const std::vector<std::string>& vals, const std::string& range = "",
              const std::vector<std::string>& before = {}, const std::vector<std::string>& after = {}) {
    for (const auto& v : vals) {
      Case c{option, before + std::vector<std::string>{option, v} + after, {option}};
      if (!range.empty() && !v.empty() && v != "--") c.says.push_back(range);
      cases_.push_back(std::move(c));
    }
  }
  // A file name: stderr names the option or the file.
  void files(const std::string& option, const std::vector<std::string>& names, const std::vector<std::string>& before) {
    for (const auto& n : names)
      cases_.push_back({option, before + std::vector<std::string>{option, n}, {n.empty() ? option : n}});
  }
  // A flag given a value it cannot take.
  void flag(const std::string& option, const std::vector<std::string>& before,
            const std::vector<std::string>& after = {}) {
    cases_.push_back({option, before + std::vector<std::string>{option + "=abc"} + after, {option}});
  }
  void add(Case c) { cases_.push_back(std::move(c)); }
  const std::vector<Case>& cases() const { return cases_; }

 private:
  std::vector<Case> cases_;
};

const std::vector<std::string> kTimeGarbage =
    kGarbage + std::vector<std::string>{"-1", "-1s", "1e300", "1e300s", "99999999999999999999", "8640000s"};

Table top_level_table() {
  Table t;
  t.add({"", {}, {"subcommand"}});
  t.add({"", {"bogus"}, {"bogus", "show"}});
  t.add({"", {""}, {"unknown subcommand"}});
  t.add({"", {"--bogus"}, {"--bogus"}});
  t.add({"", {"-x"}, {"-x"}});
  t.add({"", {"--bogus", "show", "fq"}, {"--bogus"}});
  return t;
}

Table show_table() {
  Table t;
  const std::vector<std::string> s = {"show"}, fq = {"fq"};
  for (const char* f : {"--json", "--stats", "--qdisc", "--args"}) t.flag(f, s, fq);
  t.values("--compat", kGarbage + std::vector<std::string>{"5.8", "LATEST"}, "", s, fq);
  t.values("--hz", kGarbage + kHuge + std::vector<std::string>{"0", "100001", "4294967296"}, "1..100000", s, fq);
  t.values("--mtu", kGarbage + kHuge + std::vector<std::string>{"0", "67", "65537"}, "68 to 65536", s, fq);
  t.values("--link-speed", kGarbage + kHuge + std::vector<std::string>{"1e300tbit", "4294967296mbit"}, "4294967295mbit",
           s, fq);
  t.values("--max-offload-horizon", kTimeGarbage + std::vector<std::string>{"4294967296us"}, "4294967295us", s, fq);
  t.files("--config", {"", "/nonexistent/fq.json", "/", "/dev/zero", "/dev/urandom"}, s);
  t.add({"--config", {"show", "--config", "/dev/null", "fq"}, {"not both"}});
  t.add({"", {"show"}, {"fq"}});
  t.add({"", {"show", "tbf"}, {"tbf"}});
  t.add({"", {"show", "--bogus", "fq"}, {"--bogus"}});
  t.add({"", {"show", "--args", "-j", "fq"}, {"--args"}});
  return t;
}

Table sim_table() {
  Table t;
  const std::vector<std::string> s = {"sim", "-q"};
  const std::vector<std::string> words = kGarbage + std::vector<std::string>{"EDT", "1"};
  t.values("--traffic", words, "", s);
  t.values("--flows", kGarbage + kHuge + std::vector<std::string>{"0", "10000001", "1000000000", "1.5"}, "1..10000000",
           s);
  t.values("--rate", kGarbage + kHuge + std::vector<std::string>{"0", "-0.5", "1000000001", "-inf"}, "1000000000", s);
  t.values("--packet-size", kGarbage + kHuge + std::vector<std::string>{"0", "63", "65536"}, "64..65535", s);
  t.values("--duration", kTimeGarbage + std::vector<std::string>{"0", "0s", "3601s", "100days"}, "3600s", s);
  t.values("--interval", kTimeGarbage + std::vector<std::string>{"0", "0ns", "3601s"}, "1ns to 3600s", s);
  t.add({"--interval", {"sim", "-q", "--interval", "1ns"}, {"--interval", "samples"}});
  t.values(
      "--seed",
      kGarbage + std::vector<std::string>{"-1", "18446744073709551616", "1e300", "99999999999999999999", "1.5", "0x"},
      "0..18446744073709551615", s);
  t.values("--inflight", kGarbage + kHuge + std::vector<std::string>{"0", "1001"}, "1..1000", s);
  for (const char* onoff : {"--on", "--off"})
    t.values(onoff, kTimeGarbage + std::vector<std::string>{"0", "1ns", "999ns", "86401s"}, "1us to 86400s",
             {"sim", "-q", "--traffic", "onoff"});
  t.files("--pcap", {"", "/nonexistent.pcap", "/", "/dev/zero", "/dev/urandom"}, {"sim", "-q", "--traffic", "pcap"});
  t.add({"--pcap", {"sim", "-q", "--traffic", "pcap"}, {"--pcap"}});
  t.files("--csv", {"", "/nonexistent.csv", "/", "/dev/zero", "/dev/urandom"}, {"sim", "-q", "--traffic", "csv"});
  t.add({"--csv", {"sim", "-q", "--traffic", "csv"}, {"--csv"}});
  t.add({"--csv", {"sim", "-q", "--duration", "1ms", "--csv", "x.csv"}, {"--csv \"x.csv\"", "--traffic csv"}});
  t.values("--flow-lifetime", kTimeGarbage + std::vector<std::string>{"0", "999us", "86401s"}, "1ms to 86400s",
           {"sim", "-q", "--traffic", "churn"});
  t.values("--fast-flows", kGarbage + std::vector<std::string>{"-1", "1.5", "10000001", "99999999999999999999"},
           "0 to 10000000", {"sim", "-q", "--traffic", "mixed"});
  for (const char* gap : {"--fast-gap", "--slow-gap"})
    t.values(gap, kTimeGarbage + std::vector<std::string>{"0", "99ns", "3601s"}, "100ns to 3600s",
             {"sim", "-q", "--traffic", "mixed"});
  for (const char* mixed : {"--fast-flows", "--fast-gap", "--slow-gap"})
    t.add({mixed, {"sim", "-q", "--duration", "1ms", mixed, "1"}, {mixed, "--traffic mixed"}});
  // An option the traffic model would ignore (--duration 1ms: accepted, it would print a run).
  t.add({"--pcap", {"sim", "-q", "--duration", "1ms", "--pcap", "x.pcap"}, {"--pcap \"x.pcap\"", "--traffic edt"}});
  t.add({"--pcap",
         {"sim", "-q", "--duration", "1ms", "--traffic", "churn", "--pcap", "x.pcap"},
         {"--pcap", "--traffic pcap", "--traffic churn"}});
  for (const char* onoff : {"--on", "--off"})
    t.add({onoff, {"sim", "-q", "--duration", "1ms", onoff, "1s"}, {onoff, "--traffic onoff"}});
  t.add({"--flow-lifetime",
         {"sim", "-q", "--duration", "1ms", "--traffic", "onoff", "--flow-lifetime", "1s"},
         {"--flow-lifetime", "--traffic churn", "--traffic onoff"}});
  for (const char* ignored : {"--flows", "--rate", "--packet-size"})
    t.add({ignored,
           {"sim", "-q", "--duration", "1ms", "--traffic", "pcap", "--pcap", "/nonexistent.pcap", ignored, "100"},
           {ignored, "--traffic pcap"}});
  t.add({"--rate",
         {"sim", "-q", "--duration", "1ms", "--traffic", "bulk", "--rate", "100"},
         {"--rate", "--traffic bulk"}});
  t.values("--compat", words + std::vector<std::string>{"5.8"}, "", s);
  t.values("--scheduler", words, "", s);
  t.values("--queues", kGarbage + kHuge + std::vector<std::string>{"0", "1025"}, "1..1024", s);
  t.values("--cpus", kGarbage + kHuge + std::vector<std::string>{"0", "4097"}, "", s);
  t.add({"--cpus", {"sim", "-q", "--queues", "16", "--cpus", "8"}, {"--cpus", "--queues"}});
  t.values("--irq-latency", kTimeGarbage + std::vector<std::string>{"2ms"}, "1ms", s);
  t.values("--tick-hz", kGarbage + kHuge + std::vector<std::string>{"100001", "2000000000", "4294967295"}, "0..100000",
           s);
  t.values("--other-irq-rate", kGarbage + kHuge + std::vector<std::string>{"100000001", "-inf"}, "0..100000000", s);
  t.values("--base-sy", kGarbage + kHuge + std::vector<std::string>{"101", "-0.1"}, "0..100", s);
  t.values("--nic-rate", kGarbage + kHuge + std::vector<std::string>{"0", "999kbit", "11tbit", "1e300tbit"},
           "1mbit to 10tbit", s);
  t.values("--nic-latency", kTimeGarbage + std::vector<std::string>{"2s"}, "1s", s);
  t.flag("--nic-dummy", s);
  // The guest model (ufq/sim/guest.hpp).
  t.flag("--guest-sender", s);
  t.add({"--guest-sender", {"sim", "-q", "--traffic", "bulk", "--guest-sender"}, {"--traffic", "rate or edt"}});
  t.values("--guest-sndbuf", kGarbage + kHuge + std::vector<std::string>{"0", "1001"}, "1..1000", s);
  t.values("--guest-wake-at", kGarbage + kHuge + std::vector<std::string>{"1000"}, "0..999", s);
  t.add({"--guest-wake-at", {"sim", "-q", "--guest-sndbuf", "4", "--guest-wake-at", "4"}, {"--guest-wake-at", "--guest-sndbuf"}});
  t.values("--guest-burst", kGarbage + kHuge + std::vector<std::string>{"0", "1001"}, "1..1000", s);
  t.values("--guest-send-cost", kTimeGarbage + std::vector<std::string>{"0", "2ms"}, "1ms", s);
  for (const char* o : {"--guest-epoll-cost", "--softirq-cost"})
    t.values(o, kTimeGarbage + std::vector<std::string>{"2ms"}, "1ms", s);
  for (const char* o : {"--guest-wake-latency", "--guest-wake-latency-mean"})
    t.values(o, kTimeGarbage + std::vector<std::string>{"2s"}, "1s", s);
  t.add({"--guest-wake-latency-mean",
         {"sim", "-q", "--guest-wake-latency", "20us", "--guest-wake-latency-mean", "10us"},
         {"--guest-wake-latency-mean", "--guest-wake-latency"}});
  for (const char* o : {"--guest-lead", "--guest-send-for"})
    t.values(o, kTimeGarbage + std::vector<std::string>{"3601s"}, "3600s", s);
  t.flag("--nohz-idle", s);
  t.values("--wheel-timers", kGarbage + kHuge + std::vector<std::string>{"100001"}, "0..100000", s);
  t.files("--event-trace", {"/proc/ufq-no-such-dir/events.txt"}, {"sim", "-q", "--duration", "1ms"});
  t.values("--ring", kGarbage + kHuge + std::vector<std::string>{"0", "65537"}, "1..65536", s);
  t.values("--tx-usecs", kTimeGarbage + std::vector<std::string>{"2s"}, "1s", s);
  t.values("--tx-frames", kGarbage + kHuge + std::vector<std::string>{"0", "4294967296"}, "1..4294967295", s);
  for (const char* cost : {"--cost-timer-irq", "--cost-nic-irq", "--cost-other-irq", "--cost-packet", "--cost-run"})
    t.values(cost, kGarbage + kHuge + std::vector<std::string>{"1000001", "1.5"}, "0..1000000", s);
  t.values("--compare",
           {"", "=", "timer_slack", "timer_slack=", "=1", "timer_slack=,", "timer_slack=1,", "bogus=1",
            "timer_slack=1,bogus", "quantum=0", "buckets=1,4294967295"},
           "", s);
  t.values("--jobs", kGarbage + kHuge + std::vector<std::string>{"0", "1025", "1.5"}, "1..1024", s);
  // Runs one at a time: more at once is refused naming both options.
  t.add({"--jobs", {"sim", "-q", "--compare", "timer_slack=0,1us", "--rss", "--jobs", "2"}, {"--jobs 2", "--rss"}});
  t.add({"--jobs",
         {"sim", "-q", "--compare", "timer_slack=0,1us", "--event-trace", "/tmp/ufq-events.txt", "--jobs", "2"},
         {"--jobs 2", "--event-trace"}});
  for (const char* f : {"--json", "--tc-stats", "--soak", "--rss", "--quiet"}) t.flag(f, s);
  t.values("--plot", {"", "/proc/ufq-no-such-dir", "/dev/null"}, "", {"sim", "-q", "--duration", "1ms"});
  t.add({"", {"sim", "tbf"}, {"tbf"}});
  t.add({"", {"sim", "--bogus"}, {"--bogus"}});

  // Plans that would not fit: refused before anything is allocated.
  t.add({"--flows", {"sim", "-q", "--flows", "10000000", "--inflight", "1000"}, {"--flows", "memory"}});
  t.add({"--flows", {"sim", "-q", "--flows", "10000000", "--duration", "1ms"}, {"--flows", "memory"}, true});
  t.add({"--inflight",
         {"sim", "-q", "--flows", "5000000", "--inflight", "10", "--duration", "1ms"},
         {"--inflight", "memory"},
         true});
  t.add({"--scheduler",
         {"sim", "-q", "--queues", "1024", "--cpus", "1024", "--scheduler", "reference", "--duration", "1ms", "fq",
          "buckets", "262144"},
         {"buckets", "memory"},
         true});
  t.add({"--duration", {"sim", "-q", "--rate", "1e9", "--duration", "3600s"}, {"--duration", "events"}});
  t.add({"--tick-hz",
         {"sim", "-q", "--tick-hz", "100000", "--queues", "1024", "--cpus", "1024", "--duration", "3600s"},
         {"--tick-hz", "events"}});
  t.add({"--other-irq-rate",
         {"sim", "-q", "--other-irq-rate", "1e8", "--duration", "3600s"},
         {"--other-irq-rate", "events"}});
  t.add({"--on",
         {"sim", "-q", "--traffic", "onoff", "--flows", "10000000", "--inflight", "1", "--on", "1us", "--off", "1us",
          "--duration", "100s"},
         {"--on", "events"}});
  t.add({"--flow-lifetime",
         {"sim", "-q", "--traffic", "churn", "--flows", "10000000", "--inflight", "1", "--flow-lifetime", "1ms",
          "--duration", "3600s"},
         {"--flow-lifetime", "events"}});
  t.add({"--nic-latency",
         {"sim", "-q", "--traffic", "bulk", "--nic-dummy", "--nic-latency", "0", "--duration", "1ms"},
         {"--nic-latency", "--nic-dummy"}});
  t.add({"--nic-rate",
         {"sim", "-q", "--traffic", "bulk", "--nic-rate", "10tbit", "--packet-size", "64", "--queues", "1024", "--cpus",
          "1024", "--duration", "3600s"},
         {"--nic-rate", "events"}});
  return t;
}

Table pace_table() {
  Table t;
  const std::vector<std::string> s = {"pace", "-q", "--no-probe"};
  t.values("--flows", kGarbage + kHuge + std::vector<std::string>{"0", "1000001", "1000000000"}, "1..1000000", s);
  t.values("--queues", kGarbage + kHuge + std::vector<std::string>{"0", "65", "1.5"}, "1..64", s);
  t.values("--rate", kGarbage + kHuge + std::vector<std::string>{"0", "100000001", "1M5", "1e300k", "-inf"}, "100M", s);
  t.values("--packet-size", kGarbage + kHuge + std::vector<std::string>{"0", "23", "65001"}, "24..65000", s);
  t.values("--duration", kTimeGarbage + std::vector<std::string>{"0", "86401"}, "a day", s);
  t.values("--interval", kTimeGarbage + std::vector<std::string>{"0", "99ms", "86401"}, "100ms to a day", s);
  t.values("--timer", kGarbage + std::vector<std::string>{"hrtimer", "NANOSLEEP"}, "nanosleep", s);
  t.values("--spin", kTimeGarbage + std::vector<std::string>{"2s"}, "1s", s);
  t.values("--tick", kTimeGarbage + std::vector<std::string>{"0", "999ns", "2s"}, "1us..1s", s);
  t.values("--lead", kTimeGarbage + std::vector<std::string>{"2s"}, "1s", s);
  t.values("--egress", kGarbage + std::vector<std::string>{"tcp", "per_flow"}, "", s);
  // Literal addresses only: a host name would be looked up (a socket) before the refusal.
  t.values("--dest",
           kGarbage + std::vector<std::string>{"127.0.0.1", "::1:9", "[::1]:0", "127.0.0.1:65536", "[::1]9", ":9",
                                               "127.0.0.1:-1", "[::1]:"},
           "HOST:PORT", s);
  t.add({"--dest", {"pace", "-q", "--dest", "127.0.0.1:9", "--egress", "sink"}, {"--dest", "sink"}});
  t.add({"--dest", {"pace", "-q", "--dest", "[::1]:9", "--netns"}, {"--dest", "--netns"}});
  for (const char* f : {"--no-gso", "--netns", "--json", "--quiet", "--pin", "--no-probe"}) t.flag(f, {"pace", "-q"});
  t.values("--compare",
           {"", "=", "timer_slack", "timer_slack=", "=1", "timer_slack=,", "timer_slack=1,bogus", "timer=busy,nope",
            "egress=tcp", "bogus=1"},
           "", s);
  // -1 is a valid nice value (root may lower it).
  t.values("--nice",
           kGarbage + std::vector<std::string>{"-21", "20", "9223372036854775808", "1e300", "99999999999999999999",
                                               "-99999999999999999999", "1.5"},
           "-20..19", s);
  t.values("--seed",
           kGarbage + std::vector<std::string>{"-1", "18446744073709551616", "1e300", "99999999999999999999", "1.5"},
           "0..18446744073709551615", s);
  t.values("--compat", kGarbage + std::vector<std::string>{"5.8"}, "", s);
  t.add({"", {"pace", "tbf"}, {"tbf"}});
  t.add({"", {"pace", "--bogus"}, {"--bogus"}});
  // Refused before any socket: one socket per flow would pass the sandbox's 1024 open files.
  t.add({"--egress", {"pace", "-q", "--egress", "per-flow", "--flows", "2000"}, {"--egress", "--flows", "ulimit -n"}});
  t.add({"--compare",
         {"pace", "-q", "--compare", "egress=shared,per-flow", "--flows", "2000"},
         {"per-flow", "ulimit -n"}});
  t.add({"--rate", {"pace", "-q", "--flows", "1000000", "--rate", "1"}, {"--rate"}});
  // Each pooled datagram has its own payload buffer: 1.1M of 65000 bytes.
  t.add({"--packet-size",
         {"pace", "-q", "--no-probe", "--rate", "1M", "--packet-size", "65000", "--lead", "1s"},
         {"--packet-size", "memory"},
         true});
  return t;
}

// `ufq gaps` refuses its options before it opens anything: a capture would
// open a socket (the sandbox's SIGSYS), a file read names the file.
Table gaps_table() {
  Table t;
  const std::vector<std::string> s = {"gaps", "-r", "/dev/null"};
  t.values("--port", kGarbage + kHuge + std::vector<std::string>{"65536", "1.5"}, "0..65535", s);
  t.values("--count", kGarbage + kHuge + std::vector<std::string>{"1.5"}, "0..", s);
  t.values("--duration", kTimeGarbage + std::vector<std::string>{"0", "86401"}, "a day", s);
  t.values("--idle", kTimeGarbage + std::vector<std::string>{"86401"}, "a day", s);
  t.values("--segment", kGarbage + kHuge + std::vector<std::string>{"65536", "1.5"}, "0..65535", s);
  t.values("--burst-gap", kTimeGarbage + std::vector<std::string>{"0", "2s"}, "1s", s);
  t.add({"--filter", {"gaps", "-r", "/dev/null", "--filter", "udp", "--port", "9"}, {"--filter", "not both"}});
  t.add({"--interface", {"gaps", "-r", "/dev/null", "--interface", "lo"}, {"--interface"}});
  t.files("--read", {"/nonexistent.pcap", "/dev/null", ""}, {"gaps"});
  t.flag("--json", {"gaps", "-r", "/nonexistent.pcap"});
  t.add({"", {"gaps", "--bogus"}, {"--bogus"}});
  t.add({"", {"gaps", "extra"}, {"extra"}});
  return t;
}

// `ufq run` refuses before exec: a refused case never starts the program
// (/bin/true would exit 0, which the judge counts as not refused).
Table run_table() {
  Table t;
  const std::vector<std::string> s = {"run"};
  const std::vector<std::string> prog = {"--", "/bin/true"};
  t.values("--drain", kTimeGarbage + std::vector<std::string>{"3601", "2h"}, "0..1h", s, prog);
  t.values("--stats-signal", kGarbage + std::vector<std::string>{"KILL", "STOP", "0", "65", "SIGFOO", "9"},
           "caught", s, prog);
  t.add({"--stats", {"run", "--stats", "/nonexistent-dir/s.json", "--", "/bin/true"}, {"--stats", "/nonexistent-dir"}});
  t.add({"--stats", {"run", "--stats", "", "--", "/bin/true"}, {"--stats"}});
  t.flag("--quiet", s, prog);
  t.values("--nice", kGarbage + std::vector<std::string>{"-21", "20", "1e300", "99999999999999999999", "1.5"},
           "-20..19", s, prog);
  t.add({"", {"run", "limit", "5"}, {"-- PROGRAM"}});
  t.add({"", {"run"}, {"-- PROGRAM"}});
  t.add({"", {"run", "bogus", "--", "/bin/true"}, {"bogus"}});
  t.add({"", {"run", "fq", "flow_limit", "99999999999", "--", "/bin/true"}, {"flow_limit", "99999999999"}});
  t.add({"", {"run", "--bogus", "--", "/bin/true"}, {"--bogus"}});
  return t;
}

// Every fq keyword given bad values, after `fq` in each subcommand (in full
// under show, a sample under sim and pace: the words go to the same parser).
const std::vector<std::string> kFqValueWords = {"limit",          "flow_limit",  "quantum",      "initial_quantum",
                                                "maxrate",        "buckets",     "refill_delay", "low_rate_threshold",
                                                "orphan_mask",    "timer_slack", "ce_threshold", "horizon",
                                                "offload_horizon"};

Table fq_table() {
  Table t;
  const std::vector<std::string> bad =
      kGarbage + kHuge + std::vector<std::string>{"0x", "18446744073709551616", "1e300s"};
  for (const auto& w : kFqValueWords) {
    for (const auto& v : bad) t.add({w, {"show", "fq", w, v}, {w}});
    t.add({w, {"show", "fq", w}, {w}});  // value missing
    t.add({w, {"sim", "-q", "fq", w, "abc"}, {w}});
    t.add({w, {"pace", "-q", "--no-probe", "fq", w, "abc"}, {w}});
  }
  t.add({"quantum", {"show", "fq", "quantum", "0"}, {"quantum"}});
  t.add({"buckets", {"show", "fq", "buckets", "4294967295"}, {"buckets"}});
  t.add({"buckets", {"sim", "-q", "fq", "buckets", "4294967295"}, {"buckets"}});
  for (const char* w : {"pacing", "nopacing", "horizon_cap", "horizon_drop"}) {
    t.add({w, {"show", "fq", w, "abc"}, {"abc"}});
    t.add({w, {"show", "fq", w, "1"}, {"\"1\""}});
  }
  for (const auto& v : kGarbage + std::vector<std::string>{"2", "4", "-1", "99999999999999999999"})
    t.add({"bands", {"show", "fq", "bands", v}, {"bands"}});
  t.add({"bands", {"show", "fq", "bands"}, {"bands"}});
  t.add({"priomap", {"show", "fq", "priomap", "1", "2"}, {"priomap"}});
  t.add({"priomap", {"show", "fq", "bands", "3", "priomap"}, {"priomap"}});
  t.add({"priomap", {"show", "fq", "bands", "3", "priomap", "1", "2", "3"}, {"priomap"}});
  t.add({"priomap",
         {"show", "fq", "bands", "3", "priomap", "0", "1", "2", "3", "0", "0",
          "0",    "0",  "0",     "0", "0",       "0", "0", "0", "0", "0"},
         {"priomap"}});
  t.add({"priomap",
         {"show", "fq", "bands", "3", "priomap", "abc", "0", "0", "0", "0", "0",
          "0",    "0",  "0",     "0", "0",       "0",   "0", "0", "0", "0"},
         {"priomap"}});
  for (const auto& v : kGarbage + kHuge + std::vector<std::string>{"0", "1"})
    t.add({"weights", {"show", "fq", "weights", v, "65536", "65536"}, {"weight"}});
  t.add({"weights", {"show", "fq", "weights", "65536", "65536"}, {"weights"}});
  t.add({"weights", {"show", "fq", "weights"}, {"weights"}});
  t.add({"weights", {"sim", "-q", "fq", "weights", "1", "2", "3"}, {"weight"}});
  // The adaptive slack (a ufq extension): bad fractions, a bad or missing max,
  // max below timer_slack, and a kernel level that cannot have it (ufq sim's
  // default compat is 5.7).
  for (const auto& v : kGarbage + kHuge + std::vector<std::string>{"101%", "1.5", "0.00001%", "-1%", "10ms"})
    t.add({"adaptive_slack", {"show", "fq", "adaptive_slack", v}, {"adaptive_slack"}});
  t.add({"adaptive_slack", {"show", "fq", "adaptive_slack"}, {"adaptive_slack"}});
  t.add({"adaptive_slack", {"show", "--compat", "5.7", "fq", "adaptive_slack", "10%"}, {"adaptive_slack", "10%", "5.7"}});
  t.add({"adaptive_slack", {"sim", "-q", "fq", "adaptive_slack", "10%"}, {"adaptive_slack", "10%", "5.7"}});
  for (const auto& v : kGarbage + std::vector<std::string>{"18446744073709551616", "1e300s", "5s"})
    t.add({"max", {"show", "fq", "adaptive_slack", "10%", "max", v}, {"max"}});
  t.add({"max", {"show", "fq", "adaptive_slack", "10%", "max"}, {"max"}});
  t.add({"max", {"show", "fq", "timer_slack", "50us", "adaptive_slack", "10%", "max", "10us"}, {"max", "10000ns"}});
  t.add({"", {"show", "fq", "bogus"}, {"bogus"}});
  t.add({"", {"show", "fq", ""}, {"fq"}});
  t.add({"", {"show", "fq", "limit", "10", "limit", "abc"}, {"limit"}});
  return t;
}

// ---------------------------------------------------------- what --help says

std::string help(const std::vector<std::string>& args) {
  const SandboxResult r = run_sandboxed(UFQ_BINARY, args);
  EXPECT_EQ(r.exit_status, 0) << show(args) << ": " << r.err;
  return r.out;
}

// The option names in the "Options:" part of CLI11's help (long name when there is one).
std::set<std::string> options_in_help(const std::string& text) {
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  bool in_options = false;
  while (std::getline(in, line)) {
    if (line.rfind("Options:", 0) == 0) {
      in_options = true;
      continue;
    }
    if (!line.empty() && line[0] != ' ') in_options = false;
    if (!in_options || line.rfind("  -", 0) != 0) continue;
    std::string spec = line.substr(2, line.find(' ', 2) - 2);
    std::string name;
    std::stringstream parts(spec);
    for (std::string p; std::getline(parts, p, ',');)
      if (name.empty() || p.rfind("--", 0) == 0) name = p;
    names.insert(name);
  }
  return names;
}

std::set<std::string> subcommands_in_help(const std::string& text) {
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (in_list && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
      names.insert(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

// The keywords of the fq usage line: "[ limit PACKETS ]", "[ [no]pacing ]",
// "[ horizon_{cap|drop} ]", "[ bands 3 priomap P0 .. P15 ]".
std::set<std::string> fq_keywords_in_help(const std::string& text) {
  std::set<std::string> words;
  const auto at = text.find("fq [ ");
  if (at == std::string::npos) return words;
  std::istringstream in(text.substr(at + 3, text.find('\n', at) - at - 3));
  const auto lowercase = [](const std::string& w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '_'; });
  };
  for (std::string tok; in >> tok;) {
    const auto open = tok.find('{');
    if (tok.rfind("[no]", 0) == 0) {
      words.insert(tok.substr(4));
      words.insert("no" + tok.substr(4));
    } else if (open != std::string::npos && tok.back() == '}') {
      std::stringstream alts(tok.substr(open + 1, tok.size() - open - 2));
      for (std::string alt; std::getline(alts, alt, '|');) words.insert(tok.substr(0, open) + alt);
    } else if (lowercase(tok)) {
      words.insert(tok);
    }
  }
  return words;
}

std::set<std::string> covered(const Table& t) {
  std::set<std::string> s;
  for (const auto& c : t.cases()) s.insert(c.covers);
  return s;
}

std::string missing(const std::set<std::string>& wanted, const std::set<std::string>& have) {
  std::string m;
  for (const auto& w : wanted)
    if (!have.count(w)) m += " " + w;
  return m;
}

bool has_pace() { return subcommands_in_help(help({"--help"})).count("pace") != 0; }
bool has_run() { return subcommands_in_help(help({"--help"})).count("run") != 0; }

// ------------------------------------------------------------------- tests

TEST(BadInput, TableCoversEverySubcommand) {
  const auto subs = subcommands_in_help(help({"--help"}));
  ASSERT_TRUE(subs.count("show") && subs.count("sim")) << "help format changed?";
  EXPECT_EQ(missing(subs, {"show", "sim", "pace", "gaps", "run"}), "") << ": subcommands without a bad-input table";
}

TEST(BadInput, TableCoversEveryOption) {
  const std::map<std::string, Table> tables = {{"show", show_table()}, {"sim", sim_table()}, {"pace", pace_table()},
                                               {"gaps", gaps_table()}, {"run", run_table()}};
  for (const auto& sub : subcommands_in_help(help({"--help"}))) {
    auto options = options_in_help(help({sub, "--help"}));
    ASSERT_TRUE(options.erase("--help")) << sub << ": help format changed?";  // --help is not given values
    ASSERT_GT(options.size(), 2u) << sub;
    const auto t = tables.find(sub);
    ASSERT_NE(t, tables.end()) << sub;
    EXPECT_EQ(missing(options, covered(t->second)), "") << ": options of `ufq " << sub << "` the table does not cover";
  }
}

TEST(BadInput, TableCoversEveryFqKeyword) {
  const auto words = fq_keywords_in_help(help({"show", "--help"}));
  ASSERT_TRUE(words.count("limit") && words.count("nopacing") && words.count("horizon_drop") && words.count("priomap"))
      << "usage format changed?";
  EXPECT_EQ(missing(words, covered(fq_table())), "") << ": fq keywords the table does not cover";
}

TEST(BadInput, SandboxCatchesARunThatStartsWorking) {
  // The fence itself must be able to fail a case: a valid pace run opens
  // sockets and threads, a valid sim run takes longer than its time limit.
  if (has_pace() && ufq::testing::seccomp_available()) {
    const auto r =
        run_sandboxed(UFQ_BINARY, {"pace", "-q", "--no-probe", "--duration", "1", "--flows", "10", "--rate", "100"});
    EXPECT_EQ(r.signal, SIGSYS) << r.err;
  }
  ufq::testing::SandboxLimits quick;
  quick.wall = std::chrono::seconds(1);
  const auto r = run_sandboxed(UFQ_BINARY, {"sim", "-q", "--duration", "3600s", "--flows", "100000"}, quick);
  EXPECT_TRUE(r.timed_out);
  if (kAddressSpaceLimited) {
    // Under the address-space limit a plan too big for it is refused, not attempted.
    const auto m = run_sandboxed(UFQ_BINARY, {"sim", "-q", "--flows", "10000000", "--duration", "1ms"});
    EXPECT_EQ(m.exit_status, 2);
    EXPECT_NE(m.err.find("memory"), std::string::npos) << m.err;
  }
}

TEST(BadInput, TopLevel) { expect_refused(top_level_table().cases()); }
TEST(BadInput, Show) { expect_refused(show_table().cases()); }
TEST(BadInput, Sim) { expect_refused(sim_table().cases()); }

TEST(BadInput, Pace) {
  if (!has_pace()) GTEST_SKIP() << "built without the real-time pacer";
  expect_refused(pace_table().cases());
}

TEST(BadInput, Gaps) {
  if (subcommands_in_help(help({"--help"})).count("gaps") == 0) GTEST_SKIP() << "built without libpcap";
  expect_refused(gaps_table().cases());
}

TEST(BadInput, Run) {
  if (!has_run()) GTEST_SKIP() << "built without the preload library";
  expect_refused(run_table().cases());
}

TEST(BadInput, FqKeywords) {
  std::vector<Case> cases;
  const bool pace = has_pace();
  const Table table = fq_table();
  for (const auto& c : table.cases())
    if (pace || c.args.front() != "pace") cases.push_back(c);
  expect_refused(cases);
}

}  // namespace
