// `ufq run` end to end: run_probe (our program, plain libc socket calls)
// under the preload library. Bounds on timing are generous (the machine is
// loaded and its timers fire late); what is checked exactly is the account
// and the errno the program sees. Where the kernel is the oracle (the
// malformed-input table) the probe runs once with and once without `ufq run`.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Result {
  int status = -1;  // exit status, or -signal
  std::string out, err;
  std::map<std::string, std::string> kv;  // key=value lines of stdout
  double num(const std::string& k) const {
    auto it = kv.find(k);
    return it == kv.end() ? -1e300 : std::strtod(it->second.c_str(), nullptr);
  }
  std::string str(const std::string& k) const {
    auto it = kv.find(k);
    return it == kv.end() ? "<missing>" : it->second;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& tag) {
  return ::testing::TempDir() + "ufq_run_" + tag + "_" + std::to_string(::getpid());
}

class Child {
 public:
  explicit Child(const std::vector<std::string>& argv, const std::string& tag) : out_(temp_path(tag + ".out")), err_(temp_path(tag + ".err")) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int o = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      std::vector<char*> a;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
  }
  pid_t pid() const { return pid_; }
  // Waits until stdout holds `text` (at most `limit`).
  bool wait_for_output(const std::string& text, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (slurp(out_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  Result wait(std::chrono::seconds limit = std::chrono::seconds(30)) {
    Result r;
    const auto end = std::chrono::steady_clock::now() + limit;
    int st = 0;
    for (;;) {
      const pid_t w = ::waitpid(pid_, &st, WNOHANG);
      if (w == pid_) break;
      if (std::chrono::steady_clock::now() > end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        r.err = "TIMED OUT\n";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    r.out = slurp(out_);
    r.err += slurp(err_);
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) r.kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    ::unlink(out_.c_str());
    ::unlink(err_.c_str());
    return r;
  }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
};

std::vector<std::string> under_ufq(std::vector<std::string> ufq_args, const std::vector<std::string>& probe_args) {
  std::vector<std::string> a{UFQ_BINARY, "run"};
  a.insert(a.end(), ufq_args.begin(), ufq_args.end());
  a.push_back("--");
  a.push_back(RUN_PROBE);
  a.insert(a.end(), probe_args.begin(), probe_args.end());
  return a;
}

Result run_probe(const std::vector<std::string>& ufq_args, const std::vector<std::string>& probe_args,
                 const std::string& tag) {
  Child c(under_ufq(ufq_args, probe_args), tag);
  return c.wait();
}

std::vector<nlohmann::json> stats_lines(const std::string& path) {
  std::vector<nlohmann::json> v;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

void expect_reconciles(const nlohmann::json& j) {
  const auto& a = j.at("account");
  ASSERT_TRUE(j.at("final").get<bool>()) << j.dump();
  const std::uint64_t dropped = a.at("dropped").at("limit").get<std::uint64_t>() +
                                a.at("dropped").at("flow_limit").get<std::uint64_t>() +
                                a.at("dropped").at("horizon").get<std::uint64_t>();
  EXPECT_EQ(a.at("handed_over").get<std::uint64_t>(),
            a.at("sent").get<std::uint64_t>() + dropped + a.at("failed_total").get<std::uint64_t>() +
                a.at("unsent_total").get<std::uint64_t>())
      << j.dump();
  EXPECT_TRUE(a.at("balanced").get<bool>()) << j.dump();
}

TEST(RunPace, DatagramsReachTheReceiverAtTheRateTheProgramSet) {
  const Result r = run_probe({"-q"}, {"pace", "200000", "200", "1000"}, "pace");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.str("readback"), "200000");
  EXPECT_EQ(r.num("received"), 200);
  // 200 datagrams of 1042 charged bytes at 200 kB/s: about a second.
  EXPECT_GT(r.num("rate_seen"), 0.6 * 200000) << r.out;  // late wake-ups on a loaded machine lose rate
  EXPECT_LT(r.num("rate_seen"), 1.25 * 200000) << r.out;
}

// The same program without `ufq run`: this machine's kernel has no fq, so
// SO_MAX_PACING_RATE does nothing (the reason for `ufq run`, and the proof
// that the test above can fail).
TEST(RunPace, WithoutUfqRunTheSameProgramIsNotPaced) {
  Child c({RUN_PROBE, "pace", "200000", "200", "1000"}, "native");
  const Result r = c.wait();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  if (r.num("rate_seen") < 2 * 200000) GTEST_SKIP() << "this kernel paces the socket itself (fq on lo?): " << r.out;
  EXPECT_GT(r.num("rate_seen"), 2 * 200000);
}

TEST(RunBackpressure, NonBlockingGetsEagainAtFlowLimitAndReadinessFollowsTheRoom) {
  const Result r = run_probe({"-q", "flow_limit", "10"}, {"nonblock"}, "nonblock");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // flow_limit datagrams in fq (plus the first, which leaves at once).
  EXPECT_GE(r.num("accepted"), 10) << r.out;
  EXPECT_LE(r.num("accepted"), 12) << r.out;
  EXPECT_EQ(r.str("errno"), "EAGAIN");
  EXPECT_GE(r.num("accepted_dontwait"), 10) << r.out;
  EXPECT_LE(r.num("accepted_dontwait"), 12) << r.out;
  EXPECT_EQ(r.str("errno_dontwait"), "EAGAIN");
  EXPECT_EQ(r.num("poll_now"), 0) << r.out;
  EXPECT_EQ(r.num("select_now"), 0) << r.out;
  EXPECT_EQ(r.num("epoll_now"), 0) << r.out;
  // One datagram leaves every 0.5 s: writable again then, not at once (a
  // busy level-triggered EPOLLOUT would return at 0 s).
  EXPECT_EQ(r.num("epoll_later"), 1) << r.out;
  EXPECT_GT(r.num("epoll_wait_seconds"), 0.1) << r.out;
  EXPECT_LT(r.num("epoll_wait_seconds"), 2.9) << r.out;
  EXPECT_EQ(r.num("poll_later"), 1) << r.out;
  EXPECT_GT(r.num("poll_wait_seconds"), 0.1) << r.out;
  EXPECT_EQ(r.num("send_after"), 1) << r.out;
  EXPECT_EQ(r.num("epoll_et_later"), 1) << r.out;  // an edge when room returned
  EXPECT_GT(r.num("epoll_et_seconds"), 0.1) << r.out;
}

TEST(RunBackpressure, BlockingSocketWaitsHonoursSndtimeoAndGetsEintr) {
  const Result r = run_probe({"-q", "--drain", "200ms", "flow_limit", "10"}, {"blocking"}, "blocking");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("sent"), 30);
  // 30 datagrams at 20/s with 10 in fq: the calls block for about a second.
  EXPECT_GT(r.num("blocked_seconds"), 0.5) << r.out;
  EXPECT_EQ(r.str("sndtimeo_errno"), "EAGAIN");
  EXPECT_GT(r.num("sndtimeo_seconds"), 0.15) << r.out;
  EXPECT_LT(r.num("sndtimeo_seconds"), 3) << r.out;
  EXPECT_EQ(r.str("signal_errno"), "EINTR");
  // 14 sends at 2 per second with 10 in fq: about 2 s blocked, SIGALRM every
  // 150 ms with SA_RESTART: no EINTR, every send done.
  EXPECT_EQ(r.num("restart_sent"), 14) << r.out;
  EXPECT_EQ(r.str("restart_errno"), "none") << r.out;
  EXPECT_GE(r.num("restart_signals"), 3) << r.out;
  EXPECT_EQ(r.num("sigaction_reads_back_own"), 1) << r.out;  // not our trampoline
}

TEST(RunLifecycle, ClosedSocketsQueuedDatagramsAreStillSent) {
  const std::string stats = temp_path("close.json");
  const Result r = run_probe({"-q", "--stats", stats}, {"close", "20"}, "close");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("received"), 20) << r.out;
  EXPECT_EQ(r.num("reused_number"), 1) << r.out;
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 1U);
  expect_reconciles(lines[0]);
  EXPECT_EQ(lines[0]["account"]["sent"], 20);
  ::unlink(stats.c_str());
}

TEST(RunLifecycle, ForkChildGetsItsOwnPacer) {
  const std::string stats = temp_path("fork.json");
  const Result r = run_probe({"-q", "--stats", stats}, {"fork", "10"}, "fork");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("child_status"), 0);
  EXPECT_EQ(r.num("received"), 30) << r.out;
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 2U) << slurp(stats);
  EXPECT_NE(lines[0]["pid"], lines[1]["pid"]);
  std::uint64_t total = 0;
  for (const auto& j : lines) {
    expect_reconciles(j);
    total += j["account"]["sent"].get<std::uint64_t>();
  }
  EXPECT_EQ(total, 30U);
  ::unlink(stats.c_str());
}

TEST(RunLifecycle, ExecDrainsAndReportsTheImageBeforeIt) {
  const std::string stats = temp_path("exec.json");
  const Result r = run_probe({"-q", "--stats", stats}, {"exec"}, "exec");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("received"), 3) << r.out;  // the image after exec (gso)
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 2U) << slurp(stats);
  EXPECT_EQ(lines[0]["why"], "exec");
  EXPECT_EQ(lines[0]["pid"], lines[1]["pid"]);
  expect_reconciles(lines[0]);
  EXPECT_EQ(lines[0]["account"]["sent"], 10);
  EXPECT_EQ(lines[1]["why"], "exit");
  expect_reconciles(lines[1]);
  ::unlink(stats.c_str());
}

TEST(RunThreads, ManyThreadsShareTheTableAndThePacer) {
  const std::string stats = temp_path("threads.json");
  const Result r = run_probe({"-q", "--stats", stats}, {"threads"}, "threads");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("received"), 4 * 70) << r.out;
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 1U);
  expect_reconciles(lines[0]);
  EXPECT_EQ(lines[0]["account"]["sent"], 4 * 70);
  ::unlink(stats.c_str());
}

TEST(RunLifecycle, Dup2OverASocketKeepsItsQueuedDatagrams) {
  const Result r = run_probe({"-q"}, {"dup2", "10"}, "dup2");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("write_after_dup2"), 10);  // the number now names /dev/null
  EXPECT_EQ(r.num("received"), 12) << r.out;
}

TEST(RunRobustness, MalformedAndUnusualSendsGetTheKernelsAnswer) {
  Child native({RUN_PROBE, "cmsg"}, "cmsg_native");
  const Result k = native.wait();
  const Result r = run_probe({"-q"}, {"cmsg"}, "cmsg");
  ASSERT_EQ(k.status, 0) << k.out << k.err;
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_GE(k.kv.size(), 30U) << k.out;
  for (const auto& [name, value] : k.kv) EXPECT_EQ(r.str(name), value) << name;
  // The table exercises refusals, not just successes.
  EXPECT_EQ(k.str("no_destination"), "-1 EDESTADDRREQ");
  EXPECT_EQ(k.str("txtime_without_so_txtime"), "-1 EINVAL");
  EXPECT_EQ(r.str("rate32_readback"), "5000");
}

TEST(RunSignals, SigtermMidRunLeavesAnAccountThatReconciles) {
  const std::string stats = temp_path("term.json");
  Child c(under_ufq({"-q", "--stats", stats, "--stats-signal", "USR1", "--drain", "100ms"}, {"forever", "20000"}),
          "term");
  ASSERT_TRUE(c.wait_for_output("ready=1", std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(c.pid(), SIGUSR1);  // a report while running
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(c.pid(), SIGTERM);
  const Result r = c.wait();
  EXPECT_EQ(r.status, -SIGTERM) << r.err;  // still killed by the signal, after the account
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 2U) << slurp(stats);
  EXPECT_FALSE(lines[0]["final"].get<bool>());
  EXPECT_EQ(lines[1]["why"], "SIGTERM");
  expect_reconciles(lines[1]);
  EXPECT_GT(lines[1]["account"]["handed_over"].get<std::uint64_t>(), 10U);
  EXPECT_GT(lines[1]["account"]["sent"].get<std::uint64_t>(), 5U);
  ::unlink(stats.c_str());
}

TEST(RunSendmmsg, ABurstIsHandedOverWholeAndARefusedFirstMessageGetsTheKernelsErrno) {
  const Result r = run_probe({"-q", "flow_limit", "20"}, {"mmsg"}, "mmsg");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("sendmmsg"), 64);  // blocks at flow_limit in the middle, then goes on
  EXPECT_EQ(r.num("msg_len"), 500);
  EXPECT_EQ(r.str("sendmmsg_bad"), "-1 EINVAL");
  EXPECT_EQ(r.num("received"), 64) << r.out;
}

TEST(RunEcn, CeThresholdMarksTheEctSocketsDatagramsOnly) {
  // Every datagram leaves more than 1 us after it was due (a wake-up takes
  // longer), so fq marks the ECT ones; the not-ECT socket's never.
  const Result marked = run_probe({"-q", "ce_threshold", "1us"}, {"ecn"}, "ecn_marked");
  ASSERT_EQ(marked.status, 0) << marked.out << marked.err;
  EXPECT_GE(marked.num("ce"), 20) << marked.out;
  EXPECT_EQ(marked.num("ce") + marked.num("ect0"), 40) << marked.out;
  EXPECT_EQ(marked.num("not_ect"), 40) << marked.out;
  const Result plain = run_probe({"-q"}, {"ecn"}, "ecn_plain");
  ASSERT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_EQ(plain.num("ce"), 0) << plain.out;
  EXPECT_EQ(plain.num("ect0"), 40) << plain.out;
}

TEST(RunTxtime, ScmTxtimeDeparturesAreKept) {
  const Result r = run_probe({"-q"}, {"txtime"}, "txtime");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_GT(r.num("earliest_ms"), -1.0) << r.out;  // none leaves early (clock reads aside)
  EXPECT_LT(r.num("latest_ms"), 50.0) << r.out;
}

TEST(RunGso, AUdpSegmentTrainIsChargedAsItsSegments) {
  const std::string stats = temp_path("gso.json");
  const Result r = run_probe({"-q", "--stats", stats}, {"gso"}, "gso");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.num("sendmsg"), 3000);
  EXPECT_EQ(r.num("received"), 3);
  const auto lines = stats_lines(stats);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0]["qdisc"]["packets"], 3);
  ::unlink(stats.c_str());
}

TEST(RunCli, InvalidFqOptionsAreRefusedBeforeExecWithTheValueAndRange) {
  Child c({UFQ_BINARY, "run", "flow_limit", "99999999999", "--", "/bin/true"}, "badopt");
  const Result r = c.wait();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("flow_limit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("99999999999"), std::string::npos) << r.err;
}

TEST(RunCli, StaticBinariesAreSaidOnce) {
  const char* candidates[] = {"/sbin/ldconfig", "/usr/sbin/ldconfig"};
  for (const char* p : candidates) {
    if (::access(p, X_OK) != 0) continue;
    Child c({UFQ_BINARY, "run", "--", p, "--version"}, "static");
    const Result r = c.wait();
    EXPECT_NE(r.err.find("statically linked"), std::string::npos) << r.err;
    return;
  }
  GTEST_SKIP() << "no static binary found";
}

TEST(RunCli, ExitReportIsATcBlockOnStderr) {
  const Result r = run_probe({"maxrate", "1mbit"}, {"gso"}, "report");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("qdisc fq 8001: dev ufq-run root"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("maxrate 1Mbit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" Sent 3126 bytes 3 pkt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("balanced"), std::string::npos) << r.err;
}

}  // namespace
