// `tc -s qdisc show` for mq with fq children (format_mq_qdisc) against what
// Linux 6.1 and iproute2 6.1 printed (tests/rt/data/kernel-mq-6.1.txt, the
// "default_qdisc=fq" case: three fq children with handle 0:, one of which
// sent 4 packets, 364 bytes, over 2 flows).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ufq/tc/qdisc_print.hpp"

using namespace ufq;

namespace {

std::string recorded() {
  std::ifstream in(std::string(UFQ_RT_TEST_DATA) + "/kernel-mq-6.1.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines after `marker` up to the next "$ " line.
std::vector<std::string> section(const std::string& text, const std::string& marker, std::size_t nth = 0) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> out;
  std::size_t seen = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("$ ", 0) == 0) {
      if (inside) break;
      if (line.find(marker) != std::string::npos && seen++ == nth) inside = true;
      continue;
    }
    if (inside) out.push_back(line);
  }
  return out;
}

std::vector<std::string> lines(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct Mq {
  std::vector<FqConfig> cfgs{3};
  std::vector<FqStats> stats{3};
  Mq() {
    stats[0].bytes = 364;
    stats[0].packets = 4;
    stats[0].flows = 2;
    stats[0].inactive_flows = 1;
  }
};

}  // namespace

TEST(MqPrint, RootBlockAndChildrenMatchTheKernel) {
  const auto kernel = section(recorded(), "tc -s qdisc show dev d0", 1);  // the default_qdisc=fq case
  ASSERT_GE(kernel.size(), 3U + 3 * 5);
  Mq m;
  const auto ours = lines(tc::format_mq_qdisc(m.cfgs, m.stats));
  ASSERT_GE(ours.size(), 3U + 3 * 5);
  // The mq block: exactly.
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(ours[i], kernel[i]);
  // Children: the kernel prints them in hash order; compare per parent. The
  // header up to the options, the Sent, backlog and flows lines (6.1 has no
  // band counters, which this printer adds as iproute2 >= 6.8 does).
  auto blocks = [](const std::vector<std::string>& ls) {
    std::map<std::string, std::vector<std::string>> b;
    std::string cur;
    for (std::size_t i = 3; i < ls.size(); ++i) {
      if (ls[i].rfind("qdisc fq ", 0) == 0) {
        cur = ls[i].substr(0, ls[i].find(" limit "));
        b[cur].push_back(cur);
      } else if (!cur.empty()) {
        b[cur].push_back(ls[i]);
      }
    }
    return b;
  };
  const auto kb = blocks(kernel), ob = blocks(ours);
  ASSERT_EQ(kb.size(), 3U);
  ASSERT_EQ(ob.size(), 3U);
  for (const auto& [head, kl] : kb) {
    ASSERT_TRUE(ob.count(head)) << "no child \"" << head << "\" in ours";
    const auto& ol = ob.at(head);
    EXPECT_EQ(ol[1], kl[1]) << head;
    EXPECT_EQ(ol[2], kl[2]) << head;
    EXPECT_EQ(ol[3].substr(0, kl[3].size()), kl[3]) << head;
  }
  // In queue order.
  EXPECT_EQ(ours[3].substr(0, 23), "qdisc fq 0: parent 1:1 ");
}

TEST(MqPrint, JsonRootObjectMatchesTheKernel) {
  const auto kernel = section(recorded(), "tc -j -s qdisc show dev d0", 1);
  ASSERT_FALSE(kernel.empty());
  const std::string k = kernel[0];
  const std::string kroot = k.substr(1, k.find("},{") + 1 - 1);  // the first object
  Mq m;
  const std::string ours = tc::format_mq_qdisc_json(m.cfgs, m.stats);
  ASSERT_EQ(ours.front(), '[');
  ASSERT_EQ(ours.back(), ']');
  EXPECT_EQ(ours.substr(1, kroot.size()), kroot);
  // Each child names its parent and carries its own counters.
  for (const char* parent : {"\"parent\":\"1:1\"", "\"parent\":\"1:2\"", "\"parent\":\"1:3\""}) {
    EXPECT_NE(k.find(parent), std::string::npos);
    EXPECT_NE(ours.find(parent), std::string::npos);
  }
  EXPECT_NE(ours.find("{\"kind\":\"fq\",\"handle\":\"0:\",\"parent\":\"1:1\""), std::string::npos);
}
