// Printing fq options as `tc qdisc show` and `tc -j qdisc show` (docs/fq-rules.md#tc-output,
// docs/fq-rules.md#tc-parsing-and-units; edge cases E39, E40 (docs/fq-rules.md#edge-cases)).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "print_config.hpp"
#include "ufq/tc/fq_options.hpp"

namespace ufq::tc {
namespace {

constexpr const char* kLatestDefaults =
    "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 bands 3 priomap 1 2 2 2 1 2 0 0 1 "
    "1 1 1 1 1 1 1 weights 589824 196608 65536 quantum 3028b initial_quantum 15140b "
    "low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop "
    "offload_horizon 0us ";

constexpr const char* k57Defaults =
    "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 3028b initial_quantum "
    "15140b low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us ";

FqConfig parsed(std::string_view line, FqConfig base = {}) {
  auto r = parse_fq_line(line, base);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : FqConfig{};
}

std::string shown(std::string_view line, FqConfig base = {}) {
  return format_fq_options(parsed(line, base));
}

// The value printed after `keyword` in the options line.
std::string field(const std::string& line, const std::string& keyword) {
  const auto at = line.find(keyword + " ");
  if (at == std::string::npos) return "<absent>";
  const auto from = at + keyword.size() + 1;
  return line.substr(from, line.find(' ', from) - from);
}

TEST(FqPrint, LatestDefaults) { EXPECT_EQ(format_fq_options(FqConfig{}), kLatestDefaults); }

TEST(FqPrint, Linux57Defaults) {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  EXPECT_EQ(format_fq_options(c), k57Defaults);
}

TEST(FqPrint, ExamplesFromTheSpec) {  // docs/fq-rules.md#edge-cases E40
  EXPECT_EQ(field(shown("timer_slack 100"), "timer_slack"), "100ns");
  EXPECT_EQ(field(shown("horizon 100"), "horizon"), "100us");
  EXPECT_EQ(field(shown("ce_threshold 100"), "ce_threshold"), "100us");
  EXPECT_EQ(field(shown("maxrate 100000"), "maxrate"), "100Kbit");
  EXPECT_EQ(field(shown("low_rate_threshold 10000"), "low_rate_threshold"), "10Kbit");
  EXPECT_EQ(field(shown("initial_quantum 900000"), "initial_quantum"), "900000b");
  EXPECT_EQ(field(shown("quantum 9000"), "quantum"), "9000b");
}

TEST(FqPrint, Sizes) {
  EXPECT_EQ(field(shown("quantum 10240"), "quantum"), "10Kb");
  EXPECT_EQ(field(shown("quantum 18432"), "quantum"), "18Kb");
  EXPECT_EQ(field(shown("quantum 1048576"), "quantum"), "1Mb");
  EXPECT_EQ(field(shown("initial_quantum 2147483647"), "initial_quantum"), "2Gb");
  EXPECT_EQ(field(shown("initial_quantum 92120"), "initial_quantum"), "92120b");
}

TEST(FqPrint, Rates) {
  EXPECT_EQ(field(shown("maxrate 1.5mbit"), "maxrate"), "1500Kbit");
  EXPECT_EQ(field(shown("maxrate 1gbit"), "maxrate"), "1Gbit");
  EXPECT_EQ(field(shown("maxrate 1mbps"), "maxrate"), "8Mbit");
  EXPECT_EQ(field(shown("maxrate 0"), "maxrate"), "0bit");
  EXPECT_EQ(field(shown("maxrate 1234568bit"), "maxrate"), "1234Kbit");  // tc's rounding
}

TEST(FqPrint, Omissions) {
  // maxrate unlimited, ce_threshold 0xFFFFFFFF, low_rate_threshold 0, pacing on.
  EXPECT_EQ(field(kLatestDefaults, "maxrate"), "<absent>");
  EXPECT_EQ(field(kLatestDefaults, "ce_threshold"), "<absent>");
  EXPECT_EQ(field(shown("low_rate_threshold 0"), "low_rate_threshold"), "<absent>");
  EXPECT_EQ(field(shown("ce_threshold 4294967295"), "ce_threshold"), "<absent>");
  EXPECT_EQ(field(shown("ce_threshold 4294967294"), "ce_threshold"), "4.29e+03s");
  EXPECT_EQ(field(shown("maxrate 4294967295bps"), "maxrate"), "<absent>");
  EXPECT_EQ(std::string(kLatestDefaults).find("pacing"), std::string::npos);
  FqConfig wide;
  wide.maxrate = 1ULL << 40;  // dumped as min(rate, ~0U): unlimited
  EXPECT_EQ(field(format_fq_options(wide), "maxrate"), "<absent>");
}

TEST(FqPrint, Flags) {
  const std::string s = shown("nopacing horizon_cap");
  EXPECT_NE(s.find("orphan_mask 1023 nopacing bands 3 "), std::string::npos) << s;
  EXPECT_NE(s.find("horizon 10s horizon_cap offload_horizon 0us "), std::string::npos) << s;
  EXPECT_EQ(s.find("horizon_drop"), std::string::npos);
  FqConfig c;
  c.compat = Compat::linux_5_7;
  c.pacing = false;
  EXPECT_NE(format_fq_options(c).find("orphan_mask 1023 nopacing quantum 3028b "),
            std::string::npos);
}

TEST(FqPrint, FullLine) {
  FqConfig base;
  base.max_offload_horizon_us = 1000;
  const std::string s = shown(
      "limit 500 flow_limit 50 buckets 300 orphan_mask 0xff nopacing bands 3 priomap 0 0 0 0 0 0 0 "
      "0 1 1 1 1 2 2 2 2 weights 100000 50000 20000 quantum 9000 initial_quantum 90000 maxrate "
      "10mbit low_rate_threshold 1mbit refill_delay 100ms ce_threshold 4ms timer_slack 50us "
      "horizon 2s horizon_cap offload_horizon 500",
      base);
  EXPECT_EQ(s,
            "limit 500p flow_limit 50p buckets 512 orphan_mask 255 nopacing bands 3 priomap 0 0 0 "
            "0 0 0 0 0 1 1 1 1 2 2 2 2 weights 100000 50000 20000 quantum 9000b initial_quantum "
            "90000b maxrate 10Mbit low_rate_threshold 1Mbit refill_delay 100ms ce_threshold 4ms "
            "timer_slack 50us horizon 2s horizon_cap offload_horizon 500us ");
}

TEST(FqPrint, RefillDelayJiffiesRoundTrip) {  // docs/fq-rules.md#edge-cases E39
  FqConfig hz250;
  hz250.hz = 250;
  FqConfig hz1000;
  hz1000.hz = 1000;
  FqConfig hz100;
  hz100.hz = 100;
  FqConfig hz300;
  hz300.hz = 300;
  EXPECT_EQ(field(shown("refill_delay 1ms", hz250), "refill_delay"), "4ms");
  EXPECT_EQ(field(shown("refill_delay 1ms", hz1000), "refill_delay"), "1ms");
  EXPECT_EQ(field(shown("refill_delay 1ms", hz100), "refill_delay"), "10ms");
  EXPECT_EQ(field(shown("refill_delay 1ms", hz300), "refill_delay"), "3.33ms");
  for (const FqConfig& b : {hz100, hz250, hz300, hz1000})
    EXPECT_EQ(field(shown("", b), "refill_delay"), "40ms") << b.hz;  // 40 ms survives
  EXPECT_EQ(field(shown("refill_delay 0", hz250), "refill_delay"), "0us");
  EXPECT_EQ(field(shown("refill_delay 4001", hz250), "refill_delay"), "8ms");
  EXPECT_EQ(dumped_refill_delay_us(1000, 250), 4000U);
  EXPECT_EQ(dumped_refill_delay_us(4000, 250), 4000U);
  EXPECT_EQ(dumped_refill_delay_us(1, 1000), 1000U);
  EXPECT_EQ(dumped_refill_delay_us(1000, 300), 3333U);
  EXPECT_EQ(dumped_refill_delay_us(3333, 300), 3333U);  // stable after one round trip
  EXPECT_EQ(dumped_refill_delay_us(4294967295U, 100), 4294967295U);  // clamped
  EXPECT_EQ(dumped_refill_delay_us(1234, 0), 1234U);
  // The configuration keeps what was asked; only the dump is rounded.
  EXPECT_EQ(parsed("refill_delay 1ms", hz250).refill_delay_us, 1000U);
  EXPECT_EQ(dumped_config(parsed("refill_delay 1ms", hz250)).refill_delay_us, 4000U);
}

TEST(FqPrint, TimesAndSlack) {
  EXPECT_EQ(field(shown("timer_slack 8570"), "timer_slack"), "8.57us");
  EXPECT_EQ(field(shown("timer_slack 1234567"), "timer_slack"), "1.23ms");
  EXPECT_EQ(field(shown("timer_slack 2s"), "timer_slack"), "2s");
  EXPECT_EQ(field(shown("horizon 1500"), "horizon"), "1.5ms");
  EXPECT_EQ(field(shown("horizon 4294967295"), "horizon"), "4.29e+03s");
  EXPECT_EQ(field(shown("horizon 0"), "horizon"), "0us");
}

TEST(FqPrint, Json) {
  EXPECT_EQ(fq_options_json(FqConfig{}),
            "{\"limit\":10000,\"flow_limit\":100,\"buckets\":1024,\"orphan_mask\":1023,"
            "\"bands\":3,\"priomap \":[1,2,2,2,1,2,0,0,1,1,1,1,1,1,1,1],"
            "\"weights \":[589824,196608,65536],\"quantum\":3028,\"initial_quantum\":15140,"
            "\"low_rate_threshold\":68750,\"refill_delay\":40000,\"timer_slack\":10000,"
            "\"horizon\":10000000,\"horizon_drop\":null,\"offload_horizon\":0}");
}

TEST(FqPrint, JsonOptionalKeys) {
  FqConfig base;
  base.hz = 250;
  const auto j = nlohmann::json::parse(fq_options_json(
      parsed("nopacing maxrate 1mbit low_rate_threshold 0 ce_threshold 4ms horizon_cap "
             "refill_delay 1ms",
             base)));
  EXPECT_EQ(j.at("pacing"), false);
  EXPECT_EQ(j.at("maxrate"), 125000);
  EXPECT_FALSE(j.contains("low_rate_threshold"));
  EXPECT_EQ(j.at("ce_threshold"), 4000);
  EXPECT_TRUE(j.at("horizon_cap").is_null());
  EXPECT_FALSE(j.contains("horizon_drop"));
  EXPECT_EQ(j.at("refill_delay"), 4000);  // the kernel's dump, after the jiffies round trip
  const auto d = nlohmann::json::parse(fq_options_json(FqConfig{}));
  EXPECT_FALSE(d.contains("pacing"));
  EXPECT_FALSE(d.contains("maxrate"));
  EXPECT_FALSE(d.contains("ce_threshold"));
  EXPECT_FALSE(d.contains("priomap"));  // only with tc's trailing space
}

TEST(FqPrint, Json57) {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  EXPECT_EQ(fq_options_json(c),
            "{\"limit\":10000,\"flow_limit\":100,\"buckets\":1024,\"orphan_mask\":1023,"
            "\"quantum\":3028,\"initial_quantum\":15140,\"low_rate_threshold\":68750,"
            "\"refill_delay\":40000,\"timer_slack\":10000}");
}

TEST(FqArgs, DefaultsNeedNoWords) {
  EXPECT_TRUE(fq_options_args(FqConfig{}).empty());
  FqConfig c;
  c.compat = Compat::linux_5_7;
  EXPECT_TRUE(fq_options_args(c).empty());
}

TEST(FqArgs, ReadableWhenExact) {
  const FqConfig c = parsed(
      "limit 500 maxrate 10mbit ce_threshold 4ms timer_slack 50us nopacing horizon_cap "
      "weights 20000 20000 20000");
  EXPECT_EQ(join_words(fq_options_args(c)),
            "limit 500 nopacing weights 20000 20000 20000 maxrate 10Mbit ce_threshold 4ms "
            "timer_slack 50us horizon_cap");
}

TEST(FqArgs, RawUnitsWhenTcFormIsLossy) {
  const FqConfig c = parsed("maxrate 1234568bit refill_delay 1234567 timer_slack 1234567");
  EXPECT_EQ(join_words(fq_options_args(c)),
            "maxrate 1234568bit refill_delay 1234567us timer_slack 1234567ns");
  EXPECT_EQ(parse_fq_options(fq_options_args(c)).value(), c);
}

}  // namespace
}  // namespace ufq::tc
