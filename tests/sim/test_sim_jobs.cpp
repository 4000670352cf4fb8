// `ufq sim --jobs N`: a --compare sweep on N threads prints the same bytes as
// one run after another (docs/simulator.md "A sweep on several cores"),
// reports the first failure in sweep order, and refuses bad N. Also the pieces
// under it: run_in_order (tools/ufq/sim_sweep.hpp) and the memory plan for
// runs at once (tools/ufq/sim_budget.hpp). The preset `tsan` runs these too.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/cli_runner.hpp"
#include "memory_budget.hpp"
#include "sim_budget.hpp"
#include "sim_sweep.hpp"

namespace {

using ufq::testing::run_ufq;

// Run 0 (no rate limit, 1 M packets/s) takes far longer than the others (about
// 1,000 packets/s each, all different): run in parallel they end in another
// order than the sweep's, which must not show.
constexpr const char* kSweep =
    "sim -q --duration 400ms --interval 100ms --compare maxrate=10gbit,8kbit,16kbit,24kbit,32kbit";

TEST(SimJobs, ThreeAtOnceIsOneAfterAnother) {
  for (const char* form : {" --tc-stats --soak", " --json"}) {
    const auto one = run_ufq(std::string(kSweep) + form + " --jobs 1");
    const auto three = run_ufq(std::string(kSweep) + form + " --jobs 3");
    ASSERT_EQ(one.status, 0) << form << one.err;
    ASSERT_EQ(three.status, 0) << form << three.err;
    EXPECT_EQ(three.out, one.out) << form;
    EXPECT_EQ(three.err, one.err) << form;
  }
}

// The default (every usable CPU) and more threads than runs: the same bytes too.
TEST(SimJobs, DefaultAndMoreThanRunsAreOneAfterAnother) {
  const std::string small = "sim -q --duration 200ms --interval 100ms --json --compare timer_slack=0,10us,1ms";
  const auto one = run_ufq(small + " --jobs 1");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(run_ufq(small).out, one.out);
  EXPECT_EQ(run_ufq(small + " --jobs 64").out, one.out);
}

// A failure that every run meets (the capture cannot be read) is reported once,
// as one run after another reports it, and nothing reaches stdout.
TEST(SimJobs, AFailingSweepSaysWhatTheSequentialOneSays) {
  const std::string bad =
      "sim -q --duration 10ms --traffic pcap --pcap /nonexistent-ufq.pcap --compare timer_slack=0,1us,2us,5us";
  const auto one = run_ufq(bad + " --jobs 1");
  const auto four = run_ufq(bad + " --jobs 4");
  EXPECT_EQ(one.status, 2);
  EXPECT_NE(one.err.find("/nonexistent-ufq.pcap"), std::string::npos) << one.err;
  EXPECT_EQ(four.status, one.status);
  EXPECT_EQ(four.err, one.err);
  EXPECT_EQ(four.out, "");
}

TEST(SimJobs, BadCountsAreRefused) {
  for (const char* n : {"0", "-1", "1025", "abc", "''", "1.5", "99999999999999999999", "2x"}) {
    const auto r = run_ufq(std::string("sim -q --duration 10ms --compare timer_slack=0,1us --jobs ") + n);
    EXPECT_EQ(r.status, 2) << n;
    EXPECT_EQ(r.out, "") << n;
    EXPECT_NE(r.err.find("--jobs"), std::string::npos) << n << ": " << r.err;
    EXPECT_NE(r.err.find("1..1024"), std::string::npos) << n << ": " << r.err;
  }
  // The ends of the range are accepted.
  for (const char* n : {"1", "1024"})
    EXPECT_EQ(run_ufq(std::string("sim -q --duration 10ms --compare timer_slack=0,1us --jobs ") + n).status, 0) << n;
}

// --rss and --event-trace need the runs one at a time: alone they get it, with
// an explicit --jobs above 1 the combination is refused naming both.
TEST(SimJobs, RssAndEventTraceRunOneAtATime) {
  const std::string trace = ufq::testing::temp_path("events.txt");
  for (const std::string& opt : {std::string("--rss"), "--event-trace '" + trace + "'"}) {
    const std::string base = "sim -q --duration 10ms --compare timer_slack=0,1us " + opt;
    EXPECT_EQ(run_ufq(base).status, 0) << opt;
    EXPECT_EQ(run_ufq(base + " --jobs 1").status, 0) << opt;
    const auto r = run_ufq(base + " --jobs 2");
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_EQ(r.out, "");
    const std::string name = opt.substr(0, opt.find(' '));
    EXPECT_NE(r.err.find("--jobs 2 with " + name), std::string::npos) << r.err;
  }
  std::remove(trace.c_str());
}

// ---------------------------------------------------------------- run_in_order

TEST(RunInOrder, RunsEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    std::vector<std::atomic<int>> calls(50);
    const auto errors = ufq::cli::run_in_order(calls.size(), threads, [&](std::size_t i) { ++calls[i]; });
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].load(), 1) << threads << " threads, index " << i;
      EXPECT_FALSE(errors[i]);
    }
  }
}

// One thread: a plain loop that stops at the first failure.
TEST(RunInOrder, OneThreadStopsAtTheFirstFailure) {
  std::vector<std::size_t> ran;
  const auto errors = ufq::cli::run_in_order(6, 1, [&](std::size_t i) {
    ran.push_back(i);
    if (i == 2 || i == 4) throw std::runtime_error("run " + std::to_string(i));
  });
  EXPECT_EQ(ran, (std::vector<std::size_t>{0, 1, 2}));
  ASSERT_TRUE(errors[2]);
  for (std::size_t i : {0, 1, 3, 4, 5}) EXPECT_FALSE(errors[i]) << i;
}

// Run 1 fails only after run 3 has failed: both are kept, so the caller finds
// run 1, the first in sweep order, as one run after another would have; every
// index below a failure ran.
TEST(RunInOrder, AnEarlierFailureThatEndsLaterIsKept) {
  std::mutex m;
  std::condition_variable cv;
  bool three_failed = false;
  std::set<std::size_t> started;
  const auto errors = ufq::cli::run_in_order(8, 3, [&](std::size_t i) {
    std::unique_lock<std::mutex> lock(m);
    started.insert(i);
    if (i == 3) {
      three_failed = true;
      cv.notify_all();
      throw std::runtime_error("run 3");
    }
    if (i == 1) {
      cv.wait(lock, [&] { return three_failed; });
      throw std::runtime_error("run 1");
    }
  });
  ASSERT_TRUE(errors[1]);
  ASSERT_TRUE(errors[3]);
  for (std::size_t i = 0; i <= 3; ++i) EXPECT_TRUE(started.count(i)) << i;
  for (std::size_t i : {0, 2, 4, 5, 6, 7}) EXPECT_FALSE(errors[i]) << i;
}

TEST(RunInOrder, UsableCpusIsInRange) {
  const unsigned n = ufq::cli::usable_cpus();
  EXPECT_GE(n, 1u);
  EXPECT_LE(n, ufq::cli::kMaxSimJobs);
}

// ---------------------------------------------------------------- the memory plan

// A sweep whose runs each need 2/5 of the memory budget fits two at a time, not three.
TEST(SimJobsPlan, RunsAtOnceAreCountedAndLowered) {
  ufq::sim::SimConfig c;
  c.duration = 1'000'000;  // 1 ms: few events
  c.interval = 1'000'000;
  c.queues = 1;
  c.inflight = 1;
  const double budget = static_cast<double>(ufq::cli::memory_budget_bytes());
  c.flows = static_cast<std::uint32_t>(std::min(0.4 * budget / (320 + 128), 4e9));
  if (0.4 * budget / (320 + 128) > 4e9) GTEST_SKIP() << "the memory budget is beyond what --flows reaches";
  const std::vector<ufq::sim::SimConfig> sweep(4, c);
  EXPECT_EQ(ufq::cli::check_sim_plan(c, 4, 1), "");
  EXPECT_EQ(ufq::cli::check_sim_plan(c, 4, 2), "");
  const std::string three = ufq::cli::check_sim_plan(c, 4, 3);
  EXPECT_NE(three.find("--jobs 3"), std::string::npos) << three;
  EXPECT_NE(three.find("memory"), std::string::npos) << three;
  EXPECT_EQ(ufq::cli::sim_runs_that_fit(sweep, 4), 2u);
  EXPECT_EQ(ufq::cli::sim_runs_that_fit(sweep, 2), 2u);
  EXPECT_EQ(ufq::cli::sim_runs_that_fit(sweep, 1), 1u);
  // Not even one fits: 1, and the plan for one says why.
  c.flows = static_cast<std::uint32_t>(std::min(1.2 * budget / (320 + 128), 4e9));
  if (1.2 * budget / (320 + 128) <= 4e9) {
    EXPECT_EQ(ufq::cli::sim_runs_that_fit(std::vector<ufq::sim::SimConfig>(4, c), 4), 1u);
    EXPECT_NE(ufq::cli::check_sim_plan(c, 4, 1), "");
  }
}

}  // namespace
