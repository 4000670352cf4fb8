// `ufq gaps`: the gap statistics on known arrivals, and the pcap reader end to
// end through the built tool on a file written here (no capture permission
// needed).
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gaps/gap_stats.hpp"

namespace {

using ufq::gaps::Datagram;
using ufq::gaps::GapStats;

TEST(GapStats, EvenArrivalsHaveOneGapAndTheirRate) {
  GapStats s;
  // 1000 datagrams of 1200 payload bytes every 96 us: 100 Mbit/s.
  for (std::uint64_t i = 0; i < 1000; ++i) s.add({1'000'000'000 + i * 96'000, 1200, 1228});
  EXPECT_EQ(s.datagrams(), 1000U);
  EXPECT_EQ(s.gaps().count(), 999U);
  EXPECT_EQ(s.span_ns(), 999U * 96'000U);
  EXPECT_NEAR(s.payload_rate_bps(), 100e6, 1.0);
  EXPECT_NEAR(s.ip_rate_bps(), 1228 * 8e9 / 96'000, 1.0);
  // Every quantile is the one gap (to the histogram's 1/64 bucket width, never above).
  for (double q : {0.01, 0.5, 0.99}) {
    EXPECT_LE(s.gaps().quantile(q), 96'000U);
    EXPECT_GT(s.gaps().quantile(q), 96'000U * 64 / 65);
  }
  EXPECT_EQ(s.burst_gaps(), 0U);
  EXPECT_EQ(s.runs(), 1000U);
  EXPECT_EQ(s.longest_run(), 1U);
}

TEST(GapStats, TimerBurstsCountAsBurstGapsAndRuns) {
  GapStats s;
  // A 1 ms timer sending 20 back-to-back datagrams (5 us apart) per tick.
  for (std::uint64_t tick = 0; tick < 100; ++tick)
    for (std::uint64_t k = 0; k < 20; ++k) s.add({tick * 1'000'000 + k * 5'000, 1200, 1228});
  EXPECT_EQ(s.burst_gaps(), 100U * 19U);
  EXPECT_NEAR(s.burst_fraction(), 1900.0 / 1999.0, 1e-12);
  EXPECT_EQ(s.runs(), 100U);
  EXPECT_EQ(s.longest_run(), 20U);
  EXPECT_LE(s.gaps().quantile(0.5), 5'000U);
  EXPECT_GT(s.gaps().quantile(0.99), 900'000U);  // the tick gaps: 5 % of them
}

TEST(GapStats, ATimestampSteppingBackIsAZeroGapAndCounted) {
  GapStats s;
  s.add({1000, 100, 128});
  s.add({900, 100, 128});
  s.add({2000, 100, 128});
  EXPECT_EQ(s.reordered(), 1U);
  EXPECT_EQ(s.gaps().min(), 0U);
  EXPECT_EQ(s.span_ns(), 1000U);
}

TEST(GapStats, FewerThanTwoDatagramsHaveNoRate) {
  GapStats s;
  EXPECT_EQ(s.payload_rate_bps(), 0.0);
  EXPECT_EQ(s.runs(), 0U);
  s.add({5, 1200, 1228});
  EXPECT_EQ(s.payload_rate_bps(), 0.0);
  EXPECT_EQ(s.span_ns(), 0U);
}

// An Ethernet + IPv4 + UDP frame with `payload` bytes to `dport` (headers only
// are stored: the capture's snaplen).
std::vector<unsigned char> udp_frame(std::uint16_t dport, std::uint16_t payload) {
  std::vector<unsigned char> f(14 + 20 + 8, 0);
  f[12] = 0x08;  // IPv4
  unsigned char* ip = f.data() + 14;
  ip[0] = 0x45;
  const unsigned total = 20U + 8U + payload;
  ip[2] = static_cast<unsigned char>(total >> 8);
  ip[3] = static_cast<unsigned char>(total);
  ip[8] = 64;
  ip[9] = 17;
  ip[12] = 127, ip[15] = 1, ip[16] = 127, ip[19] = 1;
  unsigned char* udp = ip + 20;
  udp[0] = 0x30, udp[1] = 0x39;
  udp[2] = static_cast<unsigned char>(dport >> 8);
  udp[3] = static_cast<unsigned char>(dport);
  const unsigned ulen = 8U + payload;
  udp[4] = static_cast<unsigned char>(ulen >> 8);
  udp[5] = static_cast<unsigned char>(ulen);
  return f;
}

// Writes a nanosecond pcap file: `n` datagrams to port 9000 every `gap_ns`,
// interleaved with datagrams to port 9001 (another flow, filtered out).
std::string write_pcap(int n, std::uint64_t gap_ns, std::uint16_t payload = 1200) {
  char path[] = "/tmp/ufq-gaps-test-XXXXXX";
  const int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 128, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* d = pcap_dump_open(dead, path);
  EXPECT_NE(d, nullptr);
  for (int i = 0; i < n; ++i) {
    for (std::uint16_t port : {std::uint16_t{9000}, std::uint16_t{9001}}) {
      const auto f = udp_frame(port, payload);
      const std::uint64_t t = 1'700'000'000'000'000'000ULL + static_cast<std::uint64_t>(i) * gap_ns + (port - 9000U) * 7U;
      pcap_pkthdr h{};
      h.ts.tv_sec = static_cast<time_t>(t / 1'000'000'000ULL);
      h.ts.tv_usec = static_cast<suseconds_t>(t % 1'000'000'000ULL);  // ns in a nanosecond file
      h.caplen = static_cast<bpf_u_int32>(f.size());
      h.len = static_cast<bpf_u_int32>(f.size() + payload);
      pcap_dump(reinterpret_cast<u_char*>(d), &h, f.data());
    }
  }
  pcap_dump_close(d);
  pcap_close(dead);
  return path;
}

std::string run(const std::string& args, int* status) {
  const std::string cmd = std::string(UFQ_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t k = std::fread(buf, 1, sizeof buf, p)) out.append(buf, k);
  *status = ::pclose(p);
  return out;
}

TEST(UfqGaps, ReadsANanosecondPcapFileAndFiltersOneFlow) {
  const std::string file = write_pcap(500, 96'000);
  int status = 0;
  const std::string out = run("gaps --json -r " + file + " --port 9000", &status);
  ::unlink(file.c_str());
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["datagrams"], 500);
  EXPECT_EQ(j["payload_bytes"], 500 * 1200);
  EXPECT_EQ(j["capture"]["captured"], 500);
  EXPECT_EQ(j["burst_gaps"], 0);
  const std::uint64_t p50 = j["gap_ns"]["p50"];
  EXPECT_LE(p50, 96'000U);  // nanosecond timestamps kept (a microsecond reader would still pass 96 us...
  EXPECT_GT(p50, 94'000U);
  EXPECT_EQ(j["gap_ns"]["max"], 96'000);  // ...but not an exact max)
  EXPECT_NEAR(j["payload_rate_bps"].get<double>(), 100e6, 1.0);
}

TEST(UfqGaps, BothFlowsTogetherAreBursts) {
  const std::string file = write_pcap(100, 1'000'000);
  int status = 0;
  const std::string out = run("gaps --json -r " + file + " --count 50", &status);
  ::unlink(file.c_str());
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["datagrams"], 50);  // --count stops the read
  EXPECT_EQ(j["gap_ns"]["min"], 7);  // the other flow 7 ns behind
  EXPECT_EQ(j["burst_gaps"], 25);
}

TEST(UfqGaps, SplitsGsoTrainsIntoBackToBackSegments) {
  // Trains of 3 x 1200 bytes every 288 us (unsegmented on lo), plus a last
  // short segment in none: 3600 is a multiple.
  const std::string file = write_pcap(100, 288'000, 3600);
  int status = 0;
  std::string out = run("gaps --json -r " + file + " --port 9000 --segment 1200", &status);
  ASSERT_EQ(status, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["datagrams"], 300);
  EXPECT_EQ(j["capture"]["gso_trains"], 100);
  EXPECT_EQ(j["burst_gaps"], 200);  // two zero gaps inside each train
  EXPECT_EQ(j["longest_run"], 3);
  EXPECT_EQ(j["ip_bytes"], 300 * (1200 + 28));
  // Not split: 100 datagrams of 3600 bytes, no bursts. Same rate either way.
  out = run("gaps --json -r " + file + " --port 9000", &status);
  ::unlink(file.c_str());
  ASSERT_EQ(status, 0) << out;
  const auto k = nlohmann::json::parse(out);
  EXPECT_EQ(k["datagrams"], 100);
  EXPECT_EQ(k["burst_gaps"], 0);
  EXPECT_NEAR(k["payload_rate_bps"].get<double>(), j["payload_rate_bps"].get<double>(),
              1e-6 * k["payload_rate_bps"].get<double>());
}

// Writes the given frames (Ethernet link type) 1 ms apart.
std::string write_frames(const std::vector<std::vector<unsigned char>>& frames) {
  char path[] = "/tmp/ufq-gaps-test-XXXXXX";
  const int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 128, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* d = pcap_dump_open(dead, path);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(1'700'000'000 + i / 1000);
    h.ts.tv_usec = static_cast<suseconds_t>((i % 1000) * 1'000'000);
    h.caplen = h.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, frames[i].data());
  }
  pcap_dump_close(d);
  pcap_close(dead);
  return path;
}

TEST(UfqGaps, MalformedAndOtherFramesAreSkippedAndCounted) {
  std::vector<std::vector<unsigned char>> f;
  f.push_back(udp_frame(9000, 100));                    // counted
  auto short_frame = udp_frame(9000, 100);
  short_frame.resize(30);                                // truncated inside the IP header
  f.push_back(short_frame);
  auto bad_ihl = udp_frame(9000, 100);
  bad_ihl[14] = 0x41;                                    // IHL 4: a header shorter than 20 bytes
  f.push_back(bad_ihl);
  auto tcp = udp_frame(9000, 100);
  tcp[14 + 9] = 6;                                       // TCP
  f.push_back(tcp);
  auto fragment = udp_frame(9000, 100);
  fragment[14 + 7] = 0x10;                               // a later fragment: no UDP header
  f.push_back(fragment);
  f.push_back({0x00, 0x01});                             // two bytes
  auto arp = udp_frame(9000, 100);
  arp[12] = 0x08, arp[13] = 0x06;                        // not IP
  f.push_back(arp);
  auto vlan = udp_frame(9000, 100);                      // 802.1Q-tagged UDP: counted
  vlan.insert(vlan.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  f.push_back(vlan);
  std::vector<unsigned char> v6(14 + 40 + 8, 0);          // IPv6 UDP, 100-byte payload: counted
  v6[12] = 0x86, v6[13] = 0xDD;
  v6[14] = 0x60;
  v6[14 + 5] = 108;                                      // payload length: UDP 8 + 100
  v6[14 + 6] = 17;
  v6[14 + 40 + 5] = 108;                                 // UDP length
  f.push_back(v6);
  const std::string file = write_frames(f);
  int status = 0;
  // A filter that passes every frame to the parser ("udp" would drop most in BPF).
  const std::string out = run("gaps --json -r " + file + " --filter 'greater 0'", &status);
  ::unlink(file.c_str());
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["capture"]["captured"], 9);
  EXPECT_EQ(j["capture"]["not_udp"], 6);
  EXPECT_EQ(j["datagrams"], 3);
  EXPECT_EQ(j["payload_bytes"], 300);
  EXPECT_EQ(j["ip_bytes"], 128 + 128 + 148);
}

TEST(UfqGaps, RefusesBadInputNamingIt) {
  int status = 0;
  std::string out = run("gaps -r /nonexistent.pcap", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("/nonexistent.pcap"), std::string::npos) << out;
  out = run("gaps -r /dev/null --filter 'udp and'", &status);
  EXPECT_NE(status, 0);
  out = run("gaps --duration 0", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--duration"), std::string::npos) << out;
  out = run("gaps --port 70000", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("70000"), std::string::npos) << out;
  out = run("gaps --port 9 --filter udp -r /dev/null", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("not both"), std::string::npos) << out;
}

}  // namespace
