// JSON configuration files with `tc -j` keys.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ufq/tc/config_json.hpp"
#include "print_config.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"

namespace ufq::tc {
namespace {

FqConfig ok(const std::string& text, const FqConfig& base = {},
            std::vector<std::string>* notes = nullptr) {
  auto r = fq_config_from_json(text, base, notes);
  EXPECT_TRUE(r.ok()) << text << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : FqConfig{};
}

Error err(const std::string& text, const FqConfig& base = {}) {
  auto r = fq_config_from_json(text, base);
  EXPECT_FALSE(r.ok()) << text << " was accepted";
  if (r.ok()) return {};
  EXPECT_FALSE(r.error().message.empty());
  return r.error();
}

TEST(ConfigJson, EmptyObjectIsTheBase) {
  EXPECT_EQ(ok("{}"), FqConfig{});
  FqConfig base;
  base.hz = 1000;
  EXPECT_EQ(ok("{}", base), base);
}

TEST(ConfigJson, EveryKey) {
  FqConfig base;
  base.max_offload_horizon_us = 1000;
  const FqConfig c = ok(R"({
    "limit": 500, "flow_limit": 50, "buckets": 512, "orphan_mask": 255, "pacing": false,
    "bands": 3, "priomap ": [0,0,0,0,0,0,0,0,1,1,1,1,2,2,2,2],
    "weights ": [100000, 50000, 20000], "quantum": 9000, "initial_quantum": 90000,
    "maxrate": 1250000, "low_rate_threshold": 125000, "refill_delay": 100000,
    "ce_threshold": 4000, "timer_slack": 50000, "horizon": 2000000, "horizon_cap": null,
    "offload_horizon": 500, "defrate": 12345 })",
                        base);
  FqConfig want = base;
  want.limit = 500;
  want.flow_limit = 50;
  want.buckets_log = 9;
  want.orphan_mask = 255;
  want.pacing = false;
  want.priomap = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  want.weights = {100000, 50000, 20000};
  want.quantum = 9000;
  want.initial_quantum = 90000;
  want.maxrate = 1250000;
  want.low_rate_threshold = 125000;
  want.refill_delay_us = 100000;
  want.ce_threshold_us = 4000;
  want.timer_slack_ns = 50000;
  want.horizon_us = 2000000;
  want.horizon_drop = false;
  want.offload_horizon_us = 500;
  EXPECT_EQ(c, want);
}

TEST(ConfigJson, KeySpellingsForArrays) {
  const std::array<std::uint8_t, 16> map{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  EXPECT_EQ(ok(R"({"priomap": [0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0]})").priomap, map);
  EXPECT_EQ(ok(R"({"priomap ": [0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0]})").priomap, map);
  const std::array<std::int32_t, 3> w{20000, 30000, 40000};
  EXPECT_EQ(ok(R"({"weights": [20000, 30000, 40000]})").weights, w);
  EXPECT_EQ(ok(R"({"weights ": [20000, 30000, 40000]})").weights, w);
  EXPECT_EQ(err(R"({"weights": [20000,20000,20000], "weights ": [20000,20000,20000]})").where,
            "weights ");
  EXPECT_EQ(err(R"({"priomap": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
                    "priomap ": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]})")
                .kind,
            Error::Kind::syntax);
}

TEST(ConfigJson, SpecialValues) {
  EXPECT_EQ(ok(R"({"maxrate": 4294967295})").maxrate, kUnlimitedRate);
  EXPECT_EQ(ok(R"({"maxrate": 0})").maxrate, 0U);
  EXPECT_EQ(ok(R"({"ce_threshold": 4294967295})").ce_threshold_us, kCeThresholdDisabled);
  EXPECT_TRUE(ok(R"({"horizon_drop": null})").horizon_drop);
  EXPECT_TRUE(ok(R"({"horizon_drop": true})").horizon_drop);
  EXPECT_FALSE(ok(R"({"horizon_drop": false})").horizon_drop);
  EXPECT_FALSE(ok(R"({"horizon_cap": true})").horizon_drop);
  EXPECT_TRUE(ok(R"({"horizon_cap": false})").horizon_drop);
  EXPECT_FALSE(ok(R"({"horizon_cap": null, "horizon_drop": false})").horizon_drop);
  EXPECT_EQ(err(R"({"horizon_cap": null, "horizon_drop": null})").kind, Error::Kind::syntax);
  EXPECT_TRUE(ok(R"({"pacing": true})").pacing);
  EXPECT_EQ(ok(R"({"buckets": 2})").buckets_log, 1);
  EXPECT_EQ(ok(R"({"buckets": 262144})").buckets_log, 18);
}

TEST(ConfigJson, RefusalsNameKeyValueAndRange) {
  Error e = err(R"({"limit": -1})");
  EXPECT_EQ(e.kind, Error::Kind::syntax);
  EXPECT_EQ(e.where, "limit");
  EXPECT_EQ(e.value, "-1");
  EXPECT_NE(e.expected.find("0..4294967295"), std::string::npos);
  EXPECT_NE(e.message.find("\"limit\": -1"), std::string::npos) << e.message;

  e = err(R"({"limit": 4294967296})");
  EXPECT_EQ(e.value, "4294967296");
  e = err(R"({"limit": "500"})");  // no strings
  EXPECT_EQ(e.value, "\"500\"");
  e = err(R"({"limit": 5.5})");  // no fractions
  EXPECT_EQ(e.where, "limit");
  EXPECT_EQ(err(R"({"limit": 500.0})").where, "limit");
  EXPECT_EQ(err(R"({"limit": true})").where, "limit");
  EXPECT_EQ(err(R"({"pacing": 1})").where, "pacing");
  EXPECT_EQ(err(R"({"buckets": 1000})").where, "buckets");  // not a power of two
  EXPECT_EQ(err(R"({"buckets": 0})").where, "buckets");
  EXPECT_EQ(err(R"({"bands": 4})").where, "bands");
  EXPECT_EQ(err(R"({"priomap": [0,0,0]})").where, "priomap");
  EXPECT_EQ(err(R"({"priomap": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,3]})").where, "priomap");
  EXPECT_EQ(err(R"({"weights": [16383, 20000, 20000]})").where, "weights");
  EXPECT_EQ(err(R"({"weights": [20000, 20000, 2147483648]})").where, "weights");
  EXPECT_EQ(err(R"({"horizon_cap": 1})").where, "horizon_cap");
  e = err(R"({"limit": 5, "bogus": 1})");  // unknown key
  EXPECT_EQ(e.where, "bogus");
  EXPECT_NE(e.expected.find("known fq option"), std::string::npos);
  EXPECT_EQ(err(R"({"Limit": 5})").where, "Limit");
}

TEST(ConfigJson, KernelRefusals) {
  Error e = err(R"({"quantum": 0})");
  EXPECT_EQ(e.kind, Error::Kind::kernel);
  EXPECT_EQ(e.where, "quantum");
  EXPECT_EQ(err(R"({"quantum": 1048577})").kind, Error::Kind::kernel);
  EXPECT_EQ(err(R"({"buckets": 1})").kind, Error::Kind::kernel);
  EXPECT_EQ(err(R"({"buckets": 524288})").kind, Error::Kind::kernel);
  EXPECT_EQ(err(R"({"initial_quantum": 2147483648})").kind, Error::Kind::kernel);
  EXPECT_EQ(err(R"({"offload_horizon": 1})").kind, Error::Kind::kernel);
}

TEST(ConfigJson, DocumentErrors) {
  EXPECT_EQ(err("").kind, Error::Kind::input);
  EXPECT_EQ(err("{").kind, Error::Kind::input);
  EXPECT_EQ(err("[1, 2]").kind, Error::Kind::input);
  EXPECT_EQ(err("42").kind, Error::Kind::input);
  EXPECT_EQ(err("[]").kind, Error::Kind::input);
  EXPECT_EQ(err("[{\"options\": {}}]").kind, Error::Kind::input);  // no kind
  EXPECT_EQ(err(R"({"kind": "fq_codel", "options": {}})").where, "kind");
  EXPECT_EQ(err(R"({"kind": "fq", "options": 5})").where, "options");
  const Error dup = err(R"({"limit": 5, "limit": 6})");
  EXPECT_EQ(dup.where, "limit");
  EXPECT_NE(dup.message.find("more than once"), std::string::npos);
  EXPECT_EQ(err(R"([{"kind": "fq", "options": {"limit": 1, "limit": 2}}])").where, "limit");
}

TEST(ConfigJson, AllOrNothing) {
  // The valid keys before and after a refused one are not applied anywhere:
  // the result is an error, never a partial configuration.
  auto r = fq_config_from_json(R"({"limit": 5, "quantum": 0, "flow_limit": 7})");
  EXPECT_FALSE(r.ok());
}

TEST(ConfigJson, ReadsTcJsonOutput) {
  FqConfig c;
  c.limit = 1234;
  c.pacing = false;
  c.maxrate = 125000;
  const std::string tc_output = std::string("[").append(format_qdisc_json(c, FqStats{})).append("]");
  EXPECT_EQ(ok(tc_output), c);
  EXPECT_EQ(ok(format_qdisc_json(c)), c);  // a single qdisc object
}

TEST(ConfigJson, QdiscFormAbsenceMeansTheOmittedValue) {
  // tc -j leaves out pacing (true), maxrate (unlimited), low_rate_threshold
  // (0) and ce_threshold (off) when they hold those values.
  FqConfig base;
  base.pacing = false;
  base.maxrate = 1000;
  base.ce_threshold_us = 5;
  FqConfig want;
  want.low_rate_threshold = 0;
  EXPECT_EQ(ok(R"([{"kind": "fq"}])", base), want);
  EXPECT_EQ(ok(R"({"kind": "fq", "options": {}})", base), want);
  // An options object keeps the base for what it does not name.
  EXPECT_EQ(ok("{}", base), base);
  // The counters of tc -j -s repeat "throttled"; only what is read must be unique.
  EXPECT_EQ(ok(R"([{"kind":"fq","options":{},"throttled":0,"throttled":1}])").limit, 10000U);
  EXPECT_EQ(err(R"([{"kind":"fq","kind":"fq","options":{}}])").where, "kind");
  EXPECT_EQ(err(R"({"kind":"fq","options":{"limit":1,"limit":1}})").where, "limit");
}

TEST(ConfigJson, Compat57IgnoresNewerKeys) {
  FqConfig base;
  base.compat = Compat::linux_5_7;
  std::vector<std::string> notes;
  const FqConfig c = ok(R"({"horizon": 5, "horizon_cap": null, "offload_horizon": 9,
                            "weights": [20000,20000,20000], "limit": 3})",
                        base, &notes);
  FqConfig want = base;
  want.limit = 3;
  EXPECT_EQ(c, want);
  EXPECT_EQ(notes.size(), 4U);
  EXPECT_EQ(err(R"({"weights": [1,2,3]})", base).where, "weights");  // still checked
}

TEST(ConfigJson, File) {
  const std::string path = ::testing::TempDir() + "ufq_config_json_test.json";
  {
    std::ofstream out(path);
    out << R"({"limit": 77, "refill_delay": 1000})";
  }
  auto r = load_fq_config(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->limit, 77U);
  EXPECT_EQ(r->refill_delay_us, 1000U);
  auto missing = load_fq_config(path + ".does-not-exist");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, Error::Kind::input);
  {
    std::ofstream out(path);
    out << "{ not json";
  }
  auto bad = load_fq_config(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind(path, 0), 0U) << bad.error().message;
}

}  // namespace
}  // namespace ufq::tc
