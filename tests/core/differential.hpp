// Differential rig: drives the reference FqScheduler and FastFqScheduler with
// the same operations and checks after every one that they decided the same:
// the packet returned (identity and the fields the scheduler writes), verdicts,
// the full FqStats, the watchdog, qlen, time_next_delayed_flow and the flows
// (as a sorted multiset). Operations come from a Source: a seeded PRNG in
// test_differential.cpp, the fuzzer's bytes in fuzz/fuzz_scheduler_diff.cpp.
// Failures are reported through a callback (gtest or abort).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "ufq/fast_scheduler.hpp"
#include "ufq/scheduler.hpp"

namespace ufq::diff {

// Where operations come from: next(n) returns a value in [0, n).
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t next(std::uint64_t n) = 0;
  virtual bool done() const = 0;
  bool chance(unsigned percent) { return next(100) < percent; }
};

using Fail = std::function<void(const std::string&)>;

inline bool operator_eq(const FlowInfo& a, const FlowInfo& b) {
  return std::tie(a.key, a.qlen, a.credit, a.time_next_packet, a.state, a.band) ==
         std::tie(b.key, b.qlen, b.credit, b.time_next_packet, b.state, b.band);
}

class Rig {
 public:
  Rig(const FqConfig& cfg, Source& src, Fail fail, std::size_t owners = 48, std::size_t packets = 4096)
      : ref_(cfg), fast_(cfg), src_(src), fail_(std::move(fail)), cfg_(cfg) {
    static constexpr std::array<FlowOwner::Kind, 4> kinds = {
        FlowOwner::Kind::connected, FlowOwner::Kind::unconnected, FlowOwner::Kind::listener,
        FlowOwner::Kind::time_wait};
    for (std::size_t i = 0; i < owners; ++i) {
      FlowOwner o;
      o.id = 1 + i * 977;
      o.kind = i % 5 == 4 ? kinds[1 + src_.next(3)] : FlowOwner::Kind::connected;
      o.tcp = src_.chance(50);
      o.pacing_rate = random_rate();
      o.max_pacing_rate = src_.chance(70) ? kUnlimitedRate : random_rate();
      owners_.push_back(o);
    }
    pa_.resize(packets);
    pb_.resize(packets);
    for (std::size_t i = packets; i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
  }

  // One operation; false once the source is exhausted.
  bool step() {
    if (src_.done()) return false;
    const std::uint64_t op = src_.next(100);
    if (op < 45) {
      enqueue();
    } else if (op < 80) {
      dequeue_burst();
    } else if (op < 90) {
      advance();
    } else if (op < 94) {
      touch_owner();
    } else if (op < 97) {
      expire_watchdog();
    } else if (op < 99) {
      change();
    } else {
      reset();
    }
    compare();
    ++ops_;
    return !failed_;
  }

  void run(std::size_t max_ops) {
    for (std::size_t i = 0; i < max_ops && step();) ++i;
  }

  std::size_t ops() const { return ops_; }
  bool failed() const { return failed_; }
  const FqStats& last_stats() const { return last_; }

 private:
  Rate random_rate() {
    switch (src_.next(6)) {
      case 0: return kUnlimitedRate;
      case 1: return 10'000 + src_.next(60'000);           // below low_rate_threshold
      case 2: return 1'000'000 + src_.next(10'000'000);
      case 3: return 100'000'000 + src_.next(1'000'000'000);
      case 4: return 0;
      default: return 125'000'000;
    }
  }

  void check(bool ok, const std::string& what) {
    if (!ok && !failed_) {
      failed_ = true;
      fail_("op " + std::to_string(ops_) + ": " + what);
    }
  }

  void give_back(std::uint32_t i) { free_.push_back(i); }

  void enqueue() {
    if (free_.empty()) return;
    const std::uint32_t i = free_.back();
    free_.pop_back();
    Packet p{};
    p.len = src_.chance(10) ? static_cast<std::uint32_t>(1 + src_.next(65535))
                            : static_cast<std::uint32_t>(64 + src_.next(1451));
    p.segments = static_cast<std::uint16_t>(1 + src_.next(3));
    p.priority = static_cast<std::uint8_t>(src_.chance(70) ? 0 : src_.next(16));
    p.ect = src_.chance(50);
    p.hash = static_cast<std::uint32_t>(src_.next(1ULL << 32));
    p.owner = src_.chance(15) ? nullptr : &owners_[src_.next(owners_.size())];
    switch (src_.next(8)) {
      case 0: case 1: case 2: p.tstamp = 0; break;
      case 3: p.tstamp = now_ + src_.next(2 * kNsecPerMsec); break;
      case 4: p.tstamp = now_ > kNsecPerMsec ? now_ - src_.next(kNsecPerMsec) : 1; break;  // early
      case 5: p.tstamp = now_ + src_.next(20 * kNsecPerSec); break;   // around the horizon
      case 6: p.tstamp = now_ + src_.next(50 * kNsecPerUsec); break;
      default: p.tstamp = now_ + src_.next(200 * kNsecPerUsec); break;
    }
    if (p.tstamp == 0 && src_.chance(5)) p.tstamp = 0;
    p.cookie = i;
    pa_[i] = p;
    pb_[i] = p;
    const Verdict va = ref_.enqueue(pa_[i], now_);
    const Verdict vb = fast_.enqueue(pb_[i], now_);
    check(va == vb, std::string("verdict ") + to_string(va) + " vs " + to_string(vb));
    check(pa_[i].tstamp == pb_[i].tstamp, "tstamp after enqueue");
    if (va != Verdict::queued) give_back(i);
  }

  void compare_packet(Packet* a, Packet* b, const char* where) {
    check((a == nullptr) == (b == nullptr), std::string(where) + ": one returned a packet, the other not");
    if (!a || !b) return;
    check(a->cookie == b->cookie, std::string(where) + ": packet " + std::to_string(a->cookie) + " vs " +
                                      std::to_string(b->cookie));
    check(a->due == b->due && a->ce == b->ce && a->tstamp == b->tstamp, std::string(where) + ": packet fields");
  }

  void dequeue_burst() {
    const std::uint64_t n = 1 + src_.next(8);
    for (std::uint64_t k = 0; k < n && !failed_; ++k) {
      Packet* a = ref_.dequeue(now_);
      Packet* b = fast_.dequeue(now_);
      compare_packet(a, b, "dequeue");
      if (a) give_back(static_cast<std::uint32_t>(a->cookie));
      if (!a || !b) break;
      if (src_.chance(30)) now_ += src_.next(20 * kNsecPerUsec);
    }
  }

  void advance() {
    switch (src_.next(10)) {
      case 0: now_ += 3 * kNsecPerSec + src_.next(2 * kNsecPerSec); break;  // GC-long idle gaps
      case 1: now_ += src_.next(100 * kNsecPerMsec); break;
      case 2: break;
      default: now_ += src_.next(100 * kNsecPerUsec); break;
    }
  }

  void touch_owner() {
    FlowOwner& o = owners_[src_.next(owners_.size())];
    switch (src_.next(4)) {
      case 0: o.pacing_rate = random_rate(); break;
      case 1: o.max_pacing_rate = random_rate(); break;
      case 2: ++o.hash_generation; break;  // the id reused by a new socket
      default: o.tcp = !o.tcp; break;
    }
  }

  void expire_watchdog() {
    // The caller's timer fires at its soft expiry (plus a little).
    if (ref_.watchdog().queued()) {
      now_ = std::max(now_, ref_.watchdog().soft_expiry() + src_.next(cfg_.timer_slack_ns + 1));
      ref_.watchdog().expire();
      fast_.watchdog().expire();
    }
  }

  FqConfig random_change() {
    FqConfig c = ref_.config();
    switch (src_.next(12)) {
      case 0: c.limit = static_cast<std::uint32_t>(1 + src_.next(ref_.qlen() + 4)); break;  // trims
      case 1: c.buckets_log = static_cast<std::uint8_t>(1 + src_.next(12)); break;           // resize
      case 2: c.flow_limit = static_cast<std::uint32_t>(1 + src_.next(20)); break;
      case 3: c.quantum = static_cast<std::uint32_t>(256 + src_.next(8000)); break;
      case 4: c.maxrate = src_.chance(50) ? kUnlimitedRate : 1'000'000 + src_.next(100'000'000); break;
      case 5: c.ce_threshold_us = src_.chance(50) ? kCeThresholdDisabled : static_cast<std::uint32_t>(src_.next(200)); break;
      case 6: c.horizon_drop = !c.horizon_drop; break;
      case 7: c.pacing = !c.pacing; break;
      case 8: c.weights[src_.next(kBands)] = static_cast<std::int32_t>(kMinWeight + src_.next(600000)); break;
      case 9: c.priomap[src_.next(16)] = static_cast<std::uint8_t>(src_.next(kBands)); break;
      case 10: c.timer_slack_ns = c.timer_slack_ns ? 0 : 10000; break;
      default: c.limit = 10000; c.flow_limit = 100; break;
    }
    return c;
  }

  void change() {
    const FqConfig c = random_change();
    std::vector<std::uint64_t> ta, tb;
    bool ea = false, eb = false;
    std::size_t na = 0, nb = 0;
    try {
      na = ref_.change(c, now_, [&](Packet& p) { ta.push_back(p.cookie); });
    } catch (const ConfigError&) {
      ea = true;
    }
    try {
      nb = fast_.change(c, now_, [&](Packet& p) { tb.push_back(p.cookie); });
    } catch (const ConfigError&) {
      eb = true;
    }
    check(ea == eb && na == nb && ta == tb, "change(): trimmed packets");
    for (std::uint64_t i : ta) {
      compare_packet(&pa_[i], &pb_[i], "trimmed");
      give_back(static_cast<std::uint32_t>(i));
    }
  }

  void reset() {
    std::vector<std::uint64_t> ta, tb;
    ref_.reset([&](Packet& p) { ta.push_back(p.cookie); });
    fast_.reset([&](Packet& p) { tb.push_back(p.cookie); });
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    check(ta == tb, "reset(): purged packets");
    for (std::uint64_t i : ta) give_back(static_cast<std::uint32_t>(i));
  }

  static std::vector<FlowInfo> flows(const auto& q) {
    std::vector<FlowInfo> v;
    q.for_each_flow([&](const FlowInfo& f) { v.push_back(f); });
    std::sort(v.begin(), v.end(), [](const FlowInfo& a, const FlowInfo& b) {
      return std::tie(a.key, a.qlen, a.credit, a.time_next_packet, a.state, a.band) <
             std::tie(b.key, b.qlen, b.credit, b.time_next_packet, b.state, b.band);
    });
    return v;
  }

  void compare() {
    const FqStats sa = ref_.stats(now_);
    const FqStats sb = fast_.stats(now_);
    check(sa == sb, "stats differ");
    check(sa.offered == sa.dequeued + sa.drops + sa.purged + sa.qlen, "offered = dequeued + drops + purged + qlen");
    check(ref_.qlen() == fast_.qlen() && ref_.internal_qlen() == fast_.internal_qlen(), "qlen");
    check(ref_.time_next_delayed_flow() == fast_.time_next_delayed_flow(), "time_next_delayed_flow");
    const Watchdog& wa = ref_.watchdog();
    const Watchdog& wb = fast_.watchdog();
    check(wa.queued() == wb.queued() && wa.arm_count() == wb.arm_count() &&
              wa.request_count() == wb.request_count() &&
              (!wa.queued() || (wa.soft_expiry() == wb.soft_expiry() && wa.hard_expiry() == wb.hard_expiry())),
          "watchdog");
    const auto fa = flows(ref_);
    const auto fb = flows(fast_);
    check(fa.size() == fb.size() && std::equal(fa.begin(), fa.end(), fb.begin(), operator_eq), "flows differ");
    last_ = sa;
  }

  FqScheduler ref_;
  FastFqScheduler fast_;
  Source& src_;
  Fail fail_;
  FqConfig cfg_;
  std::deque<FlowOwner> owners_;
  std::vector<Packet> pa_, pb_;
  std::vector<std::uint32_t> free_;
  Time now_ = 10 * kNsecPerSec;
  std::size_t ops_ = 0;
  bool failed_ = false;
  FqStats last_;
};

}  // namespace ufq::diff
