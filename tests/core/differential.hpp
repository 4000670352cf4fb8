// Differential rig: drives the reference reference::FqScheduler and FqScheduler with
// the same operations and checks after every one that they decided the same:
// the packet returned (identity and the fields the scheduler writes), verdicts,
// the full FqStats, the watchdog, qlen, time_next_delayed_flow and the flows
// (as a sorted multiset). The reference also goes through the invariant
// checker (invariants.hpp), so what the fast one must equal is itself checked
// against the invariants of docs/fq-rules.md. Operations come from a Source (op_source.hpp):
// a seeded PRNG in test_differential.cpp, the fuzzer's bytes in
// fuzz/fuzz_scheduler_diff.cpp. They cover every packet field over its whole
// range, enqueues and dequeues one at a time and in bursts (enqueue_burst,
// dequeue_burst of the fast scheduler against the reference's single calls,
// mixed with single calls), owners changing rates/kind/generation, dequeues at any non-decreasing
// time (inside and outside the watchdog's [soft, hard] window), change() to
// valid and refused configurations (random_config.hpp), and reset().
// Failures are reported through a callback (gtest or abort).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "invariants.hpp"
#include "op_source.hpp"
#include "random_config.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/reference/scheduler.hpp"

namespace ufq::diff {

using Fail = std::function<void(const std::string&)>;

inline bool operator_eq(const FlowInfo& a, const FlowInfo& b) {
  return std::tie(a.key, a.qlen, a.credit, a.time_next_packet, a.state, a.band) ==
         std::tie(b.key, b.qlen, b.credit, b.time_next_packet, b.state, b.band);
}

class Rig {
 public:
  // Times stay below this, so now + horizon / offload never wraps.
  static constexpr Time kMaxNow = Time{1} << 62;

  Rig(const FqConfig& cfg, Source& src, Fail fail, std::size_t owners = 48, std::size_t packets = 4096)
      : ref_(cfg),
        fast_(cfg),
        checker_(ref_, [this](const std::string& what) { check(false, [&] { return "invariant: " + what; }); }),
        src_(src),
        fail_(std::move(fail)) {
    for (std::size_t i = 0; i < owners; ++i) {
      FlowOwner o;
      o.id = 1 + i * 977;
      o.kind = i % 5 == 4 ? random_kind() : FlowOwner::Kind::connected;
      o.tcp = src_.chance(50);
      o.pacing_rate = random_rate(src_);
      o.max_pacing_rate = src_.chance(70) ? kUnlimitedRate : random_rate(src_);
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
    if (op < 32) {
      enqueue();
    } else if (op < 40) {
      enqueue_batched();
    } else if (op < 62) {
      dequeue_burst();
    } else if (op < 70) {
      dequeue_batched();
    } else if (op < 82) {
      advance();
    } else if (op < 87) {
      touch_owner();
    } else if (op < 93) {
      wake();
    } else if (op < 97) {
      change(random_valid_change(ref_.config(), ref_.qlen(), src_));
    } else if (op < 98) {
      change(random_invalid_change(ref_.config(), src_));
    } else {
      reset();
    }
    compare();
    checker_.check(ref_, now_);
    ++ops_;
    return !failed_;
  }

  void run(std::size_t max_ops) {
    for (std::size_t i = 0; i < max_ops && step();) ++i;
  }

  std::size_t ops() const { return ops_; }
  bool failed() const { return failed_; }
  const FqStats& last_stats() const { return last_; }
  // What the input reached beyond the counters.
  std::size_t refused_changes() const { return refused_changes_; }
  std::size_t accepted_changes() const { return accepted_changes_; }
  std::size_t window_wakes() const { return window_wakes_; }  // timer fired inside [soft, hard]

 private:
  FlowOwner::Kind random_kind() {
    static constexpr std::array<FlowOwner::Kind, 4> kinds = {
        FlowOwner::Kind::connected, FlowOwner::Kind::unconnected, FlowOwner::Kind::listener,
        FlowOwner::Kind::time_wait};
    return kinds[src_.next(kinds.size())];
  }

  // `what`: a message, or a callable making one only on failure.
  template <class Msg>
  void check(bool ok, Msg&& what) {
    if (ok || failed_) return;
    failed_ = true;
    if constexpr (std::is_invocable_v<Msg>)
      fail_("op " + std::to_string(ops_) + ": " + what());
    else
      fail_("op " + std::to_string(ops_) + ": " + std::string(what));
  }

  void give_back(std::uint32_t i) { free_.push_back(i); }

  Time random_tstamp() {
    const Time horizon = Time{ref_.config().horizon_us} * kNsecPerUsec;
    switch (src_.next(12)) {
      case 0: case 1: case 2: case 3: return 0;
      case 4: return now_ - src_.next(2 * kNsecPerMsec);               // in the past
      case 5: return src_.one_of<Time>({1, now_, now_ + 1});
      case 6: return now_ + src_.next(50 * kNsecPerUsec);
      case 7: return now_ + src_.next(2 * kNsecPerMsec);
      case 8: return now_ + src_.next(200 * kNsecPerMsec);
      case 9: return now_ + horizon + src_.one_of<Time>({0, 1, ~Time{0}});   // the horizon's edge
      case 10: return now_ + horizon + src_.next(20 * kNsecPerSec);           // beyond it
      default: return src_.u64();                                             // anything, sign bit too
    }
  }

  void enqueue() {
    if (free_.empty()) return;
    const std::uint32_t i = free_.back();
    free_.pop_back();
    make_packet(i);
    const Verdict va = checker_.enqueue(ref_, pa_[i], now_);
    const Verdict vb = fast_.enqueue(pb_[i], now_);
    check(va == vb, [&] { return std::string("verdict ") + to_string(va) + " vs " + to_string(vb); });
    check(pa_[i].tstamp == pb_[i].tstamp, "tstamp after enqueue");
    if (va != Verdict::queued) give_back(i);
  }

  // Up to 24 packets in one FqScheduler::enqueue_burst; the reference takes
  // them one enqueue() at a time (through the invariant checker).
  void enqueue_batched() {
    const std::size_t n = std::min<std::size_t>(1 + src_.next(24), free_.size());
    std::array<std::uint32_t, 24> idx{};
    std::array<Packet*, 24> pkts{};
    std::array<Verdict, 24> va{}, vb{};
    for (std::size_t k = 0; k < n; ++k) {
      idx[k] = free_.back();
      free_.pop_back();
      make_packet(idx[k]);
      pkts[k] = &pb_[idx[k]];
    }
    std::size_t queued = 0;
    for (std::size_t k = 0; k < n; ++k) queued += (va[k] = checker_.enqueue(ref_, pa_[idx[k]], now_)) == Verdict::queued;
    const std::size_t got = fast_.enqueue_burst(std::span<Packet* const>(pkts.data(), n), now_, vb);
    check(got == queued, [&] { return "enqueue_burst queued " + std::to_string(got) + ", the reference " + std::to_string(queued); });
    for (std::size_t k = 0; k < n; ++k) {
      check(va[k] == vb[k], [&] {
        return "burst entry " + std::to_string(k) + ": verdict " + to_string(va[k]) + " vs " + to_string(vb[k]);
      });
      check(pa_[idx[k]].tstamp == pb_[idx[k]].tstamp, "tstamp after enqueue_burst");
      if (va[k] != Verdict::queued) give_back(idx[k]);
    }
  }

  // Packet `i` of both pools: the same random packet.
  void make_packet(std::uint32_t i) {
    Packet p{};
    switch (src_.next(8)) {
      case 5: p.len = src_.one_of<std::uint32_t>({0, 1, 65535, 65536}); break;
      case 6: p.len = static_cast<std::uint32_t>(src_.between(1, 65535)); break;
      case 7: p.len = static_cast<std::uint32_t>(src_.between(65537, 512 * 1024)); break;  // BIG TCP GSO
      default: p.len = static_cast<std::uint32_t>(src_.between(64, 1514)); break;
    }
    p.segments = static_cast<std::uint16_t>(src_.chance(80) ? src_.between(1, 3) : src_.next(65536));
    p.priority = static_cast<std::uint8_t>(src_.chance(60) ? 0 : src_.next(256));
    p.ect = src_.coin();
    p.hash = src_.chance(50) ? static_cast<std::uint32_t>(src_.next(64)) : src_.u32();
    p.owner = src_.chance(15) ? nullptr : &owners_[src_.next(owners_.size())];
    p.tstamp = random_tstamp();
    p.cookie = i;
    pa_[i] = p;
    pb_[i] = p;
  }

  void compare_packet(Packet* a, Packet* b, const char* where) {
    check((a == nullptr) == (b == nullptr),
          [&] { return std::string(where) + ": one returned a packet, the other not"; });
    if (!a || !b) return;
    check(a->cookie == b->cookie, [&] {
      return std::string(where) + ": packet " + std::to_string(a->cookie) + " vs " + std::to_string(b->cookie);
    });
    check(a->due == b->due && a->ce == b->ce && a->tstamp == b->tstamp,
          [&] { return std::string(where) + ": packet fields"; });
  }

  void dequeue_burst() {
    const std::uint64_t n = 1 + src_.next(8);
    for (std::uint64_t k = 0; k < n && !failed_; ++k) {
      Packet* a = checker_.dequeue(ref_, now_);
      Packet* b = fast_.dequeue(now_);
      compare_packet(a, b, "dequeue");
      if (a) give_back(static_cast<std::uint32_t>(a->cookie));
      if (!a || !b) break;
      if (src_.chance(30)) forward(src_.next(20 * kNsecPerUsec));
    }
  }

  // Up to 40 packets at one time from FqScheduler::dequeue_burst (its out
  // span sometimes exactly as long as what is due); the reference dequeues
  // one at a time until it has as many or returns nullptr.
  void dequeue_batched() {
    const std::size_t room = 1 + src_.next(40);
    std::array<Packet*, 40> out{};
    const std::size_t nb = fast_.dequeue_burst(now_, std::span<Packet*>(out.data(), room));
    check(nb <= room, "dequeue_burst: more than room");
    std::size_t na = 0;
    for (; na < room && !failed_; ++na) {
      Packet* a = checker_.dequeue(ref_, now_);
      if (!a) break;
      compare_packet(a, na < nb ? out[na] : nullptr, "dequeue_burst");
      give_back(static_cast<std::uint32_t>(a->cookie));
    }
    check(na == nb, [&] { return "dequeue_burst returned " + std::to_string(nb) + ", the reference " + std::to_string(na); });
  }

  void forward(Time by) { now_ = std::min(now_ + by, std::max(now_, kMaxNow)); }

  void advance() {
    switch (src_.next(10)) {
      case 0: forward(3 * kNsecPerSec + src_.next(2 * kNsecPerSec)); break;  // GC-long idle gaps
      case 1: forward(src_.next(100 * kNsecPerMsec)); break;
      case 2: break;
      case 3: forward(src_.next(3600 * kNsecPerSec)); break;
      case 4: forward(src_.next(10 * kNsecPerMsec)); break;
      default: forward(src_.next(100 * kNsecPerUsec)); break;
    }
  }

  void touch_owner() {
    FlowOwner& o = owners_[src_.next(owners_.size())];
    switch (src_.next(6)) {
      case 0: o.pacing_rate = random_rate(src_); break;
      case 1: o.max_pacing_rate = random_rate(src_); break;
      case 2: ++o.hash_generation; break;  // the id reused by a new socket
      case 3: o.tcp = !o.tcp; break;
      case 4: o.kind = random_kind(); break;  // the socket changed state
      default: o.pacing_rate = o.max_pacing_rate = random_rate(src_); break;  // SO_MAX_PACING_RATE
    }
  }

  // The caller's timer fires somewhere in the watchdog's window [soft, hard]
  // (or after it; or the caller wakes early for another reason, with no
  // expiry), then dequeues.
  void wake() {
    const Watchdog& w = ref_.watchdog();
    if (w.queued() && w.soft_expiry() < kMaxNow) {
      const Time soft = w.soft_expiry();
      const Time hard = std::min(w.hard_expiry(), kMaxNow);
      Time t = soft;
      bool fires = true;
      switch (src_.next(6)) {
        case 0: break;
        case 1: t = hard; break;
        case 2: t = hard + 1 + src_.next(kNsecPerMsec); break;  // late (loaded machine)
        case 3: t = soft - std::min(soft, 1 + src_.next(100 * kNsecPerUsec)); fires = false; break;
        default: t = src_.between(soft, hard); break;
      }
      if (fires && t <= hard) ++window_wakes_;
      now_ = std::max(now_, std::min(t, kMaxNow));
      if (fires) {
        ref_.watchdog().expire();
        fast_.watchdog().expire();
      }
    }
    dequeue_burst();
  }

  void change(const FqConfig& c) {
    std::vector<std::uint64_t> ta, tb;
    bool eb = false;
    std::size_t nb = 0;
    const std::optional<std::size_t> na =
        checker_.change(ref_, c, now_, [&](Packet& p) { ta.push_back(p.cookie); });
    try {
      nb = fast_.change(c, now_, [&](Packet& p) { tb.push_back(p.cookie); });
    } catch (const ConfigError&) {
      eb = true;
    }
    check(!na.has_value() == eb && na.value_or(0) == nb && ta == tb, "change(): refusal or trimmed packets");
    ++(na ? accepted_changes_ : refused_changes_);
    for (std::uint64_t i : ta) {
      compare_packet(&pa_[i], &pb_[i], "trimmed");
      give_back(static_cast<std::uint32_t>(i));
    }
  }

  void reset() {
    std::vector<std::uint64_t> ta, tb;
    checker_.reset(ref_, [&](Packet& p) { ta.push_back(p.cookie); });
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
    check(ref_.config() == fast_.config(), "config differs");
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

  reference::FqScheduler ref_;
  FqScheduler fast_;
  inv::Checker<reference::FqScheduler> checker_;
  Source& src_;
  Fail fail_;
  std::deque<FlowOwner> owners_;
  std::vector<Packet> pa_, pb_;
  std::vector<std::uint32_t> free_;
  Time now_ = 10 * kNsecPerSec;
  std::size_t ops_ = 0;
  bool failed_ = false;
  FqStats last_;
  std::size_t refused_changes_ = 0, accepted_changes_ = 0, window_wakes_ = 0;
};

}  // namespace ufq::diff
