// Configuration acceptance: edge cases 33, 34, 35 (docs/fq-rules.md#configuration, #netlink-acceptance).
//
// Not here:
//  * E36 (strict attribute lengths) and E37 (unknown attributes): they are about
//    netlink attribute payloads; FqConfig is a typed struct with no wire
//    encoding, so neither a wrong length nor an unknown attribute can be
//    expressed through this API.
//  * E39-E42 (refill_delay display rounding, tc printing and parsing,
//    offload_horizon through tc): covered by the tc-language tests.
//  * E46 (user-space sleep slack): the real-time pacer's concern.
#include <bit>
#include <climits>

#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E33: quantum must be 1 .. 1048576; 0 and 1048577 are refused ("invalid
// quantum") by the constructor, validate() and change().
TYPED_TEST(EdgeCases, E33_InvalidQuantum) {
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    for (const std::uint32_t bad : {0U, 1048577U}) {
      FqConfig cfg = make_cfg(c);
      cfg.quantum = bad;
      const auto err = validate(cfg);
      ASSERT_TRUE(err.has_value()) << bad;
      EXPECT_EQ(err->field(), "quantum");
      EXPECT_THROW(TypeParam{cfg}, ConfigError);
      // On change, together with a valid attribute: ufq applies nothing (the
      // kernel would have applied limit 500 and still returned EINVAL).
      TypeParam q(make_cfg(c));
      cfg.limit = 500;
      EXPECT_THROW(q.change(cfg, kT0), ConfigError);
      EXPECT_EQ(q.config().limit, 10000U);
      EXPECT_EQ(q.config().quantum, 3028U);
    }
    for (const std::uint32_t good : {1U, 1048576U}) {
      FqConfig cfg = make_cfg(c);
      cfg.quantum = good;
      EXPECT_FALSE(validate(cfg).has_value()) << good;
      EXPECT_NO_THROW(TypeParam{cfg});
      TypeParam q(make_cfg(c));
      EXPECT_NO_THROW(q.change(cfg, kT0));
      EXPECT_EQ(q.config().quantum, good);
    }
  }
}

// E34: initial_quantum 0x80000000. latest (April 2023 fix): refused, the
// largest accepted value is INT_MAX. 5.7: accepted, and the value assigned to
// the signed 32-bit credit makes new flows start at -2^31. The first dequeue
// then needs k quanta with -2^31 + k*3028 > 0: k = floor(2^31/3028) + 1 =
// 709209 (709208*3028 = 2147481824 leaves -1824); -2147483648 + 709209*3028 =
// 1204; after the 1514-byte packet: 1204 - 1514 = -310.
TYPED_TEST(EdgeCases, E34_InitialQuantumOverflow) {
  {
    FqConfig cfg = make_cfg(Compat::latest);
    cfg.initial_quantum = 0x80000000U;
    const auto err = validate(cfg);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->field(), "initial_quantum");
    EXPECT_THROW(TypeParam{cfg}, ConfigError);
    cfg.initial_quantum = 0x7FFFFFFFU;
    EXPECT_FALSE(validate(cfg).has_value());
  }
  {
    FqConfig cfg = make_cfg(Compat::linux_5_7);
    cfg.initial_quantum = 0x80000000U;
    EXPECT_FALSE(validate(cfg).has_value());
    TypeParam q(cfg);
    PacketPool pool;
    FlowOwner o = slow_owner(1);
    Packet& p = pool.make({.len = 1514, .owner = &o});
    ASSERT_EQ(q.enqueue(p, kT0), Verdict::queued);
    EXPECT_EQ(find_flow(q, owner_key(1))->credit, INT32_MIN);
    EXPECT_EQ(q.dequeue(kT0), &p);
    EXPECT_EQ(find_flow(q, owner_key(1))->credit, -310);
  }
}

// E35: buckets_log must be 1 .. 18. tc turns `buckets 1000` into log 10 (bit
// length of 999) -> 1024 buckets; `buckets 1` -> log 0 -> EINVAL; `buckets
// 262145` -> log 19 -> EINVAL. (The rounding itself is tc's; here only the log.)
TYPED_TEST(EdgeCases, E35_Buckets) {
  EXPECT_EQ(std::bit_width(999U), 10);
  FqConfig c10;
  c10.buckets_log = static_cast<std::uint8_t>(std::bit_width(999U));
  EXPECT_EQ(c10.buckets(), 1024U);
  EXPECT_EQ(std::bit_width(262144U), 19);  // 262145 - 1
  for (Compat c : kBothCompat) {
    SCOPED_TRACE(compat_name(c));
    for (const std::uint8_t log : {std::uint8_t{0}, std::uint8_t{19}, std::uint8_t{255}}) {
      FqConfig cfg = make_cfg(c);
      cfg.buckets_log = log;
      const auto err = validate(cfg);
      ASSERT_TRUE(err.has_value()) << int{log};
      EXPECT_EQ(err->field(), "buckets_log");
      EXPECT_THROW(TypeParam{cfg}, ConfigError);
    }
    for (const std::uint8_t log : {std::uint8_t{1}, std::uint8_t{18}}) {
      FqConfig cfg = make_cfg(c);
      cfg.buckets_log = log;
      EXPECT_FALSE(validate(cfg).has_value()) << int{log};
      TypeParam q(cfg);
      EXPECT_EQ(q.config().buckets(), 1U << log);
    }
  }
}

// Related acceptance rules of the 6.7+ attributes (latest only): 3 bands, every
// priomap entry < 3, every weight >= 16384 (FQ_MIN_WEIGHT). 5.7 has neither
// attribute and ignores the fields.
TEST(Config, PriomapAndWeights) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.priomap[15] = 3;
  EXPECT_TRUE(validate(cfg).has_value());
  cfg = make_cfg(Compat::latest);
  cfg.weights[2] = 16383;
  EXPECT_TRUE(validate(cfg).has_value());
  cfg.weights[2] = 16384;
  EXPECT_FALSE(validate(cfg).has_value());
  FqConfig s = make_cfg(Compat::linux_5_7);
  s.priomap[15] = 3;
  s.weights[2] = 1;
  EXPECT_FALSE(validate(s).has_value());
}

TEST(Config, Defaults) {
  const FqConfig d;
  EXPECT_EQ(d.limit, 10000U);
  EXPECT_EQ(d.flow_limit, 100U);
  EXPECT_EQ(d.quantum, 3028U);
  EXPECT_EQ(d.initial_quantum, 15140U);
  EXPECT_EQ(d.buckets(), 1024U);
  EXPECT_EQ(d.timer_slack_ns, 10000U);
  EXPECT_EQ(d.low_rate_threshold, 68750U);
  EXPECT_EQ(d.horizon_us, 10'000'000U);
  EXPECT_EQ(d.compat, Compat::latest);
  const FqConfig lo = FqConfig::for_mtu(65536);  // loopback: quantum 131100, initial 655500
  EXPECT_EQ(lo.quantum, 131100U);
  EXPECT_EQ(lo.initial_quantum, 655500U);
}

}  // namespace
}  // namespace ufq::test
