// `ufq sim` options that belong to one traffic model: each model runs with
// the options it reads, and refuses (exit 2, nothing on stdout, a message
// naming the option, its value and both models) one it would silently ignore.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../support/cli_runner.hpp"

namespace {

using ufq::testing::run_ufq;

// Short enough that an option wrongly accepted ends in a quick exit 0, not a hang.
constexpr const char* kTiny = "sim -q --duration 10ms --interval 10ms --queues 1 --cpus 1 --nic-rate 10mbit";

const std::vector<std::string> kModels = {"edt", "rate", "bulk", "maxrate", "onoff", "pcap", "churn", "csv"};

void put32(std::ofstream& out, std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); }
void put16(std::ofstream& out, std::uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); }

// A classic pcap (host byte order, Ethernet) of 4 UDP packets in 2 flows, 1 ms apart.
std::string write_capture() {
  const std::string path = ufq::testing::temp_path("traffic.pcap");
  std::ofstream out(path, std::ios::binary);
  put32(out, 0xa1b2c3d4);
  put16(out, 2);
  put16(out, 4);
  put32(out, 0);
  put32(out, 0);
  put32(out, 65535);
  put32(out, 1);  // DLT_EN10MB
  for (std::uint8_t i = 0; i < 4; ++i) {
    std::vector<std::uint8_t> frame(100, 0);
    frame[12] = 0x08;     // ethertype IPv4
    frame[14] = 0x45;     // version 4, 20-byte header
    frame[14 + 9] = 17;   // UDP
    frame[14 + 12] = 10;  // source 10.0.0.1
    frame[14 + 15] = 1;
    frame[14 + 16] = 10;  // destination 10.0.0.2
    frame[14 + 19] = 2;
    frame[34 + 1] = 1 + i % 2;  // source port 1 or 2: the two flows
    frame[34 + 3] = 9;
    put32(out, 1);
    put32(out, 1000u * i);
    put32(out, static_cast<std::uint32_t>(frame.size()));
    put32(out, static_cast<std::uint32_t>(frame.size()));
    out.write(reinterpret_cast<const char*>(frame.data()), static_cast<std::streamsize>(frame.size()));
  }
  return path;
}

class CliSimTraffic : public ::testing::Test {
 protected:
  void SetUp() override {
    capture_ = write_capture();
    csv_ = ufq::testing::temp_path("traffic.csv");
    std::ofstream(csv_) << "time_ns,flow,bytes\n1000000,7,100\n2000000,9,200\n3000000,7,100\n";
  }
  void TearDown() override {
    std::remove(capture_.c_str());
    std::remove(csv_.c_str());
  }

  // `ufq sim` for `model`: its own required options plus `extra`.
  ufq::testing::Result sim(const std::string& model, const std::string& extra) const {
    std::string args = std::string(kTiny) + " --traffic " + model;
    if (model == "pcap" && extra.find("--pcap") == std::string::npos) args += " --pcap '" + capture_ + "'";
    if (model == "csv" && extra.find("--csv") == std::string::npos) args += " --csv '" + csv_ + "'";
    return run_ufq(args + " " + extra);
  }

  std::string capture_, csv_;
};

TEST_F(CliSimTraffic, EachModelRunsWithTheOptionsItReads) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"edt", "--flows 10 --rate 1000 --packet-size 100"},
      {"rate", "--flows 10 --rate 1000 --packet-size 100"},
      {"maxrate", "--flows 10 --rate 1000 --packet-size 100"},
      {"bulk", "--flows 10 --packet-size 100"},
      {"onoff", "--flows 10 --rate 1000 --on 1ms --off 2ms"},
      {"churn", "--flows 10 --rate 1000 --flow-lifetime 1ms"},
      {"pcap", "--inflight 1"},
      {"csv", "--inflight 1 --packet-size 100"}};
  for (const auto& [model, extra] : runs) {
    const auto r = sim(model, extra);
    EXPECT_EQ(r.status, 0) << model << " " << extra << ": " << r.err;
    const std::string flows = model == "pcap" || model == "csv" ? "2" : "10";  // the traces hold two flows
    EXPECT_NE(r.out.find("ufq sim: " + flows + " " + model + " flows"), std::string::npos) << model << ": " << r.out;
  }
}

TEST_F(CliSimTraffic, OptionsOfAnotherModelAreRefused) {
  struct OnlyFor {
    std::string option, value, model;
  };
  const std::vector<OnlyFor> options = {{"--pcap", capture_, "pcap"},
                                        {"--csv", csv_, "csv"},
                                        {"--on", "1ms", "onoff"},
                                        {"--off", "1ms", "onoff"},
                                        {"--flow-lifetime", "1s", "churn"}};
  for (const auto& o : options)
    for (const auto& model : kModels) {
      if (model == o.model) continue;
      const auto r = sim(model, o.option + " '" + o.value + "'");
      const std::string says =
          o.option + " \"" + o.value + "\": only used with --traffic " + o.model + " (got --traffic " + model + ")";
      EXPECT_EQ(r.status, 2) << model << " " << o.option;
      EXPECT_EQ(r.out, "") << model << " " << o.option;
      EXPECT_NE(r.err.find(says), std::string::npos) << "expected: " << says << "\ngot: " << r.err;
    }
  // Without --traffic the model is edt.
  const auto r = run_ufq(std::string(kTiny) + " --pcap x.pcap");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--pcap \"x.pcap\": only used with --traffic pcap (got --traffic edt)"), std::string::npos)
      << r.err;
}

TEST_F(CliSimTraffic, OptionsAModelOverridesAreRefused) {
  struct Ignored {
    std::string model, option, value;
  };
  for (const auto& i : {Ignored{"pcap", "--flows", "10"}, Ignored{"pcap", "--rate", "1000"},
                        Ignored{"pcap", "--packet-size", "100"}, Ignored{"bulk", "--rate", "1000"},
                        Ignored{"csv", "--flows", "10"}, Ignored{"csv", "--rate", "1000"}}) {
    const auto r = sim(i.model, i.option + " " + i.value);
    const std::string says = i.option + " \"" + i.value + "\": not used with --traffic " + i.model + " (";
    EXPECT_EQ(r.status, 2) << i.model << " " << i.option;
    EXPECT_EQ(r.out, "") << i.model << " " << i.option;
    EXPECT_NE(r.err.find(says), std::string::npos) << "expected: " << says << "\ngot: " << r.err;
  }
}

}  // namespace
