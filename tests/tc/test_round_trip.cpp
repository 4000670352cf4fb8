// Round trips over many random valid configurations:
//   parse(fq_options_args(cfg)) == cfg                   (exact words)
//   fq_config_from_json(fq_options_json(cfg)) == dumped   (tc -j shows the kernel's view)
//   printing the re-read configuration prints the same line.
#include <gtest/gtest.h>

#include <random>

#include "ufq/tc/config_json.hpp"
#include "print_config.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"

namespace ufq::tc {
namespace {

class RandomConfigs {
 public:
  explicit RandomConfigs(std::uint64_t seed) : rng_(seed) {}

  FqConfig next() {
    FqConfig c;
    c.compat = pick(2) == 0 ? Compat::latest : Compat::linux_5_7;
    constexpr std::array<std::uint32_t, 4> kHz{100, 250, 300, 1000};
    c.hz = kHz[pick(4)];
    c.max_offload_horizon_us = pick(2) == 0 ? 0 : u32();
    c.limit = count();
    c.flow_limit = count();
    c.quantum = 1 + pick(1U << 20);
    c.initial_quantum = c.compat == Compat::latest ? pick(0x80000000U) : u32();
    c.buckets_log = static_cast<std::uint8_t>(1 + pick(18));
    c.pacing = pick(2) == 0;
    c.orphan_mask = count();
    // Rates: tc's printed form is exact for some, not for others; both matter.
    c.maxrate = pick(3) == 0 ? kUnlimitedRate : Rate{rate()};
    c.low_rate_threshold = rate();
    c.refill_delay_us = time();
    c.ce_threshold_us = pick(3) == 0 ? kCeThresholdDisabled : time();
    c.timer_slack_ns = time();
    if (c.compat == Compat::latest) {
      c.horizon_us = time();
      c.horizon_drop = pick(2) == 0;
      for (auto& band : c.priomap) band = static_cast<std::uint8_t>(pick(3));
      for (auto& w : c.weights) w = static_cast<std::int32_t>(kMinWeight + pick(0x7FFFFFFF - kMinWeight));
      c.offload_horizon_us = c.max_offload_horizon_us == 0 ? 0 : pick(c.max_offload_horizon_us);
      // The adaptive slack (a ufq extension, latest only): half of the time.
      if (pick(2) == 0) {
        c.adaptive_slack_ppm = pick(3) == 0 ? 1 + pick(100) * 10000 : 1 + pick(kPpm);
        c.adaptive_slack_max_ns = c.timer_slack_ns + pick(0xFFFFFFFFU - c.timer_slack_ns);
      }
    }
    // Off, a max is kept all the same (any compat).
    if (!c.adaptive_slack() && pick(4) == 0) c.adaptive_slack_max_ns = u32();
    return c;
  }

 private:
  // Uniform in [0, n) (n = 0 means the whole u32 range).
  std::uint32_t pick(std::uint32_t n) {
    if (n == 0) return u32();
    return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng_);
  }
  std::uint32_t u32() { return std::uniform_int_distribution<std::uint32_t>()(rng_); }
  // Small, round, or anything.
  std::uint32_t count() {
    switch (pick(3)) {
      case 0: return pick(20000);
      case 1: return pick(4) * 1000;
      default: return u32();
    }
  }
  std::uint32_t rate() {
    switch (pick(4)) {
      case 0: return pick(1000) * 125;       // whole kbit/s
      case 1: return pick(100) * 125000;     // whole mbit/s
      case 2: return pick(0xFFFFFFFFU);  // anything below "unlimited"
      default: return pick(10000);
    }
  }
  std::uint32_t time() {
    switch (pick(4)) {
      case 0: return pick(1000);
      case 1: return pick(1000) * 1000;
      case 2: return pick(100) * 1000000;
      default: return u32();
    }
  }

  std::mt19937_64 rng_;
};

FqConfig base_of(const FqConfig& c) {
  FqConfig b;
  b.compat = c.compat;
  b.hz = c.hz;
  b.max_offload_horizon_us = c.max_offload_horizon_us;
  b.max_flows = c.max_flows;
  return b;
}

TEST(RoundTrip, RandomConfigsAreValid) {
  RandomConfigs gen(1);
  for (int i = 0; i < 2000; ++i) {
    const FqConfig c = gen.next();
    const auto refused = validate(c);
    ASSERT_FALSE(refused.has_value()) << refused->what();
  }
}

TEST(RoundTrip, ArgsParseBackExactly) {
  RandomConfigs gen(2);
  for (int i = 0; i < 5000; ++i) {
    const FqConfig c = gen.next();
    const auto words = fq_options_args(c);
    const auto back = parse_fq_options(words, base_of(c));
    ASSERT_TRUE(back.ok()) << join_words(words) << " -> " << back.error().message;
    ASSERT_EQ(*back, c) << join_words(words);
    ASSERT_EQ(format_fq_options(*back), format_fq_options(c));
  }
}

TEST(RoundTrip, TcJsonQdiscGivesTheKernelView) {
  RandomConfigs gen(5);
  for (int i = 0; i < 5000; ++i) {
    const FqConfig c = gen.next();
    const std::string text = std::string("[").append(format_qdisc_json(c, FqStats{})).append("]");
    const auto back = fq_config_from_json(text, base_of(c));
    ASSERT_TRUE(back.ok()) << text << " -> " << back.error().message;
    ASSERT_EQ(*back, dumped_config(c)) << text;
  }
}

TEST(RoundTrip, JsonOptionsGiveTheKernelView) {
  RandomConfigs gen(3);
  for (int i = 0; i < 5000; ++i) {
    const FqConfig c = gen.next();
    const std::string text = fq_options_json(c);
    const auto back = fq_config_from_json(text, base_of(c));
    ASSERT_TRUE(back.ok()) << text << " -> " << back.error().message;
    FqConfig want = dumped_config(c);
    // tc omits low_rate_threshold 0; a bare options object keeps the base then.
    if (c.low_rate_threshold == 0) want.low_rate_threshold = base_of(c).low_rate_threshold;
    ASSERT_EQ(*back, want) << text;
    if (c.low_rate_threshold == 0) continue;
    // The kernel view is stable: reading what it prints changes nothing more.
    ASSERT_EQ(fq_options_json(*back), fq_options_json(c));
    ASSERT_EQ(format_fq_options(*back), format_fq_options(c));
  }
}

FqConfig k57() {
  FqConfig c;
  c.compat = Compat::linux_5_7;
  return c;
}

// The extension's words, line and JSON keys (docs/features.md#ufq-extensions).
TEST(RoundTrip, AdaptiveSlackIsMarkedAndParsesBack) {
  FqConfig base;
  const auto c = parse_fq_line("timer_slack 2us adaptive_slack 12.5% max 300us", base);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->adaptive_slack_ppm, 125'000u);
  EXPECT_EQ(c->adaptive_slack_max_ns, 300'000u);
  EXPECT_EQ(join_words(fq_options_args(*c)), "timer_slack 2us adaptive_slack 12.5% max 300us");
  const std::string line = format_fq_options(*c);
  EXPECT_NE(line.find("offload_horizon 0us ufq_extension adaptive_slack 12.5% max 300us "), std::string::npos) << line;
  const std::string json = fq_options_json(*c);
  EXPECT_NE(json.find("\"ufq_adaptive_slack_ppm\":125000,\"ufq_adaptive_slack_max\":300000"), std::string::npos)
      << json;
  const auto from_json = fq_config_from_json(json, base);
  ASSERT_TRUE(from_json.ok()) << from_json.error().message;
  EXPECT_EQ(*from_json, *c);
  // A fraction as a plain number, the default max, and off again.
  const auto d = parse_fq_line("adaptive_slack 0.1", base);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->adaptive_slack_ppm, 100'000u);
  EXPECT_EQ(d->adaptive_slack_max_ns, 1'000'000u);
  const auto off = parse_fq_line("adaptive_slack 10% adaptive_slack off", base);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->adaptive_slack());
  EXPECT_EQ(format_fq_options(*off).find("ufq_extension"), std::string::npos);
  // Off with a max that is not the default: the exact words and JSON keep the max.
  EXPECT_EQ(off->adaptive_slack_max_ns, 1'000'000u);
  const auto off_max = parse_fq_line("adaptive_slack off max 5us", base);
  ASSERT_TRUE(off_max.ok()) << off_max.error().message;
  EXPECT_FALSE(off_max->adaptive_slack());
  EXPECT_EQ(join_words(fq_options_args(*off_max)), "adaptive_slack off max 5us");
  const auto off_json = fq_config_from_json(fq_options_json(*off_max), base);
  ASSERT_TRUE(off_json.ok());
  EXPECT_EQ(*off_json, *off_max);
  const auto p5 = parse_fq_line("adaptive_slack off max 5us", k57());
  EXPECT_TRUE(p5.ok()) << "off is no extension, 5.7 takes it";
}

// A kernel level that cannot have it refuses it, naming the value; so do bad values.
TEST(RoundTrip, AdaptiveSlackRefusals) {
  FqConfig k57;
  k57.compat = Compat::linux_5_7;
  const auto e = parse_fq_line("adaptive_slack 10% max 1ms", k57);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, Error::Kind::kernel);
  EXPECT_NE(e.error().message.find("adaptive_slack 10%"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("5.7"), std::string::npos) << e.error().message;
  for (const char* bad : {"adaptive_slack 101%", "adaptive_slack 1.5", "adaptive_slack abc", "adaptive_slack",
                          "adaptive_slack 10% max", "adaptive_slack 10% max 5s", "adaptive_slack 0.00001%"}) {
    const auto r = parse_fq_line(bad, FqConfig{});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("adaptive_slack"), std::string::npos) << bad << ": " << r.error().message;
  }
  const auto below = parse_fq_line("timer_slack 50us adaptive_slack 10% max 10us", FqConfig{});
  ASSERT_FALSE(below.ok());
  EXPECT_NE(below.error().message.find("10000ns"), std::string::npos) << below.error().message;
  EXPECT_NE(below.error().message.find("50000"), std::string::npos) << below.error().message;
}

TEST(RoundTrip, DumpedConfigIsIdempotent) {
  RandomConfigs gen(4);
  for (int i = 0; i < 2000; ++i) {
    const FqConfig d = dumped_config(gen.next());
    ASSERT_EQ(dumped_config(d), d);
  }
}

}  // namespace
}  // namespace ufq::tc
