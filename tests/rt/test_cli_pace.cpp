// `ufq pace` as a user runs it: bad arguments exit 2 with a message; a short
// run prints JSON with the documented keys; SIGTERM ends a run cleanly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <csignal>
#include <cstdio>
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

}  // namespace

TEST(CliPace, BadArgumentsExit2) {
  for (const char* args :
       {"pace --timer hrtimer", "pace --rate fast", "pace --flows 0", "pace --duration -1",
        "pace --egress tcp", "pace --compare timer_slack", "pace --compare timer_slack=1,bogus",
        "pace --compare timer=busy,nope", "pace --packet-size 10", "pace fq quantum 0",
        "pace fq bogus 1", "pace tbf", "pace --no-such-option"}) {
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
