// The `tc -s qdisc show` statistics block and its `tc -j -s` members (docs/fq-rules.md#tc-output).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ufq/tc/qdisc_print.hpp"
#include "ufq/tc/stats_print.hpp"

namespace ufq::tc {
namespace {

constexpr const char* kZeroBlock =
    " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
    " backlog 0b 0p requeues 0\n"
    "  flows 0 (inactive 0 throttled 0) band0_pkts 0 band1_pkts 0 band2_pkts 0\n"
    "  gc 0 highprio 0 throttled 0\n";

TEST(StatsPrint, ZeroCounters) { EXPECT_EQ(format_fq_stats(FqStats{}), kZeroBlock); }

TEST(StatsPrint, NothingThrottledHidesNextPacketDelay) {
  FqStats s;
  s.time_next_delayed_flow = -123456;  // the kernel's value when nothing is throttled
  EXPECT_EQ(format_fq_stats(s), kZeroBlock);
  s.time_next_delayed_flow = 0;
  EXPECT_EQ(format_fq_stats(s), kZeroBlock);
}

TEST(StatsPrint, BusyQdisc) {
  // The shape of a real 6.8+ dump (a mail on netdev), with our numbers.
  FqStats s;
  s.bytes = 492439603330;
  s.packets = 336953991;
  s.drops = 61724094;
  s.requeues = 4463;
  s.backlog = 14611228;
  s.qlen = 9995;
  s.flows = 2965;
  s.inactive_flows = 1151;
  s.band_pkt_count = {0, 9993, 0};
  s.gc_flows = 6347;
  s.fastpath_packets = 30;
  s.throttled = 5;
  s.unthrottle_latency_ns = 2320;
  s.flows_plimit = 7403693;
  s.band_drops = {0, 54320401, 0};
  EXPECT_EQ(format_fq_stats(s),
            " Sent 492439603330 bytes 336953991 pkt (dropped 61724094, overlimits 0 requeues "
            "4463) \n"
            " backlog 14611228b 9995p requeues 4463\n"
            "  flows 2965 (inactive 1151 throttled 0) band0_pkts 0 band1_pkts 9993 band2_pkts 0\n"
            "  gc 6347 highprio 0 fastpath 30 throttled 5 latency 2.32us flows_plimit 7403693\n"
            " band1_drops 54320401\n");
}

TEST(StatsPrint, EveryOptionalItem) {
  FqStats s;
  s.bytes = 1514;
  s.packets = 1;
  s.overlimits = 2;
  s.backlog = 10240;
  s.qlen = 3;
  s.flows = 4;
  s.inactive_flows = 1;
  s.throttled_flows = 2;
  s.band_pkt_count = {1, 1, 1};
  s.time_next_delayed_flow = 50000;  // docs/fq-rules.md#edge-cases E23: 50 us
  s.gc_flows = 9;
  s.highprio_packets = 8;
  s.fastpath_packets = 7;
  s.tcp_retrans = 6;
  s.throttled = 5;
  s.unthrottle_latency_ns = 10000;  // docs/fq-rules.md#edge-cases E24
  s.ce_mark = 4;
  s.flows_plimit = 3;
  s.pkts_too_long = 11;
  s.allocation_errors = 12;
  s.horizon_drops = 13;
  s.horizon_caps = 14;
  s.band_drops = {15, 16, 17};
  EXPECT_EQ(format_fq_stats(s),
            " Sent 1514 bytes 1 pkt (dropped 0, overlimits 2 requeues 0) \n"
            " backlog 10Kb 3p requeues 0\n"
            "  flows 4 (inactive 1 throttled 2) band0_pkts 1 band1_pkts 1 band2_pkts 1 "
            "next_packet_delay 50us\n"
            "  gc 9 highprio 8 fastpath 7 retrans 6 throttled 5 latency 10us ce_mark 4 "
            "flows_plimit 3\n"
            " pkts_too_long 11 alloc_errors 12 horizon_drops 13  horizon_caps 14 band0_drops 15 "
            "band1_drops 16 band2_drops 17\n");
}

TEST(StatsPrint, LastLineItemsAlone) {
  FqStats s;
  s.horizon_caps = 1;  // two spaces before horizon_caps, even first on the line
  EXPECT_NE(format_fq_stats(s).find("throttled 0\n  horizon_caps 1\n"), std::string::npos);
  FqStats t;
  t.pkts_too_long = 1;  // docs/fq-rules.md#edge-cases E16
  EXPECT_NE(format_fq_stats(t).find("throttled 0\n pkts_too_long 1\n"), std::string::npos);
  FqStats u;
  u.band_drops[2] = 40;
  EXPECT_NE(format_fq_stats(u).find("throttled 0\n band2_drops 40\n"), std::string::npos);
}

TEST(StatsPrint, NextPacketDelayUnits) {
  FqStats s;
  s.time_next_delayed_flow = 999;
  EXPECT_NE(format_fq_stats(s).find(" next_packet_delay 999ns\n"), std::string::npos);
  s.time_next_delayed_flow = 1234567;
  EXPECT_NE(format_fq_stats(s).find(" next_packet_delay 1.23ms\n"), std::string::npos);
}

TEST(StatsJson, ZeroCounters) {
  EXPECT_EQ(fq_stats_json_members(FqStats{}),
            "\"bytes\":0,\"packets\":0,\"drops\":0,\"overlimits\":0,\"requeues\":0,"
            "\"backlog\":0,\"qlen\":0,\"flows\":0,\"inactive\":0,\"throttled\":0,"
            "\"band0_pkts\":0,\"band1_pkts\":0,\"band2_pkts\":0,\"gc\":0,\"highprio\":0,"
            "\"throttled\":0");
}

TEST(StatsJson, AllKeysAndTheDoubleThrottled) {
  FqStats s;
  s.throttled_flows = 2;
  s.throttled = 5;
  s.time_next_delayed_flow = 50000;
  s.fastpath_packets = 7;
  s.tcp_retrans = 6;
  s.unthrottle_latency_ns = 10000;
  s.ce_mark = 4;
  s.flows_plimit = 3;
  s.pkts_too_long = 11;
  s.allocation_errors = 12;
  s.horizon_drops = 13;
  s.horizon_caps = 14;
  s.band_drops = {15, 16, 17};
  const std::string m = fq_stats_json_members(s);
  EXPECT_NE(m.find("\"throttled\":2,\"band0_pkts\""), std::string::npos);
  EXPECT_NE(m.find("\"retrans\":6,\"throttled\":5,\"latency\":10000"), std::string::npos);
  EXPECT_NE(m.find("\"band2_pkts\":0,\"next_packet_delay\":50000,\"gc\":0"), std::string::npos);
  EXPECT_NE(m.find("\"highprio\":0,\"fastpath\":7,"), std::string::npos);
  EXPECT_NE(m.find("\"ce_mark\":4,\"flows_plimit\":3,\"pkts_too_long\":11,\"alloc_errors\":12,"
                   "\"horizon_drops\":13,\"horizon_caps\":14,\"band0_drops\":15,"
                   "\"band1_drops\":16,\"band2_drops\":17"),
            std::string::npos)
      << m;
  // Valid JSON (a library keeps one of the duplicates).
  const auto j = nlohmann::json::parse(format_fq_stats_json(s));
  EXPECT_EQ(j.at("gc"), 0);
}

TEST(QdiscPrint, DefaultLine) {
  EXPECT_EQ(format_qdisc(FqConfig{}),
            "qdisc fq 8001: root refcnt 2 limit 10000p flow_limit 100p buckets 1024 orphan_mask "
            "1023 bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 weights 589824 196608 65536 "
            "quantum 3028b initial_quantum 15140b low_rate_threshold 550Kbit refill_delay 40ms "
            "timer_slack 10us horizon 10s horizon_drop offload_horizon 0us \n");
  FqConfig s;
  s.compat = Compat::linux_5_7;
  EXPECT_EQ(format_qdisc(s),
            "qdisc fq 8001: root refcnt 2 limit 10000p flow_limit 100p buckets 1024 orphan_mask "
            "1023 quantum 3028b initial_quantum 15140b low_rate_threshold 550Kbit refill_delay "
            "40ms timer_slack 10us \n");
}

TEST(QdiscPrint, WithStats) {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  EXPECT_EQ(format_qdisc(c, FqStats{}),
            "qdisc fq 8001: root refcnt 2 limit 10000p flow_limit 100p buckets 1024 orphan_mask "
            "1023 quantum 3028b initial_quantum 15140b low_rate_threshold 550Kbit refill_delay "
            "40ms timer_slack 10us \n" +
                std::string(kZeroBlock));
}

TEST(QdiscPrint, HeaderVariants) {
  QdiscHeader h;
  h.major = 0x8002;
  h.dev = "eth0";
  h.parent = 0x00010002;
  h.refcnt = 1;
  EXPECT_EQ(format_qdisc(FqConfig{}, h).rfind("qdisc fq 8002: dev eth0 parent 1:2 limit ", 0), 0U);
  h.parent = 0x00010000;
  h.major = 0xabc;
  EXPECT_EQ(format_qdisc(FqConfig{}, h).rfind("qdisc fq abc: dev eth0 parent 1: limit ", 0), 0U);
  h.parent = 0;
  h.refcnt = 257;
  h.dev.clear();
  EXPECT_EQ(format_qdisc(FqConfig{}, h).rfind("qdisc fq abc: refcnt 257 limit ", 0), 0U);
}

TEST(QdiscJson, Object) {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  EXPECT_EQ(format_qdisc_json(c),
            "{\"kind\":\"fq\",\"handle\":\"8001:\",\"root\":true,\"refcnt\":2,\"options\":"
            "{\"limit\":10000,\"flow_limit\":100,\"buckets\":1024,\"orphan_mask\":1023,"
            "\"quantum\":3028,\"initial_quantum\":15140,\"low_rate_threshold\":68750,"
            "\"refill_delay\":40000,\"timer_slack\":10000}}");
  QdiscHeader h;
  h.dev = "eth\"0";
  h.parent = 0x00010002;
  h.refcnt = 1;
  const std::string s = format_qdisc_json(c, FqStats{}, h);
  EXPECT_EQ(s.rfind("{\"kind\":\"fq\",\"handle\":\"8001:\",\"dev\":\"eth\\\"0\",\"parent\":\"1:2\","
                    "\"options\":{",
                    0),
            0U)
      << s;
  EXPECT_NE(s.find("},\"bytes\":0,\"packets\":0,"), std::string::npos);
  EXPECT_TRUE(s.ends_with(",\"throttled\":0}")) << s;
  EXPECT_TRUE(nlohmann::json::accept(s));
}

}  // namespace
}  // namespace ufq::tc
