// The `ufq` command: output and exit codes (errors: stderr, exit 2, nothing on stdout).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/cli_runner.hpp"

namespace {

using ufq::testing::Result;
using ufq::testing::temp_path;

Result ufq(const std::string& args) { return ufq::testing::run_ufq(args); }

void expect_error(const std::string& args, const std::string& message_part) {
  const Result r = ufq(args);
  EXPECT_EQ(r.status, 2) << args;
  EXPECT_EQ(r.out, "") << args;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << args << " -> " << r.err;
}

constexpr const char* kDefaults =
    "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 bands 3 priomap 1 2 2 2 1 2 0 0 1 "
    "1 1 1 1 1 1 1 weights 589824 196608 65536 quantum 3028b initial_quantum 15140b "
    "low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop "
    "offload_horizon 0us \n";

TEST(Cli, ShowDefaults) {
  const Result r = ufq("show fq");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, kDefaults);
  EXPECT_EQ(r.err, "");
}

TEST(Cli, ShowCompat57) {
  const Result r = ufq("show --compat 5.7 fq");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 3028b "
            "initial_quantum 15140b low_rate_threshold 550Kbit refill_delay 40ms timer_slack "
            "10us \n");
}

TEST(Cli, ShowOptions) {
  const Result r = ufq("show --hz 250 fq limit 010 quantum 9000 maxrate 1mbps refill_delay 1ms");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("limit 8p "), std::string::npos);
  EXPECT_NE(r.out.find("quantum 9000b "), std::string::npos);
  EXPECT_NE(r.out.find("maxrate 8Mbit "), std::string::npos);
  EXPECT_NE(r.out.find("refill_delay 4ms "), std::string::npos);
  EXPECT_NE(ufq("show --hz 1000 fq refill_delay 1ms").out.find("refill_delay 1ms "),
            std::string::npos);
}

TEST(Cli, WordsAfterFqAreVerbatim) {
  // "-j" after fq belongs to the fq parser, which does not know it.
  expect_error("show fq -j", "What is \"-j\"?");
  expect_error("show fq limit -1", "Illegal \"limit\"");
  expect_error("show fq --help", "What is \"--help\"?");
}

TEST(Cli, Json) {
  const Result r = ufq("show -j fq nopacing");
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("pacing"), false);
  EXPECT_EQ(j.at("priomap ").size(), 16U);
  const Result full = ufq("show -j -s fq");
  EXPECT_EQ(full.status, 0);
  EXPECT_EQ(full.out.rfind("[{\"kind\":\"fq\",\"handle\":\"8001:\",\"root\":true,\"refcnt\":2,", 0),
            0U);
  EXPECT_TRUE(nlohmann::json::accept(full.out));
}

TEST(Cli, QdiscAndStats) {
  Result r = ufq("show --qdisc fq");
  EXPECT_EQ(r.out, std::string("qdisc fq 8001: root refcnt 2 ") + kDefaults);
  r = ufq("show -s fq");
  EXPECT_EQ(r.out, std::string("qdisc fq 8001: root refcnt 2 ") + kDefaults +
                       " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
                       " backlog 0b 0p requeues 0\n"
                       "  flows 0 (inactive 0 throttled 0) band0_pkts 0 band1_pkts 0 band2_pkts 0\n"
                       "  gc 0 highprio 0 throttled 0\n");
}

TEST(Cli, Args) {
  const Result r = ufq("show --args fq limit 0x10 maxrate 1234568bit horizon_cap");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "limit 16 maxrate 1234568bit horizon_cap\n");
  EXPECT_EQ(ufq("show --args fq").out, "\n");
  expect_error("show --args -j fq", "--args");
}

TEST(Cli, Mtu) {
  const Result r = ufq("show --mtu 9000 fq");
  EXPECT_NE(r.out.find("quantum 18028b initial_quantum 90140b "), std::string::npos) << r.out;
  expect_error("show --mtu 10 fq", "mtu");
}

TEST(Cli, LinkSpeedAndOffload) {
  expect_error("show fq maxrate 10%", "link speed");
  Result r = ufq("show --link-speed 10gbit fq maxrate 10%");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("maxrate 1Gbit "), std::string::npos);
  expect_error("show --link-speed fast fq", "--link-speed");
  expect_error("show fq offload_horizon 100us", "offload_horizon");
  r = ufq("show --max-offload-horizon 1ms fq offload_horizon 100us");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("offload_horizon 100us "), std::string::npos);
}

TEST(Cli, Notes) {
  const Result r = ufq("show --compat 5.7 fq horizon 1s defrate 1mbit");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("horizon"), std::string::npos);
  EXPECT_NE(r.err.find("note: \"horizon\" is ignored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("defrate"), std::string::npos);
}

TEST(Cli, Refusals) {
  expect_error("show fq quantum 3028b", "Illegal \"quantum\"");
  expect_error("show fq quantum 0", "quantum");
  expect_error("show fq quantum 1048577", "quantum");
  expect_error("show fq buckets 1", "buckets");
  expect_error("show fq initial_quantum 0x80000000", "initial_quantum");
  expect_error("show fq weights 1 2 3", "too small");
  expect_error("show fq bogus", "What is \"bogus\"?");
  expect_error("show fq timer_slack 5s", "out of range");
  expect_error("show --hz 0 fq", "hz");
  expect_error("show --compat 4.19 fq", "compat");
  expect_error("show", "nothing to show");
  expect_error("show fq_codel", "expected `fq");
  expect_error("show --bogus fq", "--bogus");
  expect_error("", "subcommand");
  expect_error("frobnicate", "subcommand");
}

TEST(Cli, ConfigFile) {
  const std::string path = temp_path("config.json");
  {
    std::ofstream f(path);
    f << R"({"limit": 77, "pacing": false, "priomap ": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]})";
  }
  Result r = ufq("show --config '" + path + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("limit 77p "), std::string::npos);
  EXPECT_NE(r.out.find("nopacing bands 3 priomap 0 0 0 0"), std::string::npos);
  // Feeding tc -j output back.
  const Result j = ufq("show -j --qdisc --config '" + path + "'");
  EXPECT_EQ(j.status, 0) << j.err;
  const std::string tc_path = temp_path("tc.json");
  {
    std::ofstream f(tc_path);
    f << j.out;
  }
  EXPECT_EQ(ufq("show --config '" + tc_path + "'").out, r.out);
  {
    std::ofstream f(path);
    f << R"({"limit": 77, "quantum": "big"})";
  }
  expect_error("show --config '" + path + "'", "\"quantum\": \"big\"");
  expect_error("show --config '" + path + ".missing'", "cannot open");
  expect_error("show --config '" + tc_path + "' fq", "not both");
  std::remove(path.c_str());
  std::remove(tc_path.c_str());
}

TEST(Cli, Help) {
  const Result r = ufq("show --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--compat"), std::string::npos);
  EXPECT_NE(r.out.find("flow_limit PACKETS"), std::string::npos);
}

}  // namespace
