// `ufq sim` byte for byte against recorded runs (tests/data/sim-golden): the
// simulator is deterministic, so a speed-up or a restructuring that changes
// any output line, for any traffic model, fails here. The cases and how to
// re-record them: tests/data/sim-golden/cases.txt and record.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/cli_runner.hpp"

namespace {

struct Case {
  std::string name, args;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << ": ufq " << c.args; }

std::vector<Case> cases() {
  std::ifstream in(std::string(UFQ_GOLDEN_DIR) + "/cases.txt");
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

class SimGolden : public ::testing::TestWithParam<Case> {};

TEST_P(SimGolden, ByteIdentical) {
  const Case& c = GetParam();
  if (c.name.rfind("full-", 0) == 0) {
    const char* full = std::getenv("UFQ_SIM_GOLDEN_FULL");
    if (!full || std::string(full) != "1") GTEST_SKIP() << "the main job itself: set UFQ_SIM_GOLDEN_FULL=1";
  }
  const std::string expected = ufq::testing::slurp(std::string(UFQ_GOLDEN_DIR) + "/" + c.name + ".out");
  ASSERT_FALSE(expected.empty()) << c.name << ".out missing";
  // The arguments name the capture relative to the data directory.
  std::string args = c.args;
  if (const auto at = args.find("trace.pcap"); at != std::string::npos)
    args.replace(at, 10, std::string("'") + UFQ_GOLDEN_DIR + "/trace.pcap'");
  const auto r = ufq::testing::run_ufq(args);
  ASSERT_EQ(r.status, 0) << c.name << ": " << r.err;
  EXPECT_EQ(r.out, expected) << c.name << ": output differs from " << c.name << ".out";
}

TEST(SimGoldenCases, AreRecorded) { EXPECT_GE(cases().size(), 12u) << UFQ_GOLDEN_DIR << "/cases.txt"; }

INSTANTIATE_TEST_SUITE_P(Recorded, SimGolden, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = i.param.name;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
