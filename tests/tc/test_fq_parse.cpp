// Parsing the words after `fq`: every option, its spellings, limits and
// refusals (docs/fq-rules.md#configuration, #tc-parsing-and-units; edge cases
// E33-E35, E41, E42 of #edge-cases).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "print_config.hpp"
#include "ufq/tc/fq_options.hpp"

namespace ufq::tc {
namespace {

FqConfig ok(std::string_view line, const FqConfig& base = {}, const ParseOptions& opts = {}) {
  auto r = parse_fq_line(line, base, opts);
  EXPECT_TRUE(r.ok()) << line << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : FqConfig{};
}

Error err(std::string_view line, const FqConfig& base = {}, const ParseOptions& opts = {}) {
  auto r = parse_fq_line(line, base, opts);
  EXPECT_FALSE(r.ok()) << line << " was accepted";
  if (r.ok()) return {};
  EXPECT_FALSE(r.error().message.empty());
  return r.error();
}

FqConfig compat_5_7() {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  return c;
}

TEST(FqParse, NoWordsGiveTheBase) {
  EXPECT_EQ(ok(""), FqConfig{});
  FqConfig base = FqConfig::for_mtu(9000);
  base.hz = 1000;
  EXPECT_EQ(ok("", base), base);
}

TEST(FqParse, Defaults) {
  const FqConfig c = ok("");
  EXPECT_EQ(c.limit, 10000U);
  EXPECT_EQ(c.flow_limit, 100U);
  EXPECT_EQ(c.quantum, 3028U);
  EXPECT_EQ(c.initial_quantum, 15140U);
  EXPECT_EQ(c.maxrate, kUnlimitedRate);
  EXPECT_EQ(c.buckets_log, 10);
  EXPECT_TRUE(c.pacing);
  EXPECT_EQ(c.refill_delay_us, 40000U);
  EXPECT_EQ(c.orphan_mask, 1023U);
  EXPECT_EQ(c.low_rate_threshold, 68750U);
  EXPECT_EQ(c.ce_threshold_us, 0xFFFFFFFFU);
  EXPECT_EQ(c.timer_slack_ns, 10000U);
  EXPECT_EQ(c.horizon_us, 10000000U);
  EXPECT_TRUE(c.horizon_drop);
  EXPECT_EQ(c.offload_horizon_us, 0U);
}

TEST(FqParse, Counts) {
  EXPECT_EQ(ok("limit 500").limit, 500U);
  EXPECT_EQ(ok("limit 010").limit, 8U);  // docs/fq-rules.md#edge-cases E41: octal
  EXPECT_EQ(ok("limit 0x100").limit, 256U);
  EXPECT_EQ(ok("limit 0").limit, 0U);
  EXPECT_EQ(ok("limit 4294967295").limit, 4294967295U);
  EXPECT_EQ(ok("flow_limit 1000").flow_limit, 1000U);
  EXPECT_EQ(ok("quantum 9000").quantum, 9000U);
  EXPECT_EQ(ok("quantum 1").quantum, 1U);
  EXPECT_EQ(ok("quantum 1048576").quantum, 1048576U);
  EXPECT_EQ(ok("initial_quantum 900000").initial_quantum, 900000U);
  EXPECT_EQ(ok("initial_quantum 0").initial_quantum, 0U);
  EXPECT_EQ(ok("orphan_mask 0").orphan_mask, 0U);
  EXPECT_EQ(ok("orphan_mask 0xffff").orphan_mask, 0xFFFFU);
}

TEST(FqParse, LaterWordsWin) {
  EXPECT_EQ(ok("limit 5 limit 7").limit, 7U);
  EXPECT_FALSE(ok("pacing nopacing").pacing);
  EXPECT_TRUE(ok("nopacing pacing").pacing);
}

TEST(FqParse, CountsRefuseUnitsAndJunk) {
  for (const char* line : {"quantum 3028b", "limit 10000p", "flow_limit 100p", "buckets 1k",
                           "initial_quantum 15140b", "orphan_mask 1023x", "limit -1",
                           "limit 4294967296", "limit 1.5", "limit 08"}) {
    const Error e = err(line);
    EXPECT_EQ(e.kind, Error::Kind::syntax) << line;
    EXPECT_EQ(e.message.rfind("Illegal \"", 0), 0U) << e.message;
  }
  const Error e = err("quantum 3028b");  // docs/fq-rules.md#edge-cases E41
  EXPECT_EQ(e.where, "quantum");
  EXPECT_EQ(e.value, "3028b");
  EXPECT_NE(e.message.find("Illegal \"quantum\""), std::string::npos);
  EXPECT_NE(e.expected.find("without unit"), std::string::npos);
  // Our message names orphan_mask (tc's says "initial_quantum" there, a tc bug).
  EXPECT_EQ(err("orphan_mask x").where, "orphan_mask");
}

TEST(FqParse, MissingValue) {
  for (const char* kw : {"limit", "flow_limit", "quantum", "initial_quantum", "orphan_mask",
                         "buckets", "maxrate", "defrate", "low_rate_threshold", "refill_delay",
                         "ce_threshold", "timer_slack", "horizon", "offload_horizon", "bands"}) {
    const Error e = err(kw);
    EXPECT_EQ(e.kind, Error::Kind::syntax);
    EXPECT_EQ(e.where, kw);
    EXPECT_TRUE(e.value.empty());
    EXPECT_NE(e.message.find("not complete"), std::string::npos) << e.message;
  }
}

TEST(FqParse, UnknownKeyword) {
  const Error e = err("limit 5 bogus 7");
  EXPECT_EQ(e.kind, Error::Kind::syntax);
  EXPECT_EQ(e.message, "What is \"bogus\"?");
  EXPECT_EQ(e.where, "bogus");
  EXPECT_EQ(err("Limit 5").message, "What is \"Limit\"?");  // keywords are case-sensitive
  EXPECT_EQ(err("-j").message, "What is \"-j\"?");
}

TEST(FqParse, Help) {
  const Error e = err("help");
  EXPECT_NE(e.message.find("flow_limit PACKETS"), std::string::npos);
}

TEST(FqParse, BucketsRoundUpToPowerOfTwo) {
  EXPECT_EQ(ok("buckets 1024").buckets_log, 10);
  EXPECT_EQ(ok("buckets 1000").buckets_log, 10);  // docs/fq-rules.md#edge-cases E35: 1000 -> 1024
  EXPECT_EQ(ok("buckets 1025").buckets_log, 11);
  EXPECT_EQ(ok("buckets 2").buckets_log, 1);
  EXPECT_EQ(ok("buckets 3").buckets_log, 2);
  EXPECT_EQ(ok("buckets 262144").buckets_log, 18);
  EXPECT_EQ(ok("buckets 0").buckets_log, 10);  // 0 sends nothing
  EXPECT_EQ(ok("buckets 64 buckets 0").buckets_log, 10);
}

TEST(FqParse, BucketsOutsideKernelRange) {
  Error e = err("buckets 1");  // log 0
  EXPECT_EQ(e.kind, Error::Kind::kernel);
  EXPECT_EQ(e.where, "buckets_log");
  EXPECT_EQ(e.value, "0");
  EXPECT_NE(e.message.find("\"buckets 1\" is sent as log 0"), std::string::npos) << e.message;
  e = err("buckets 262145");  // log 19
  EXPECT_EQ(e.kind, Error::Kind::kernel);
  EXPECT_EQ(e.value, "19");
  EXPECT_EQ(err("buckets 4294967295").kind, Error::Kind::kernel);  // log 32
}

TEST(FqParse, QuantumKernelRange) {  // docs/fq-rules.md#edge-cases E33
  for (const char* line : {"quantum 0", "quantum 1048577", "quantum 0xffffffff"}) {
    const Error e = err(line);
    EXPECT_EQ(e.kind, Error::Kind::kernel) << line;
    EXPECT_EQ(e.where, "quantum");
    EXPECT_NE(e.expected.find("1048576"), std::string::npos);
  }
  EXPECT_EQ(err("quantum 0", compat_5_7()).kind, Error::Kind::kernel);
}

TEST(FqParse, InitialQuantumIntMax) {  // docs/fq-rules.md#edge-cases E34
  EXPECT_EQ(ok("initial_quantum 0x7fffffff").initial_quantum, 0x7FFFFFFFU);
  const Error e = err("initial_quantum 0x80000000");
  EXPECT_EQ(e.kind, Error::Kind::kernel);
  EXPECT_EQ(e.where, "initial_quantum");
  // 5.7 predates the overflow fix and takes any u32.
  EXPECT_EQ(ok("initial_quantum 0x80000000", compat_5_7()).initial_quantum, 0x80000000U);
}

TEST(FqParse, Rates) {
  EXPECT_EQ(ok("maxrate 1mbit").maxrate, 125000U);
  EXPECT_EQ(ok("maxrate 1mbps").maxrate, 1000000U);  // docs/fq-rules.md#edge-cases E41: bytes!
  EXPECT_EQ(ok("maxrate 100000").maxrate, 12500U);
  EXPECT_EQ(ok("maxrate 1.5Gbit").maxrate, 187500000U);
  EXPECT_EQ(ok("maxrate 0").maxrate, 0U);
  EXPECT_EQ(ok("maxrate 4294967294bps").maxrate, 4294967294U);
  EXPECT_EQ(ok("maxrate 4294967295bps").maxrate, kUnlimitedRate);  // the kernel's "unlimited"
  EXPECT_EQ(ok("maxrate 1mbit maxrate 4294967295bps").maxrate, kUnlimitedRate);
  EXPECT_EQ(ok("low_rate_threshold 10000").low_rate_threshold, 1250U);
  EXPECT_EQ(ok("low_rate_threshold 0").low_rate_threshold, 0U);
  EXPECT_EQ(ok("low_rate_threshold 1KBPS").low_rate_threshold, 1000U);
  // A fraction of a byte/s is dropped, as tc does (Linux 6.1 ground truth: 12344bit).
  EXPECT_EQ(ok("maxrate 12345").maxrate, 1543U);
  EXPECT_EQ(ok("maxrate 100bit").maxrate, 12U);
  EXPECT_EQ(ok("low_rate_threshold 1bit").low_rate_threshold, 0U);
}

TEST(FqParse, RateRefusals) {
  for (const char* line : {"maxrate 35gbit", "maxrate 10mbits", "maxrate fast", "maxrate -8",
                           "low_rate_threshold -1bit", "defrate 12xbit"}) {
    const Error e = err(line);
    EXPECT_EQ(e.kind, Error::Kind::syntax) << line;
    EXPECT_NE(e.message.find("Illegal"), std::string::npos) << e.message;
  }
  EXPECT_EQ(err("low_rate_threshold 10%").kind, Error::Kind::syntax);  // no percentage here
}

TEST(FqParse, MaxratePercentNeedsLinkSpeed) {
  const Error e = err("maxrate 10%");
  EXPECT_EQ(e.where, "maxrate");
  EXPECT_NE(e.message.find("link speed"), std::string::npos);
  ParseOptions opts;
  opts.link_speed_bits = 10'000'000'000ULL;  // 10 Gbit/s
  EXPECT_EQ(ok("maxrate 10%", {}, opts).maxrate, 125'000'000U);
  EXPECT_EQ(ok("maxrate 0%", {}, opts).maxrate, 0U);
  EXPECT_EQ(ok("maxrate 100%", {}, opts).maxrate, 1'250'000'000U);
  EXPECT_EQ(err("maxrate 101%", {}, opts).kind, Error::Kind::syntax);
  EXPECT_EQ(err("maxrate 10%%", {}, opts).kind, Error::Kind::syntax);
  EXPECT_EQ(ok("defrate 50%", {}, opts), FqConfig{});
  opts.link_speed_bits = 100'000'000'000ULL;  // 100 Gbit/s: 12.5 GB/s does not fit
  EXPECT_NE(err("maxrate 100%", {}, opts).message.find("out of range"), std::string::npos);
}

TEST(FqParse, DefrateIsIgnored) {
  std::vector<std::string> notes;
  ParseOptions opts;
  opts.notes = &notes;
  EXPECT_EQ(ok("defrate 10mbit", {}, opts), FqConfig{});
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("defrate"), std::string::npos);
}

TEST(FqParse, Times) {
  EXPECT_EQ(ok("refill_delay 1ms").refill_delay_us, 1000U);  // kept as sent; the kernel rounds
  EXPECT_EQ(ok("refill_delay 40").refill_delay_us, 40U);
  EXPECT_EQ(ok("refill_delay 0").refill_delay_us, 0U);
  EXPECT_EQ(ok("ce_threshold 4ms").ce_threshold_us, 4000U);
  EXPECT_EQ(ok("ce_threshold 100").ce_threshold_us, 100U);
  EXPECT_EQ(ok("ce_threshold 2.5msec").ce_threshold_us, 2500U);
  EXPECT_EQ(ok("horizon 1s").horizon_us, 1000000U);
  EXPECT_EQ(ok("horizon 100").horizon_us, 100U);
  EXPECT_EQ(ok("horizon 0.5secs").horizon_us, 500000U);
  EXPECT_EQ(ok("timer_slack 100").timer_slack_ns, 100U);  // no suffix = ns
  EXPECT_EQ(ok("timer_slack 100ns").timer_slack_ns, 100U);
  EXPECT_EQ(ok("timer_slack 100nsecs").timer_slack_ns, 100U);
  EXPECT_EQ(ok("timer_slack 10us").timer_slack_ns, 10000U);
  EXPECT_EQ(ok("timer_slack 1ms").timer_slack_ns, 1000000U);
  EXPECT_EQ(ok("timer_slack 4294967295ns").timer_slack_ns, 4294967295U);
  EXPECT_EQ(ok("timer_slack 4.29s").timer_slack_ns, 4290000000U);
  EXPECT_EQ(ok("timer_slack 0").timer_slack_ns, 0U);
}

TEST(FqParse, TimeRefusals) {
  for (const char* line : {"refill_delay 10ns", "horizon 5m", "ce_threshold abc", "timer_slack 5x",
                           "offload_horizon 1min"}) {
    const Error e = err(line);
    EXPECT_EQ(e.kind, Error::Kind::syntax) << line;
    EXPECT_EQ(e.message.rfind("Illegal \"", 0), 0U) << e.message;
  }
  for (const char* line : {"timer_slack 5s", "timer_slack 4294967296", "timer_slack -1",
                           "horizon 4295s", "refill_delay -5"}) {
    const Error e = err(line);
    EXPECT_EQ(e.kind, Error::Kind::syntax) << line;
    EXPECT_EQ(e.message.rfind("Illegal (out of range) \"", 0), 0U) << e.message;
  }
}

TEST(FqParse, Flags) {
  EXPECT_FALSE(ok("nopacing").pacing);
  EXPECT_TRUE(ok("pacing").pacing);
  EXPECT_FALSE(ok("horizon_cap").horizon_drop);
  EXPECT_TRUE(ok("horizon_cap horizon_drop").horizon_drop);
}

TEST(FqParse, BandsPriomap) {
  const FqConfig c = ok("bands 3 priomap 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0");
  const std::array<std::uint8_t, 16> want{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  EXPECT_EQ(c.priomap, want);
}

TEST(FqParse, BandsPriomapRefusals) {
  EXPECT_NE(err("bands 4 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0").message.find("must be 3"),
            std::string::npos);
  EXPECT_NE(err("bands x").message.find("Illegal"), std::string::npos);
  EXPECT_NE(err("bands 3 prio 0").message.find("\"priomap\" expected"), std::string::npos);
  EXPECT_NE(err("bands 3").message.find("priomap"), std::string::npos);
  EXPECT_NE(err("bands 3 priomap 1 2 3").message.find("too big"), std::string::npos);
  EXPECT_NE(err("bands 3 priomap 0 0 0").message.find("Not enough elements in priomap"),
            std::string::npos);
  EXPECT_NE(err("bands 3 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 x").message.find("element"),
            std::string::npos);
  EXPECT_NE(err("bands 3 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 bands 3 priomap "
                "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
                .message.find("Duplicate"),
            std::string::npos);
  // 17th number is not part of the map: it is read as a keyword.
  EXPECT_EQ(err("bands 3 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0").message, "What is \"0\"?");
}

TEST(FqParse, Weights) {
  const FqConfig c = ok("weights 16384 65536 3000000");
  const std::array<std::int32_t, 3> want{16384, 65536, 3000000};
  EXPECT_EQ(c.weights, want);
  EXPECT_NE(err("weights 16383 65536 65536").message.find("too small"), std::string::npos);
  EXPECT_NE(err("weights 65536 65536 1").message.find("too small"), std::string::npos);
  EXPECT_NE(err("weights 65536 65536").message.find("Not enough elements in weights"),
            std::string::npos);
  EXPECT_NE(err("weights 65536 x 65536").message.find("Illegal"), std::string::npos);
  EXPECT_NE(err("weights 65536 65536 2147483648").message.find("Illegal"), std::string::npos);
  EXPECT_NE(err("weights 20000 20000 20000 weights 20000 20000 20000").message.find("Duplicate"),
            std::string::npos);
}

TEST(FqParse, OffloadHorizonNeedsDeviceSupport) {  // docs/fq-rules.md#edge-cases E42
  EXPECT_EQ(ok("offload_horizon 0").offload_horizon_us, 0U);
  const Error e = err("offload_horizon 1");
  EXPECT_EQ(e.kind, Error::Kind::kernel);
  EXPECT_EQ(e.where, "offload_horizon");
  FqConfig dev;
  dev.max_offload_horizon_us = 1000;
  EXPECT_EQ(ok("offload_horizon 1ms", dev).offload_horizon_us, 1000U);
  EXPECT_EQ(err("offload_horizon 1001", dev).kind, Error::Kind::kernel);
}

TEST(FqParse, Compat57IgnoresNewerAttributes) {  // docs/fq-rules.md#netlink-acceptance, #edge-cases E37
  std::vector<std::string> notes;
  ParseOptions opts;
  opts.notes = &notes;
  const FqConfig base = compat_5_7();
  const FqConfig c = ok(
      "horizon 1s horizon_cap offload_horizon 5 weights 20000 20000 20000 "
      "bands 3 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 limit 7",
      base, opts);
  FqConfig want = base;
  want.limit = 7;
  EXPECT_EQ(c, want);
  EXPECT_EQ(notes.size(), 5U);
  // tc still checks their syntax.
  EXPECT_EQ(err("horizon 5x", base).kind, Error::Kind::syntax);
  EXPECT_EQ(err("weights 1 2 3", base).kind, Error::Kind::syntax);
}

TEST(FqParse, SurroundingsAreValidated) {
  FqConfig base;
  base.hz = 0;
  EXPECT_EQ(err("", base).where, "hz");
}

TEST(FqParse, VectorOfWords) {
  const std::vector<std::string> words{"limit", "5", "quantum", "9000"};
  auto r = parse_fq_options(words);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->limit, 5U);
  EXPECT_EQ(r->quantum, 9000U);
}

TEST(SplitWords, AnyWhitespace) {
  const std::vector<std::string> want{"limit", "5", "nopacing"};
  EXPECT_EQ(split_words("  limit\t5\n nopacing \r\v"), want);
  EXPECT_TRUE(split_words(" \t ").empty());
  EXPECT_EQ(join_words(want), "limit 5 nopacing");
}

}  // namespace
}  // namespace ufq::tc
