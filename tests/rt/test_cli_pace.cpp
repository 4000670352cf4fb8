// `ufq pace` as a user runs it: bad arguments exit 2 with a message; a short
// run prints JSON with the documented keys; SIGTERM ends a run cleanly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

struct Result {
  int status = -1;
  std::string out;
};

Result run(const std::string& args) {
  Result r;
  const std::string cmd = std::string(UFQ_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// A receiver that is not ufq's: a few lines of Python on [::1] that count
// the datagrams, their flows (the wire header's second word) and their rate.
constexpr const char* kForeignReceiver = R"(
import socket, struct, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("::1", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(20)
n, size, flows, first, last = 0, 0, {}, 0.0, 0.0
while True:
    try:
        d = s.recv(65536)
    except socket.timeout:
        break
    t = time.monotonic()
    if n == 0:
        first = t
        s.settimeout(1.5)
    last = t
    n += 1
    size += len(d)
    flow = struct.unpack_from("<I", d, 4)[0]
    flows[flow] = flows.get(flow, 0) + 1
rate = (n - 1) / (last - first) if n > 1 else 0
print(n, size, len(flows), min(flows.values(), default=0), max(flows.values(), default=0), rate, flush=True)
)";

}  // namespace

TEST(CliPace, BadArgumentsExit2) {
  for (const char* args :
       {"pace --timer hrtimer", "pace --rate fast", "pace --flows 0", "pace --duration -1",
        "pace --egress tcp", "pace --compare timer_slack", "pace --compare timer_slack=1,bogus",
        "pace --compare timer=busy,nope", "pace --packet-size 10", "pace fq quantum 0",
        "pace fq bogus 1", "pace tbf", "pace --no-such-option", "pace --dest 127.0.0.1",
        "pace --dest ::1:9", "pace --dest [::1]:0", "pace --dest 127.0.0.1:9 --egress sink",
        "pace --dest 127.0.0.1:9 --netns", "pace --timer blasts", "pace --queues 0", "pace --queues 65",
        "pace --queues 2 --timer blast"}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(CliPace, ShortJsonCompareRun) {
  const Result r = run(
      "pace --flows 50 --rate 5000 --packet-size 100 --duration 1 --interval 500ms --json -q "
      "--compare timer_slack=0,50us fq quantum 3000");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2U);
  EXPECT_EQ(j[0]["label"], "timer_slack=0");
  EXPECT_EQ(j[1]["timer_slack_ns"], 50000);
  for (const auto& run : j) {
    for (const char* key : {"pps", "wakeups_per_s", "interrupts_per_s", "context_switches_per_s",
                            "cpu_pct", "packets_sent", "packets_received", "packets_lost",
                            "flow_rate_error_max", "lateness_ns", "timer", "qdisc"})
      EXPECT_TRUE(run.contains(key)) << key;
    EXPECT_EQ(run["timer"], "nanosleep");
    EXPECT_EQ(run["qdisc"]["kind"], "fq");
    EXPECT_EQ(run["qdisc"]["options"]["quantum"], 3000);
    EXPECT_EQ(run["packets_sent"].get<long>(),
              run["packets_received"].get<long>() + run["packets_lost"].get<long>());
    EXPECT_TRUE(run["lateness_ns"].contains("p99"));
  }
}

// The price of precision's yardstick: `--timer blast` sends the same number
// of packets (rate x duration) unpaced, beside a paced run, and both report
// CPU per packet with the softirq accounting.
TEST(CliPace, BlastSendsTheSamePacketsUnpacedBesideAPacedRun) {
  const Result r = run(
      "pace --flows 20 --rate 4000 --packet-size 200 --duration 1 --json -q --no-probe "
      "--compare timer=tick,blast");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2U);
  EXPECT_EQ(j[0]["timer"], "tick");
  EXPECT_EQ(j[1]["timer"], "blast");
  for (const auto& run : j) {
    EXPECT_EQ(run["packets_sent"].get<long>(), 4000) << run["timer"];
    EXPECT_EQ(run["packets_received"].get<long>(), 4000) << run["timer"];
    EXPECT_TRUE(run["accounting"]["balanced"].get<bool>());
    for (const char* k : {"pacer", "sender", "sender_with_ksoftirqd"})
      EXPECT_GT(run["cpu_ns_per_packet"][k].get<double>(), 0.0) << k;
    EXPECT_GE(run["cpu_ns_per_packet"]["sender_with_ksoftirqd"].get<double>(),
              run["cpu_ns_per_packet"]["sender"].get<double>());
    EXPECT_TRUE(run["softirq"].contains("ksoftirqd_cpu_pct"));
  }
  // Unpaced: no wake-ups, and it sends far faster than the paced 4000/s.
  EXPECT_EQ(j[1]["wakeups_per_s"].get<double>(), 0.0);
  EXPECT_GT(j[1]["pps"].get<double>(), 8000.0);
  EXPECT_LT(j[0]["pps"].get<double>(), 4400.0);
}

// --queues: flows spread over the queues, each queue's share and the
// totals in the JSON, fq options applied to every child of the mq qdisc.
TEST(CliPace, QueuesReportPerQueueAndTotal) {
  const Result r = run(
      "pace --queues 3 --flows 30 --rate 3000 --packet-size 100 --duration 1 --json -q --no-probe "
      "fq quantum 3000");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out).at(0);
  EXPECT_EQ(j["queues"], 3);
  ASSERT_EQ(j["per_queue"].size(), 3U);
  long flows = 0, sent = 0;
  for (const auto& q : j["per_queue"]) {
    flows += q["flows"].get<long>();
    sent += q["packets_sent"].get<long>();
    EXPECT_TRUE(q["accounting"]["balanced"].get<bool>());
  }
  EXPECT_EQ(flows, 30);
  EXPECT_EQ(sent, j["packets_sent"].get<long>());
  EXPECT_EQ(j["packets_sent"].get<long>(), j["packets_received"].get<long>() + j["packets_lost"].get<long>());
  ASSERT_TRUE(j["qdisc"].is_array());
  ASSERT_EQ(j["qdisc"].size(), 4U);
  EXPECT_EQ(j["qdisc"][0]["kind"], "mq");
  EXPECT_EQ(j["qdisc"][0]["packets"].get<long>(), sent);
  for (int q = 1; q <= 3; ++q) EXPECT_EQ(j["qdisc"][q]["options"]["quantum"], 3000);
}

TEST(CliPace, SigintPrintsSummaryAndExitsZero) {
  const std::string out_file = "/tmp/ufq_pace_sigint_" + std::to_string(::getpid()) + ".txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::freopen(out_file.c_str(), "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execl(UFQ_BINARY, UFQ_BINARY, "pace", "--flows", "20", "--rate", "2000", "--duration", "60",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ::kill(pid, SIGINT);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  FILE* f = std::fopen(out_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) text.append(buf.data(), n);
  std::fclose(f);
  std::remove(out_file.c_str());
  EXPECT_NE(text.find("stopped by signal"), std::string::npos) << text;
  EXPECT_NE(text.find("lost 0"), std::string::npos) << text;
  EXPECT_NE(text.find("qdisc fq 8001:"), std::string::npos) << text;
}

// --dest: the generated flows go to a receiver the user runs (here IPv6 on
// loopback, in Python); the built-in receiver is not started, the report
// gives send-side figures, and every datagram arrives at the requested rate.
TEST(CliPace, DestDeliversEveryDatagramToAForeignIpv6Receiver) {
  char path[] = "/tmp/ufq-foreign-rx-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, kForeignReceiver, std::strlen(kForeignReceiver)),
            static_cast<ssize_t>(std::strlen(kForeignReceiver)));
  ::close(fd);
  FILE* rx = ::popen(("python3 " + std::string(path)).c_str(), "r");
  ASSERT_NE(rx, nullptr);
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof(line), rx), nullptr) << "the receiver did not start";
  const int port = std::atoi(line);
  if (port <= 0) {
    ::pclose(rx);
    ::unlink(path);
    GTEST_SKIP() << "no IPv6 loopback for the receiver";
  }
  const Result r = run("pace --dest [::1]:" + std::to_string(port) +
                       " --flows 10 --rate 1000 --duration 2 --no-probe --json -q");
  ASSERT_NE(std::fgets(line, sizeof(line), rx), nullptr);
  ::pclose(rx);
  ::unlink(path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out).at(0);
  EXPECT_FALSE(j["receiver"].get<bool>());
  EXPECT_TRUE(j["packets_received"].is_null()) << "not measured: the receiver is the user's";
  EXPECT_NE(j["path"].get<std::string>().find("[::1]:" + std::to_string(port)), std::string::npos);
  const long sent = j["packets_sent"].get<long>();
  EXPECT_EQ(sent, 2000) << "10 flows x 100 pkt/s x 2 s";
  EXPECT_EQ(j["accounting"]["balanced"], true);
  long got = 0, bytes = 0, flows = 0, fmin = 0, fmax = 0;
  double rate = 0;
  ASSERT_EQ(std::sscanf(line, "%ld %ld %ld %ld %ld %lf", &got, &bytes, &flows, &fmin, &fmax, &rate), 6) << line;
  EXPECT_EQ(got, sent) << "every datagram arrives";
  EXPECT_EQ(bytes, sent * 1200) << "at its size (default 1200 B)";
  EXPECT_EQ(flows, 10);
  EXPECT_EQ(fmin, 200);
  EXPECT_EQ(fmax, 200);
  EXPECT_NEAR(rate / 1000.0, 1.0, 0.03) << rate << " pkt/s at the receiver (Python's clock: generous)";
  EXPECT_NEAR(j["pps"].get<double>() / 1000.0, 1.0, 0.03) << "send side";
}
