// `ufq sim --traffic csv`: departure times from a CSV file (the model added by
// one file, sim/src/traffic/csv.cpp) end to end, and its bad inputs refused
// by name: exit 2, nothing on stdout, the option, the file and the line.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/cli_runner.hpp"

namespace {

using ufq::testing::run_ufq;

constexpr const char* kSim = "sim -q --traffic csv --duration 50ms --interval 10ms --queues 2 --cpus 2";

class CliSimCsv : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = ufq::testing::temp_path(name);
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& f : files_) std::remove(f.c_str());
  }
  std::vector<std::string> files_;
};

// Three flows, 1000 packets, each flow's packets 30 us apart: every packet is
// sent, none early, the flows named by the file's flow column.
TEST_F(CliSimCsv, ReplaysTheFileEndToEnd) {
  std::string text = "# a comment\ntime_ns,flow,bytes\n";
  for (int i = 0; i < 1000; ++i)
    text += std::to_string(1'000'000 + i * 10'000) + "," + std::to_string(100 + i % 3) + "," +
            std::to_string(i % 2 ? 1514 : 200) + "\n";
  const std::string path = write("trace.csv", text);
  const auto r = run_ufq(std::string(kSim) + " --json --csv '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"]["traffic"], "csv");
  EXPECT_EQ(j["workload"]["flows"], 3);
  EXPECT_EQ(j["workload"]["csv"], path);
  EXPECT_EQ(j["packets_offered"], 1000);
  EXPECT_EQ(j["packets_sent"], 1000);
  EXPECT_EQ(j["packets_dropped"], 0);
  EXPECT_EQ(j["qdisc"]["bytes"], 500 * 1514 + 500 * 200);
  // Same file, same bytes; the text output names the model.
  const auto t1 = run_ufq(std::string(kSim) + " --csv '" + path + "'");
  const auto t2 = run_ufq(std::string(kSim) + " --csv '" + path + "'");
  ASSERT_EQ(t1.status, 0) << t1.err;
  EXPECT_EQ(t1.out, t2.out);
  EXPECT_NE(t1.out.find("ufq sim: 3 csv flows"), std::string::npos) << t1.out;
}

// Without the bytes column every packet has --packet-size bytes.
TEST_F(CliSimCsv, BytesDefaultToPacketSize) {
  const std::string path = write("nobytes.csv", "1000,1\n2000,1\n3000,2\n");
  const auto r = run_ufq(std::string(kSim) + " --json --packet-size 300 --csv '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["qdisc"]["bytes"], 900);
}

TEST_F(CliSimCsv, BadInputsAreRefusedByName) {
  struct Case {
    std::string name, text;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {"unsorted.csv", "1000,1\n3000,1\n2000,2\n", {"line 3", "non-decreasing", "2000 after 3000"}},
      {"negative-time.csv", "1000,1\n-5,1\n", {"line 2", "time_ns", "\"-5\""}},
      {"negative-flow.csv", "1000,-1\n", {"line 1", "flow", "\"-1\""}},
      {"negative-bytes.csv", "1000,1,-100\n", {"line 1", "bytes", "\"-100\""}},
      {"word-time.csv", "time_ns,flow\nabc,1\n", {"line 2", "time_ns", "\"abc\""}},
      {"word-flow.csv", "1000,x\n", {"line 1", "flow", "\"x\""}},
      {"fraction.csv", "1000.5,1\n", {"line 1", "time_ns", "\"1000.5\""}},
      {"empty-field.csv", "1000,,100\n", {"line 1", "flow", "\"\""}},
      {"small-bytes.csv", "1000,1,10\n", {"line 1", "bytes 64..65535"}},
      {"one-field.csv", "1000\n", {"line 1", "time_ns,flow[,bytes]"}},
      {"four-fields.csv", "1000,1,100,5\n", {"line 1", "4 fields"}},
      {"no-packets.csv", "# nothing\ntime_ns,flow\n", {"at least one packet"}},
  };
  for (const Case& c : cases) {
    const std::string path = write(c.name, c.text);
    const auto r = run_ufq(std::string(kSim) + " --csv '" + path + "'");
    EXPECT_EQ(r.status, 2) << c.name;
    EXPECT_EQ(r.out, "") << c.name;
    EXPECT_NE(r.err.find("--csv " + path), std::string::npos) << c.name << ": " << r.err;
    for (const auto& s : c.says) EXPECT_NE(r.err.find(s), std::string::npos) << c.name << ": " << s << "\n" << r.err;
  }
  // A missing file, a directory, a device, no file at all.
  for (const std::string& p : {std::string("/nonexistent/trace.csv"), std::string("/"), std::string("/dev/zero")}) {
    const auto r = run_ufq(std::string(kSim) + " --csv '" + p + "'");
    EXPECT_EQ(r.status, 2) << p;
    EXPECT_NE(r.err.find("--csv " + p + ":"), std::string::npos) << r.err;
  }
  const auto missing = run_ufq(kSim);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--csv"), std::string::npos) << missing.err;
}

}  // namespace
