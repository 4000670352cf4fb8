// The real `ufq pace` binary stopped by SIGTERM in the middle of a run: exit
// status 0 (a requested stop is a normal end), the summary printed, and the
// accounting it prints (JSON and text) reconciles term by term.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "../support/cli_runner.hpp"

namespace {

std::uint64_t u(const nlohmann::json& j) { return j.get<std::uint64_t>(); }

}  // namespace

TEST(CliPaceFaults, SigtermMidRunExitsZeroWithBalancedAccounting) {
  const std::string out_file = ufq::testing::temp_path("sigterm_out");
  const std::string err_file = ufq::testing::temp_path("sigterm_err");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!std::freopen(out_file.c_str(), "w", stdout) || !std::freopen(err_file.c_str(), "w", stderr))
      ::_exit(126);
    ::execl(UFQ_BINARY, UFQ_BINARY, "pace", "--flows", "50", "--rate", "5000", "--duration", "120",
            "--interval", "100ms", "--no-probe", "--json", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The run announces itself on stderr (--json: human text goes there) after
  // installing its signal handlers; then wait for the first interval line so
  // that packets are in flight. Generous bound; no timing is asserted.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool running = false;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string err = ufq::testing::slurp(err_file);
    const auto header_end = err.find("pacer-cpu\n");  // the interval header's last word
    if (header_end != std::string::npos && err.find('\n', header_end + 10) != std::string::npos) {
      running = true;
      break;
    }
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) break;  // died early: reported below
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGTERM);
  int st = 0;
  ::waitpid(pid, &st, 0);
  const std::string out = ufq::testing::slurp(out_file);
  const std::string err = ufq::testing::slurp(err_file);
  std::remove(out_file.c_str());
  std::remove(err_file.c_str());
  ASSERT_TRUE(running) << err;
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  EXPECT_EQ(WEXITSTATUS(st), 0) << err;

  // The text summary (stderr with --json) states the identity.
  EXPECT_NE(err.find("(stopped by signal)"), std::string::npos) << err;
  EXPECT_NE(err.find("accounting: produced "), std::string::npos) << err;
  EXPECT_NE(err.find(": balanced\n"), std::string::npos) << err;

  const auto all = nlohmann::json::parse(out);
  ASSERT_TRUE(all.is_array());
  ASSERT_EQ(all.size(), 1U);
  const auto& run = all[0];
  EXPECT_TRUE(run["stopped_by_signal"].get<bool>());
  const auto& a = run["accounting"];
  const auto& d = a["dropped"];
  const auto& f = a["failed"];
  const auto& un = a["unsent"];
  EXPECT_EQ(u(d["total"]), u(d["limit"]) + u(d["flow_limit"]) + u(d["horizon"]));
  std::uint64_t by_errno = 0;
  for (const auto& [name, n] : f["by_errno"].items()) by_errno += u(n);
  EXPECT_EQ(u(f["total"]), by_errno);
  EXPECT_EQ(u(un["total"]), u(un["producer"]) + u(un["ring"]) + u(un["scheduler"]) + u(un["egress"]));
  EXPECT_EQ(u(a["produced"]), u(a["sent"]) + u(d["total"]) + u(f["total"]) + u(un["total"]))
      << a.dump();
  EXPECT_TRUE(a["balanced"].get<bool>());
  // The same packets as the older top-level keys.
  EXPECT_EQ(u(a["sent"]), u(run["packets_sent"]));
  EXPECT_EQ(u(a["produced"]), u(run["packets_generated"]) + u(un["producer"]));
  EXPECT_EQ(u(f["total"]), u(run["packets_failed"]));
  EXPECT_GT(u(a["sent"]), 0U);
  EXPECT_EQ(u(run["packets_sent"]), u(run["packets_received"]) + u(run["packets_lost"]));
}
