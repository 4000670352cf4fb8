// Shared helpers for the scheduler-core tests: the list of scheduler
// implementations the scenario tests run against, a packet pool, owner
// factories, enqueue/drain helpers, flow inspection and the counter invariants.
//
// Numbers in the tests are computed by hand from
// docs/fq-rules.md; the anchors quoted in comments
// ("docs/fq-rules.md#pacing-gap") refer to that document.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/reference/scheduler.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/scheduler_concept.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

// ---------------------------------------------------------------- implementations

// The scenario tests are typed tests over both implementations, under these
// names: ctest names end in <Fast> or <Reference> (CMake's test discovery
// takes the type's name; it cannot parse a typed-test name generator's names).
// Each is the implementation itself, constructors included, nothing added.
struct Fast : ufq::FqScheduler {
  using ufq::FqScheduler::FqScheduler;
};
struct Reference : ufq::reference::FqScheduler {
  using ufq::reference::FqScheduler::FqScheduler;
};

namespace ufq::test {

using Schedulers = ::testing::Types<Fast, Reference>;

template <class S>
inline constexpr bool kIsFast = std::is_base_of_v<FqScheduler, S>;

// The fixture of the edge-case scenarios (no state: each test builds its schedulers).
template <Scheduler S>
class EdgeCases : public ::testing::Test {};

inline constexpr Time kUs = kNsecPerUsec;
inline constexpr Time kMs = kNsecPerMsec;
inline constexpr Time kSec = kNsecPerSec;

// Every scenario starts at 10 s: never 0 (a zero time_next_packet means "never
// paced" and a zero tstamp means "none"), and at HZ 250 this is jiffy 2500 exactly.
inline constexpr Time kT0 = 10 * kSec;

// A rate that is "set" (so the latest fast path refuses a non-TCP owner carrying
// it) but makes every pacing gap 0: gap = plen * 1e9 / 1e15 = plen / 1e6 -> 0 for
// any plen < 1e6 bytes. Such an owner behaves as unpaced but goes through the flows.
inline constexpr Rate kHugeRate = 1'000'000'000'000'000ULL;

inline constexpr std::array<Compat, 2> kBothCompat = {Compat::linux_5_7, Compat::latest};

inline const char* compat_name(Compat c) { return c == Compat::latest ? "latest" : "linux_5_7"; }

inline FqConfig make_cfg(Compat c) {
  FqConfig cfg;
  cfg.compat = c;
  return cfg;
}

// ---------------------------------------------------------------- owners

// A connected, non-TCP socket (e.g. connected UDP) with optional pacing rates.
inline FlowOwner connected_owner(std::uint64_t id, Rate pacing_rate = kUnlimitedRate,
                                 Rate max_pacing_rate = kUnlimitedRate) {
  FlowOwner o;
  o.id = id;
  o.kind = FlowOwner::Kind::connected;
  o.tcp = false;
  o.pacing_rate = pacing_rate;
  o.max_pacing_rate = max_pacing_rate;
  return o;
}

// A connected non-TCP owner paced at `rate` through SO_MAX_PACING_RATE (both the
// pacing rate and the max pacing rate are `rate`, as setsockopt leaves them).
// Non-TCP with a max pacing rate: never fast-pathed (docs/fq-rules.md#fast-path condition 3).
inline FlowOwner rated_owner(std::uint64_t id, Rate rate) { return connected_owner(id, rate, rate); }

// An effectively unpaced owner that still goes through the flows in `latest`.
inline FlowOwner slow_owner(std::uint64_t id) { return rated_owner(id, kHugeRate); }

// A TCP socket: stamps its packets itself; fast path allowed.
inline FlowOwner tcp_owner(std::uint64_t id) {
  FlowOwner o = connected_owner(id);
  o.tcp = true;
  return o;
}

inline FlowOwner kind_owner(std::uint64_t id, FlowOwner::Kind kind, Rate rate = kUnlimitedRate,
                            bool tcp = false) {
  FlowOwner o = connected_owner(id, rate, rate);
  o.kind = kind;
  o.tcp = tcp;
  return o;
}

inline std::uint64_t owner_key(std::uint64_t id) { return id << 1; }
inline std::uint64_t hashed_key(std::uint32_t hash, std::uint32_t orphan_mask) {
  return (std::uint64_t{hash & orphan_mask} << 1) | 1U;
}

// The flow key a packet is classified into (docs/fq-rules.md#classification), as the API documents it.
inline std::uint64_t expected_key(const Packet& p, const FqConfig& cfg) {
  const FlowOwner* o = p.owner;
  if (o == nullptr || o->kind == FlowOwner::Kind::listener ||
      o->kind == FlowOwner::Kind::unconnected ||
      (o->kind == FlowOwner::Kind::time_wait && cfg.compat == Compat::latest))
    return hashed_key(p.hash, cfg.orphan_mask);
  return owner_key(o->id);
}

// ---------------------------------------------------------------- packets

inline constexpr Time kSettleDelay = kMs;
inline constexpr std::uint64_t kSentinelId = 999'999;

struct PktSpec {
  std::uint32_t len = 1514;
  FlowOwner* owner = nullptr;
  Time tstamp = 0;
  std::uint8_t priority = 0;
  std::uint32_t hash = 0;
  std::uint16_t segments = 1;
  bool ect = false;
};

// Caller-owned packets with stable addresses. `cookie` is the packet's index.
class PacketPool {
 public:
  Packet& make(const PktSpec& s) {
    std::size_t idx;
    if (free_.empty()) {
      idx = store_.size();
      store_.emplace_back();
    } else {
      idx = free_.back();
      free_.pop_back();
    }
    Packet& p = store_[idx];
    p = Packet{};
    p.len = s.len;
    p.segments = s.segments;
    p.priority = s.priority;
    p.ect = s.ect;
    p.hash = s.hash;
    p.tstamp = s.tstamp;
    p.owner = s.owner;
    p.cookie = idx;
    return p;
  }
  void release(Packet& p) { free_.push_back(static_cast<std::size_t>(p.cookie)); }
  Packet& at(std::uint64_t cookie) { return store_[static_cast<std::size_t>(cookie)]; }
  std::size_t size() const { return store_.size(); }

 private:
  std::deque<Packet> store_;
  std::vector<std::size_t> free_;
};

// Enqueue `n` packets built from `s`; returns the verdicts. Refused packets go
// back to the pool. Accepted packets are appended to `queued` when given.
template <Scheduler S>
inline std::vector<Verdict> enqueue_n(S& q, PacketPool& pool, int n, const PktSpec& s,
                                      Time now, std::vector<Packet*>* queued = nullptr) {
  std::vector<Verdict> v;
  for (int i = 0; i < n; ++i) {
    Packet& p = pool.make(s);
    const Verdict r = q.enqueue(p, now);
    v.push_back(r);
    if (r == Verdict::queued) {
      if (queued != nullptr) queued->push_back(&p);
    } else {
      pool.release(p);
    }
  }
  return v;
}

inline std::size_t count_queued(const std::vector<Verdict>& v) {
  std::size_t n = 0;
  for (Verdict r : v) n += r == Verdict::queued ? 1U : 0U;
  return n;
}

// Dequeue at `now` until nullptr (or `max` packets).
template <Scheduler S>
inline std::vector<Packet*> drain(S& q, Time now,
                                  std::size_t max = std::numeric_limits<std::size_t>::max()) {
  std::vector<Packet*> out;
  while (out.size() < max) {
    Packet* p = q.dequeue(now);
    if (p == nullptr) break;
    out.push_back(p);
  }
  return out;
}

// docs/fq-rules.md#internal-queue: a dequeue on an empty qdisc returns at once, so flows emptied by the
// last packets stay on their lists. settle() makes one dequeue walk every list
// without sending anything: it queues one packet of `sentinel` stamped
// now + 1 ms, and dequeues at `now` (expected: nothing). Empty flows on the
// lists are then detached (or, in 5.7, moved from new_flows to old_flows
// and then detached); the sentinel's flow ends up throttled until now + 1 ms.
template <Scheduler S>
inline void settle(S& q, PacketPool& pool, FlowOwner& sentinel, Time now) {
  Packet& p = pool.make({.len = 64, .owner = &sentinel, .tstamp = now + kSettleDelay});
  ASSERT_EQ(q.enqueue(p, now), Verdict::queued);
  ASSERT_EQ(q.dequeue(now), nullptr);
}

template <Scheduler S>
inline std::vector<FlowInfo> all_flows(const S& q) {
  std::vector<FlowInfo> v;
  q.for_each_flow([&](const FlowInfo& f) { v.push_back(f); });
  return v;
}

template <Scheduler S>
inline std::optional<FlowInfo> find_flow(const S& q, std::uint64_t key) {
  std::optional<FlowInfo> r;
  q.for_each_flow([&](const FlowInfo& f) {
    if (f.key == key) r = f;
  });
  return r;
}

// Earliest time_next_packet among throttled flows (kNever when none).
template <Scheduler S>
inline Time earliest_throttled(const S& q) {
  Time t = kNever;
  q.for_each_flow([&](const FlowInfo& f) {
    if (f.state == FlowState::throttled && f.time_next_packet < t) t = f.time_next_packet;
  });
  return t;
}

// The counter invariants of edge case E45 and ufq's own accounting identity.
// `expected_backlog` (bytes held, as the caller tracks them) is checked when given.
template <Scheduler S>
inline void expect_consistent(const S& q, Time now,
                              std::optional<std::uint64_t> expected_backlog = std::nullopt) {
  const FqStats st = q.stats(now);
  EXPECT_EQ(st.offered, st.dequeued + st.drops + st.purged + st.qlen) << "offered identity";
  EXPECT_LE(st.trimmed, st.dequeued);
  EXPECT_EQ(st.qlen, q.qlen());
  std::uint64_t flow_pkts = 0;
  std::uint32_t nflows = 0, throttled = 0, detached = 0, empty = 0;
  Time earliest = kNever;
  q.for_each_flow([&](const FlowInfo& f) {
    flow_pkts += f.qlen;
    ++nflows;
    if (f.state == FlowState::throttled) {
      ++throttled;
      if (f.time_next_packet < earliest) earliest = f.time_next_packet;
    }
    if (f.state == FlowState::detached) {
      ++detached;
      EXPECT_EQ(f.qlen, 0U) << "a detached flow holds packets, key " << f.key;
    }
    if (f.qlen == 0) ++empty;
  });
  EXPECT_EQ(std::uint64_t{st.qlen}, flow_pkts + q.internal_qlen()) << "qlen = sum flow qlen + internal";
  EXPECT_EQ(st.flows, nflows);
  EXPECT_EQ(st.throttled_flows, throttled);
  // docs/fq-rules.md#statistics: inactive_flows counts detached flows in 5.7, flows without packets in latest.
  if (q.config().compat == Compat::latest) {
    EXPECT_EQ(st.inactive_flows, empty) << "latest: inactive = flows with qlen 0";
    std::uint64_t band_sum = 0;
    for (std::uint32_t c : st.band_pkt_count) band_sum += c;
    EXPECT_EQ(band_sum, std::uint64_t{st.qlen} - q.internal_qlen())
        << "latest: sum band_pkt_count = qlen - internal";
    EXPECT_EQ(st.highprio_packets, 0U);
  } else {
    EXPECT_EQ(st.inactive_flows, detached) << "5.7: inactive = detached flows";
    EXPECT_EQ(st.fastpath_packets, 0U);
    for (std::uint32_t c : st.band_pkt_count) {
      EXPECT_EQ(c, 0U);
    }
  }
  // The throttled set's earliest member can never be earlier than the cached
  // time_next_delayed_flow (which may be stale-early after reset/socket reuse).
  EXPECT_LE(q.time_next_delayed_flow(), earliest);
  if (expected_backlog) {
    EXPECT_EQ(st.backlog, *expected_backlog) << "backlog bytes";
  }
  EXPECT_EQ(st.overlimits, 0U);
  EXPECT_EQ(st.tcp_retrans, 0U);
}

inline std::vector<std::uint64_t> cookies(const std::vector<Packet*>& v) {
  std::vector<std::uint64_t> c;
  for (const Packet* p : v) c.push_back(p->cookie);
  return c;
}

}  // namespace ufq::test
