// `ufq sim` from the command line: byte-identical output for a seed, the JSON
// keys, --compare, --plot, and refusals (stderr, exit 2, nothing on stdout).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/cli_runner.hpp"

namespace {

using ufq::testing::run_ufq;

constexpr const char* kSmall = "sim -q --flows 50 --rate 50000 --duration 1s --interval 500ms --queues 2 --cpus 4";

TEST(CliSim, SameArgumentsSameBytes) {
  const auto a = run_ufq(kSmall);
  const auto b = run_ufq(kSmall);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("   time        in"), std::string::npos);
  EXPECT_NE(a.out.find("interrupts/s:"), std::string::npos);
  const auto c = run_ufq(std::string(kSmall) + " --seed 7");
  EXPECT_NE(a.out, c.out);
}

TEST(CliSim, JsonHasTheDocumentedKeys) {
  const auto r = run_ufq(std::string(kSmall) + " --json fq timer_slack 20us");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"pps", "interrupts_per_s", "timer_interrupts_per_s", "mean_batch", "cpu_sys_pct",
                        "flow_rate_error_max", "lateness_ns", "packets_sent", "packets_dropped", "qdisc"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"p50", "p99", "max"}) EXPECT_TRUE(j["lateness_ns"].contains(k)) << k;
  EXPECT_EQ(j["fq"]["timer_slack"], 20000);
  EXPECT_TRUE(j["qdisc"].contains("throttled"));
  EXPECT_GT(j["packets_sent"].get<double>(), 40000);
}

TEST(CliSim, CompareGivesOneObjectPerValue) {
  const auto r = run_ufq(std::string(kSmall) + " --json --compare timer_slack=0,10us,50us");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["label"], "timer_slack=0");
  EXPECT_EQ(j[2]["fq"]["timer_slack"], 50000);
  EXPECT_GT(j[0]["timer_interrupts_per_s"].get<double>(), j[1]["timer_interrupts_per_s"].get<double>());
  const auto t = run_ufq(std::string(kSmall) + " --compare timer_slack=0,10us");
  ASSERT_EQ(t.status, 0);
  EXPECT_NE(t.out.find("ratio"), std::string::npos);
}

TEST(CliSim, PlotsArePngAndSvgFiles) {
  const std::string dir = ::testing::TempDir() + "ufq_plot_" + std::to_string(::getpid());
  const auto r = run_ufq(std::string(kSmall) + " --compare timer_slack=0,10us --plot '" + dir + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* plot : {"interrupts", "lateness_cdf", "batch", "sweep"})
    for (const char* ext : {".png", ".svg"}) {
      const auto p = std::filesystem::path(dir) / (std::string(plot) + ext);
      ASSERT_TRUE(std::filesystem::exists(p)) << p;
      EXPECT_GT(std::filesystem::file_size(p), 1000u) << p;
    }
  // The swept value is the x coordinate (us), not a category index.
  const std::string sweep = ufq::testing::slurp(dir + "/sweep.dat");
  EXPECT_NE(sweep.find("\n0 \"0\" "), std::string::npos) << sweep;
  EXPECT_NE(sweep.find("\n10 \"10us\" "), std::string::npos) << sweep;
  std::filesystem::remove_all(dir);
}

// Values spanning decades go on a log axis, 0 one decade left of the smallest.
TEST(CliSim, SweepOverDecadesIsLogarithmic) {
  const std::string dir = ::testing::TempDir() + "ufq_plot_log_" + std::to_string(::getpid());
  const auto r = run_ufq(std::string(kSmall) + " --compare timer_slack=0,1us,1ms --plot '" + dir + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string sweep = ufq::testing::slurp(dir + "/sweep.dat");
  EXPECT_NE(sweep.find("\n0.1 \"0\" "), std::string::npos) << sweep;
  EXPECT_NE(sweep.find("\n1000 \"1ms\" "), std::string::npos) << sweep;
  const std::string script = ufq::testing::slurp(dir + "/plots.gp");
  EXPECT_NE(script.find("set logscale x\nset xrange [*:*] noextend"), std::string::npos);
  EXPECT_NE(script.find("set xtics add ('0' 0.1)"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// gnuplot is started without a shell and in the plot directory: a directory
// name with spaces, `$(...)` and backquotes is only a name.
TEST(CliSim, PlotDirectoryNameIsNeverRunByAShell) {
  const std::string base = ::testing::TempDir() + "ufq_plot_names_" + std::to_string(::getpid());
  std::filesystem::create_directories(base);
  const std::string dir = base + "/a b $(touch injected) `touch injected2` ; touch injected3";
  const auto direct = run_ufq(std::string(kSmall) + " --compare timer_slack=0,10us --plot '" + dir + "'");
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "sweep.png"));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "sweep.svg"));
  for (const char* f : {"injected", "injected2", "injected3"}) {
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(base) / f)) << f;
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / f)) << f;
    EXPECT_FALSE(std::filesystem::exists(f)) << f;
  }
  std::filesystem::remove_all(base);
}

TEST(CliSim, RefusesBadArguments) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"sim --flows 0", "--flows"}, Case{"sim --traffic nope", "--traffic"},
                        Case{"sim --duration -1s", "--duration"}, Case{"sim --duration 5h", "--duration"},
                        Case{"sim --rate 0", "--rate"}, Case{"sim --packet-size 10", "--packet-size"},
                        Case{"sim --queues 4 --cpus 2", "--cpus"}, Case{"sim --compare timer_slack", "--compare"},
                        Case{"sim fq quantum 0", "quantum"}, Case{"sim fq bogus 1", "bogus"},
                        Case{"sim --traffic pcap", "--pcap"}, Case{"sim --flows 10000000 --inflight 1000", "memory"},
                        Case{"sim notfq", "notfq"}}) {
    const auto r = run_ufq(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << " -> " << r.err;
  }
}

constexpr const char* kChurn =
    "sim -q --traffic churn --flows 2000 --rate 4000 --flow-lifetime 2s --inflight 1 --duration 10s "
    "--interval 2s --queues 2 --cpus 4 --compat latest";

TEST(CliSim, SoakReportsFlowsAndBooksDeterministically) {
  const auto a = run_ufq(std::string(kChurn) + " --soak");
  const auto b = run_ufq(std::string(kChurn) + " --soak");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("fq_flows"), std::string::npos);
  EXPECT_NE(a.out.find("books balanced at 5 of 5 samples"), std::string::npos) << a.out;
  EXPECT_EQ(a.out.find("rss_MB"), std::string::npos);  // memory only when asked

  const auto j = nlohmann::json::parse(run_ufq(std::string(kChurn) + " --json").out);
  EXPECT_EQ(j["workload"]["traffic"], "churn");
  EXPECT_EQ(j["workload"]["flow_lifetime_s"], 2.0);
  EXPECT_GT(j["flows_created"].get<double>(), 2000 + 4 * 1000);
  EXPECT_GT(j["flows_collected"].get<double>(), 0);
  EXPECT_TRUE(j["reconciled_every_sample"].get<bool>());
  EXPECT_FALSE(j.contains("peak_rss_kb"));
  for (const char* k : {"fq_flows", "inactive_flows", "throttled_flows", "flows_created", "gc_flows", "offered",
                        "dequeued", "drops", "purged", "qlen", "reconciled"})
    EXPECT_TRUE(j["samples"][0].contains(k)) << k;
  EXPECT_FALSE(j["samples"][0].contains("rss_kb"));
}

TEST(CliSim, RssIsReportedWhenAsked) {
  const auto r = run_ufq(std::string(kChurn) + " --json --rss");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double peak = j["peak_rss_kb"].get<double>();
  EXPECT_GT(peak, 100);
  for (const auto& s : j["samples"]) {
    EXPECT_GT(s["rss_kb"].get<double>(), 100);
    EXPECT_LE(s["rss_kb"].get<double>(), peak);
  }
  const auto t = run_ufq(std::string(kChurn) + " --rss");
  EXPECT_NE(t.out.find("rss_MB"), std::string::npos);
  EXPECT_NE(t.out.find("peak RSS"), std::string::npos);
}

TEST(CliSim, RefusesBadFlowLifetimes) {
  for (const char* v : {"0", "500us", "-1s", "86401s", "soon"}) {
    const auto r = run_ufq(std::string("sim --traffic churn --flow-lifetime ") + v);
    EXPECT_EQ(r.status, 2) << v;
    EXPECT_EQ(r.out, "") << v;
    EXPECT_NE(r.err.find("--flow-lifetime \"" + std::string(v) + "\""), std::string::npos) << v << " -> " << r.err;
    EXPECT_NE(r.err.find("1ms to 86400s"), std::string::npos) << r.err;
  }
}

}  // namespace
