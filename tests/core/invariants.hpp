// An independent invariant checker for an fq scheduler (reference::FqScheduler,
// FqScheduler, or a test wrapper with the same interface). It drives the
// scheduler (enqueue/dequeue/change/reset go through it) and keeps a shadow
// model of what is really queued: every held packet with its flow key (derived
// here from docs/fq-rules.md#classification), its time_to_send and its arrival order, so per
// flow a FIFO ordered by (time_to_send, arrival). From that model alone it
// predicts every enqueue verdict and checks, after every operation:
//  * counters reconcile: offered = dequeued + drops + purged + qlen, and each
//    counter the model can know (drops by cause, bytes, segments, backlog,
//    fast-path and high-priority packets, CE marks, trims, purges) is exact;
//  * no packet leaves before its time: due = max(time_to_send, the flow's
//    pacing time) and due <= now + offload_horizon (docs/fq-rules.md#throttling: timer slack never
//    lets a packet out early; the throttle applies with nopacing too), the
//    internal queue first and unclocked (docs/fq-rules.md#internal-queue); CE exactly when late (docs/fq-rules.md#sending-and-ce-marking);
//  * within a flow, packets leave in (time_to_send, arrival) order (docs/fq-rules.md#packet-order-in-a-flow);
//  * qlen, internal qlen, backlog, band counts and every flow's qlen equal the
//    model; flows / inactive / throttled counts equal what the flows show;
//  * the watchdog: asked for exactly when dequeue has nothing to send while
//    packets are queued (then every non-empty flow is throttled beyond now),
//    its soft expiry inside [time_next_delayed_flow, + slack] (docs/fq-rules.md#watchdog-range-rule: a kept
//    timer) and exactly [tndf, tndf + slack] when re-armed; nothing else
//    touches it; time_next_delayed_flow is never later than the earliest
//    throttled flow (it may be earlier: stale after reset or socket reuse, docs/fq-rules.md#change-reset-resize);
//  * change(): a configuration validate() refuses (or one changing compat,
//    HZ, max_flows) is refused with nothing altered; a valid one is applied
//    and trims only while the queue is above the new limit.
// Failures go to a callback (gtest, or abort in the fuzzer), first one only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/reference/scheduler.hpp"
#include "ufq/stats.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

namespace ufq::inv {

using Fail = std::function<void(const std::string&)>;

// The flow key docs/fq-rules.md gives a packet (docs/fq-rules.md#classification); the internal queue gets its own.
inline constexpr std::uint64_t kInternalKey = ~std::uint64_t{0};
inline std::uint64_t flow_key(const Packet& p, const FqConfig& cfg) {
  const FlowOwner* o = p.owner;
  const bool latest = cfg.compat == Compat::latest;
  if (o == nullptr || o->kind == FlowOwner::Kind::listener || o->kind == FlowOwner::Kind::unconnected ||
      (latest && o->kind == FlowOwner::Kind::time_wait))
    return (static_cast<std::uint64_t>(p.hash & cfg.orphan_mask) << 1) | 1;
  return o->id << 1;
}

template <class Sched>
class Checker {
 public:
  // `s` must be fresh (nothing offered yet).
  Checker(const Sched& s, Fail fail) : fail_(std::move(fail)) {
    const FqStats st = s.stats(0);
    expect(st.offered == 0 && st.qlen == 0, "checker attached to a used scheduler");
  }

  bool failed() const { return failed_; }

  // ------------------------------------------------------------ enqueue
  Verdict enqueue(Sched& s, Packet& p, Time now) {
    const FqConfig& cfg = s.config();
    const bool latest = cfg.compat == Compat::latest;
    const FqStats before = s.stats(now);
    const Time tndf_before = s.time_next_delayed_flow();
    const WatchdogState wd_before = watchdog_state(s);
    const Time tstamp_in = p.tstamp;
    const Time horizon = Time{cfg.horizon_us} * kNsecPerUsec;
    const Time offload = offload_ns(cfg);

    const Verdict v = s.enqueue(p, now);
    const FqStats after = s.stats(now);
    ++exp_.offered;
    expect(watchdog_state(s) == wd_before, "enqueue touched the watchdog");

    // Predict the verdict from the model (docs/fq-rules.md#enqueue).
    Verdict want = Verdict::queued;
    bool internal = false;
    std::uint8_t band = 0;
    Time tstamp_out = tstamp_in;
    const std::uint64_t key = flow_key(p, cfg);
    const bool alloc_error = after.allocation_errors != before.allocation_errors;
    if (alloc_error) {
      expect(after.allocation_errors == before.allocation_errors + 1, "allocation_errors moved by more than 1");
      expect(cfg.max_flows != 0 && after.flows == cfg.max_flows, [&] {
        return std::string("allocation error with flows " + std::to_string(after.flows) + " below max_flows " +
                           std::to_string(cfg.max_flows));
      });
    }
    if (latest) {
      band = cfg.priomap[p.priority & 15];
      if (band_count_[band] >= cfg.limit) {
        want = Verdict::drop_limit;
        ++exp_.band_drops[band];
      } else if (tstamp_in != 0 && static_cast<std::int64_t>(tstamp_in) > static_cast<std::int64_t>(now + horizon)) {
        if (cfg.horizon_drop) {
          want = Verdict::drop_horizon;
          ++exp_.horizon_drops;
        } else {
          tstamp_out = now + horizon;
          ++exp_.horizon_caps;
        }
      }
      if (want == Verdict::queued) {
        const Time tts = tstamp_out ? tstamp_out : now;
        const bool idle_enough = total_ == 0 || (before.flows == before.inactive_flows + before.throttled_flows &&
                                                 internal_count_ < 8 && tndf_before > now + offload);
        // docs/fq-rules.md#fast-path condition 3, as ufq reads it: a full non-TCP socket with any pacing rate set.
        const FlowOwner* o = p.owner;
        const bool orphan =
            o == nullptr || o->kind == FlowOwner::Kind::listener || o->kind == FlowOwner::Kind::time_wait;
        const bool socket_paced =
            !orphan && !o->tcp && (o->max_pacing_rate != kUnlimitedRate || o->pacing_rate != kUnlimitedRate);
        if (tts <= now + offload && idle_enough && !socket_paced && cfg.maxrate == kUnlimitedRate) {
          internal = true;
          ++exp_.fastpath_packets;
          expect(!alloc_error, "allocation error on a fast-path packet");
        } else if (alloc_error) {
          internal = true;
        } else if (count_of(key) >= cfg.flow_limit) {
          want = Verdict::drop_flow_limit;
          ++exp_.flows_plimit;
        }
      }
    } else {
      if (total_ >= cfg.limit) {
        want = Verdict::drop_limit;
      } else if ((p.priority & 15) == 7 || alloc_error) {
        internal = true;
        ++exp_.highprio_packets;
      } else if (count_of(key) >= cfg.flow_limit) {
        want = Verdict::drop_flow_limit;
        ++exp_.flows_plimit;
      }
    }
    if (want != Verdict::queued) ++exp_.drops;
    if (v != want) {
      expect(false, [&] {
        return std::string(std::string("enqueue verdict ") + to_string(v) + ", the model says " + to_string(want) +
                           " (tstamp " + std::to_string(tstamp_in) + ", now " + std::to_string(now) + ")");
      });
      return v;
    }
    // A refused packet is handed back untouched, except that the horizon cap
    // (applied before the flow lookup) has already rewritten its timestamp.
    expect(p.tstamp == (want == Verdict::queued || want == Verdict::drop_flow_limit ? tstamp_out : tstamp_in),
           [&] { return std::string("packet time stamp after enqueue: " + std::to_string(p.tstamp)); });
    if (v != Verdict::queued) return v;

    const Held h{internal ? kInternalKey : key, p.tstamp ? p.tstamp : now, seq_++, band, internal};
    held_.emplace(&p, h);
    queues_[h.key].emplace(h.tts, h.seq, &p);
    ++total_;
    exp_.backlog += p.len;
    if (internal) {
      ++internal_count_;
    } else if (latest) {
      ++band_count_[band];
      last_band_[key] = band;
    }
    return v;
  }

  // ------------------------------------------------------------ dequeue
  Packet* dequeue(Sched& s, Time now) {
    const FqStats before = s.stats(now);
    const WatchdogState wd = watchdog_state(s);
    Packet* p = s.dequeue(now);
    const FqStats after = s.stats(now);
    if (p != nullptr) {
      const bool late = departed(s.config(), *p, now);
      expect(after.ce_mark == before.ce_mark + (late ? 1 : 0), "ce_mark does not follow the packet's lateness");
      expect(watchdog_state(s) == wd, "a dequeue that sent a packet touched the watchdog");
      return p;
    }
    if (total_ == 0) {
      expect(watchdog_state(s) == wd, "dequeue of an empty scheduler touched the watchdog");
      return nullptr;
    }
    expect(internal_count_ == 0, [&] {
      return std::string("nothing sent while the internal queue holds " + std::to_string(internal_count_));
    });
    nothing_to_send(s, now, wd);
    return nullptr;
  }

  // ------------------------------------------------------------ change
  // The number of packets trimmed, or nothing when change() refused `cfg`.
  std::optional<std::size_t> change(Sched& s, const FqConfig& cfg, Time now, const PacketSink& trimmed = {}) {
    const FqConfig cur = s.config();
    const bool must_refuse =
        validate(cfg).has_value() || cfg.compat != cur.compat || cfg.hz != cur.hz || cfg.max_flows != cur.max_flows;
    const Snapshot before = snapshot(s, now);
    std::size_t n = 0, late = 0, handed = 0;
    bool refused = false;
    try {
      n = s.change(cfg, now, [&](Packet& p) {
        ++handed;
        if (departed(cfg, p, now)) ++late;
        ++exp_.trimmed;
        if (trimmed) trimmed(p);
      });
    } catch (const ConfigError&) {
      refused = true;
    }
    if (refused || must_refuse) {
      expect(refused == must_refuse, refused ? "change() refused a valid configuration"
                                             : "change() accepted a configuration validate() refuses, or one "
                                               "changing compat/hz/max_flows");
      expect(!refused || (handed == 0 && snapshot(s, now) == before), "a refused change() altered the scheduler");
      if (refused) return std::nullopt;
    }
    expect(s.config() == cfg, "change() did not apply the configuration");
    expect(n == handed, [&] {
      return std::string("change() returned " + std::to_string(n) + " but handed back " + std::to_string(handed));
    });
    const FqStats after = s.stats(now);
    expect(after.ce_mark == before.stats.ce_mark + late, "ce_mark of trimmed packets");
    // Trimming stops at the limit, or when nothing may leave (then every
    // queued packet is in a throttled flow).
    if (n > 0) expect(s.qlen() >= cfg.limit, "change() trimmed below the new limit");
    if (s.qlen() > cfg.limit) {
      expect(internal_count_ == 0, "trimming stopped with internal-queue packets left");
      std::uint64_t in_throttled = 0;
      s.for_each_flow([&](const FlowInfo& f) {
        if (f.state == FlowState::throttled) in_throttled += f.qlen;
      });
      expect(in_throttled == s.qlen(), "trimming stopped while a packet could leave");
    }
    return n;
  }

  // ------------------------------------------------------------ reset
  void reset(Sched& s, const PacketSink& purged = {}) {
    const WatchdogState wd = watchdog_state(s);
    std::unordered_set<const Packet*> seen;
    s.reset([&](Packet& p) {
      expect(held_.count(&p) == 1, "reset() handed back a packet it does not hold");
      expect(seen.insert(&p).second, "reset() handed back a packet twice");
      if (purged) purged(p);
    });
    expect(seen.size() == held_.size(), [&] {
      return std::string("reset() handed back " + std::to_string(seen.size()) + " of " + std::to_string(held_.size()) +
                         " queued packets");
    });
    exp_.purged += held_.size();
    exp_.backlog = 0;
    held_.clear();
    queues_.clear();
    last_band_.clear();
    band_count_ = {};
    total_ = internal_count_ = 0;
    expect(watchdog_state(s) == wd, "reset() touched the watchdog");
  }

  // ------------------------------------------------------------ state
  // After every operation.
  void check(const Sched& s, Time now) {
    const FqConfig& cfg = s.config();
    const bool latest = cfg.compat == Compat::latest;
    const FqStats st = s.stats(now);
    expect(st.offered == st.dequeued + st.drops + st.purged + st.qlen,
           [&] { return std::string("offered != dequeued + drops + purged + qlen"); });
    const auto counter = [&](const char* name, std::uint64_t got, std::uint64_t want) {
      expect(got == want, [&] {
        return std::string(std::string(name) + " is " + std::to_string(got) + ", the model says " +
                           std::to_string(want));
      });
    };
    counter("offered", st.offered, exp_.offered);
    counter("dequeued", st.dequeued, exp_.dequeued);
    counter("drops", st.drops, exp_.drops);
    counter("purged", st.purged, exp_.purged);
    counter("trimmed", st.trimmed, exp_.trimmed);
    counter("bytes", st.bytes, exp_.bytes);
    counter("packets", st.packets, exp_.packets);
    counter("backlog", st.backlog, exp_.backlog);
    counter("flows_plimit", st.flows_plimit, exp_.flows_plimit);
    counter("horizon_drops", st.horizon_drops, exp_.horizon_drops);
    counter("horizon_caps", st.horizon_caps, exp_.horizon_caps);
    counter("fastpath_packets", st.fastpath_packets, exp_.fastpath_packets);
    counter("highprio_packets", st.highprio_packets, latest ? 0 : exp_.highprio_packets);
    counter("ce_mark", st.ce_mark, exp_.ce_mark);
    counter("qlen", st.qlen, total_);
    counter("qlen()", s.qlen(), total_);
    counter("internal_qlen", s.internal_qlen(), internal_count_);
    for (std::size_t b = 0; b < kBands; ++b) {
      counter("band_drops", st.band_drops[b], exp_.band_drops[b]);
      counter("band_pkt_count", st.band_pkt_count[b], latest ? band_count_[b] : 0);
    }
    if (cfg.max_flows != 0) expect(st.flows <= cfg.max_flows, "more flows than max_flows");

    // The flows, against the model.
    std::uint32_t nflows = 0, throttled = 0, detached = 0, empty = 0;
    std::uint64_t in_flows = 0;
    Time earliest = kNever;
    pacing_time_.clear();
    s.for_each_flow([&](const FlowInfo& f) {
      ++nflows;
      in_flows += f.qlen;
      expect(pacing_time_.emplace(f.key, f.time_next_packet).second,
             [&] { return std::string("two flows with key " + std::to_string(f.key)); });
      expect(f.qlen == count_of(f.key), [&] {
        return std::string("flow " + std::to_string(f.key) + " holds " + std::to_string(f.qlen) +
                           " packets, the model " + std::to_string(count_of(f.key)));
      });
      if (f.state == FlowState::throttled) {
        ++throttled;
        earliest = std::min(earliest, f.time_next_packet);
        expect(f.qlen > 0, "an empty flow is throttled");
      }
      if (f.state == FlowState::detached) ++detached;
      if (f.qlen == 0) ++empty;
      if (f.qlen > 0) {
        expect(f.state != FlowState::detached, "a detached flow holds packets");
        if (latest) expect(f.band == last_band_[f.key], "flow band is not its last packet's band");
      }
    });
    sent_since_check_.clear();
    counter("packets in flows", in_flows, total_ - internal_count_);
    counter("flows", st.flows, nflows);
    counter("throttled_flows", st.throttled_flows, throttled);
    counter("inactive_flows", st.inactive_flows, latest ? empty : detached);  // docs/fq-rules.md#statistics
    const Time tndf = s.time_next_delayed_flow();
    if (throttled > 0)
      expect(tndf <= earliest, [&] {
        return std::string("time_next_delayed_flow " + std::to_string(tndf) +
                           " later than the earliest throttled flow " + std::to_string(earliest));
      });
    expect(st.time_next_delayed_flow == static_cast<std::int64_t>(tndf + cfg.timer_slack_ns - now),
           "stats time_next_delayed_flow");
  }

 private:
  struct Held {
    std::uint64_t key;
    Time tts;
    std::uint64_t seq;  // arrival order
    std::uint8_t band;
    bool internal;
  };
  using Queue = std::set<std::tuple<Time, std::uint64_t, const Packet*>>;

  struct WatchdogState {
    bool queued;
    Time soft, hard;
    std::uint64_t arms, requests;
    bool operator==(const WatchdogState&) const = default;
  };
  static WatchdogState watchdog_state(const Sched& s) {
    const Watchdog& w = s.watchdog();
    return {w.queued(), w.queued() ? w.soft_expiry() : 0, w.queued() ? w.hard_expiry() : 0, w.arm_count(),
            w.request_count()};
  }

  struct Snapshot {
    FqStats stats;
    FqConfig cfg;
    WatchdogState wd;
    Time tndf;
    std::uint32_t qlen, internal;
    std::vector<std::tuple<std::uint64_t, std::uint32_t, std::int32_t, Time, FlowState, std::uint8_t>> flows;
    bool operator==(const Snapshot&) const = default;
  };
  static Snapshot snapshot(const Sched& s, Time now) {
    Snapshot x{s.stats(now),      s.config(), watchdog_state(s), s.time_next_delayed_flow(), s.qlen(),
               s.internal_qlen(), {}};
    s.for_each_flow(
        [&](const FlowInfo& f) { x.flows.emplace_back(f.key, f.qlen, f.credit, f.time_next_packet, f.state, f.band); });
    std::sort(x.flows.begin(), x.flows.end());
    return x;
  }

  static Time offload_ns(const FqConfig& cfg) {
    return cfg.compat == Compat::latest ? Time{cfg.offload_horizon_us} * kNsecPerUsec : 0;
  }

  std::uint32_t count_of(std::uint64_t key) const {
    const auto it = queues_.find(key);
    return it == queues_.end() ? 0 : static_cast<std::uint32_t>(it->second.size());
  }

  // A packet left through dequeue() or change() trimming: check it against
  // the model and forget it. Returns whether it was late (CE due).
  bool departed(const FqConfig& cfg, Packet& p, Time now) {
    const auto it = held_.find(&p);
    if (it == held_.end()) {
      expect(false, "dequeued a packet the scheduler does not hold");
      return false;
    }
    const Held h = it->second;
    const auto who = [&] { return "packet tts " + std::to_string(h.tts) + " (now " + std::to_string(now) + ")"; };
    Queue& q = queues_[h.key];
    if (internal_count_ > 0) expect(h.internal, "a flow's packet left before the internal queue's");
    expect(*q.begin() == std::make_tuple(h.tts, h.seq, static_cast<const Packet*>(&p)), [&] {
      return std::string("per-flow order: " + who() +
                         " left before an earlier (time_to_send, arrival) packet of its flow");
    });
    bool late = false;
    if (h.internal) {
      expect(p.due == h.tts && !p.ce, "internal-queue packet: due must be its time_to_send, no CE");
    } else {
      expect(p.due >= h.tts, [&] { return std::string("due earlier than time_to_send: " + who()); });
      expect(p.due <= now + offload_ns(cfg), [&] {
        return std::string("left before its time: due " + std::to_string(p.due) + " > now + offload_horizon, " + who());
      });
      // The first packet of a flow since the last check: its due is exactly the
      // later of its own time and the flow's pacing time as seen then (docs/fq-rules.md#throttling).
      if (sent_since_check_.insert(h.key).second) {
        const auto pt = pacing_time_.find(h.key);
        if (pt != pacing_time_.end())
          expect(p.due == std::max(h.tts, pt->second), [&] {
            return std::string("due " + std::to_string(p.due) + " is not max(time_to_send, flow's time_next_packet " +
                               std::to_string(pt->second) + ")");
          });
      }
      const Time ce_ns = Time{cfg.ce_threshold_us} * kNsecPerUsec;
      late = static_cast<std::int64_t>(now - p.due - ce_ns) > 0;
      expect(p.ce == (late && p.ect),
             [&] { return std::string("CE mark: " + std::string(p.ce ? "set" : "not set") + ", " + who()); });
      if (late) ++exp_.ce_mark;
      if (cfg.compat == Compat::latest) --band_count_[h.band];
    }
    q.erase(q.begin());
    if (q.empty()) queues_.erase(h.key);
    held_.erase(it);
    --total_;
    if (h.internal) --internal_count_;
    ++exp_.dequeued;
    exp_.bytes += p.len;
    exp_.packets += p.segments;
    exp_.backlog -= p.len;
    return late;
  }

  // dequeue() returned nothing with packets queued (docs/fq-rules.md#choosing-a-flow, #arming-the-watchdog, #watchdog-range-rule).
  void nothing_to_send(const Sched& s, Time now, const WatchdogState& before) {
    const FqConfig& cfg = s.config();
    const Time until = now + offload_ns(cfg);
    std::uint64_t in_throttled = 0;
    Time earliest = kNever;
    s.for_each_flow([&](const FlowInfo& f) {
      if (f.qlen == 0) return;
      earliest = std::min(earliest, f.time_next_packet);
      expect(f.state == FlowState::throttled, [&] {
        return std::string("nothing sent while flow " + std::to_string(f.key) +
                           " holds packets and is not throttled (" + to_string(f.state) + ")");
      });
      expect(f.time_next_packet > until,
             [&] { return std::string("nothing sent while flow " + std::to_string(f.key) + " is due"); });
      in_throttled += f.qlen;
    });
    expect(in_throttled == total_, "nothing sent, packets outside throttled flows");
    const Time tndf = s.time_next_delayed_flow();
    const WatchdogState w = watchdog_state(s);
    expect(tndf <= earliest, [&] {
      return "time_next_delayed_flow " + std::to_string(tndf) + " later than the earliest throttled flow " +
             std::to_string(earliest);
    });
    if (tndf == kNever) {
      // Only a flow due at ~0 itself (a time stamp of ~0 is "in the past" for
      // the signed horizon test, docs/fq-rules.md#departure-time-and-horizon): it can never be released, and the
      // kernel, like us, asks for no wake-up (docs/fq-rules.md#arming-the-watchdog).
      expect(w == before, "time_next_delayed_flow ~0, yet the watchdog was asked");
      return;
    }
    expect(w.queued, "nothing sent, throttled flows, and no watchdog queued");
    // The window's width: timer_slack, or with the adaptive slack
    // (docs/fq-rules.md#adaptive-slack) from timer_slack up to the earliest
    // flow's due time plus the maximum.
    const auto sat = [](Time a, Time b) { return a + b < a ? kNever : a + b; };
    const Time widest = cfg.adaptive_slack() ? sat(earliest, cfg.adaptive_slack_max_ns) - tndf : cfg.timer_slack_ns;
    expect(w.soft >= tndf && w.soft - tndf <= widest, [&] {
      return std::string("watchdog soft expiry " + std::to_string(w.soft) + " outside [" + std::to_string(tndf) +
                         ", +" + std::to_string(widest) + "]");
    });
    expect(w.requests == before.requests + 1, "nothing sent, throttled flows, and not one watchdog request");
    if (cfg.adaptive_slack()) {
      expect(w.hard <= sat(tndf, widest), "watchdog hard expiry past the earliest flow's maximum allowance");
      if (w.arms != before.arms)
        expect(w.arms == before.arms + 1 && w.soft == tndf && w.hard >= sat(tndf, cfg.timer_slack_ns),
               [&] { return std::string("watchdog re-armed off [tndf, tndf + timer_slack .. max]"); });
      else
        expect(before.queued && w.soft == before.soft && w.hard == before.hard, "watchdog kept but changed");
    } else if (w.arms != before.arms) {
      const Time hard = tndf + cfg.timer_slack_ns < tndf ? kNever : tndf + cfg.timer_slack_ns;
      expect(w.arms == before.arms + 1 && w.soft == tndf && w.hard == hard,
             [&] { return std::string("watchdog re-armed off [tndf, tndf + slack]"); });
    } else {
      expect(before.queued && w.soft == before.soft && w.hard == before.hard, "watchdog kept but changed");
    }
  }

  // `what` is a message or a callable making one: messages are only built on
  // failure (this runs after every fuzzer operation).
  template <class Msg>
  void expect(bool ok, Msg&& what) {
    if (ok || failed_) return;
    failed_ = true;
    if constexpr (std::is_invocable_v<Msg>)
      fail_(what());
    else
      fail_(std::string(what));
  }

  Fail fail_;
  bool failed_ = false;
  FqStats exp_;  // the counters the model knows
  std::unordered_map<const Packet*, Held> held_;
  std::map<std::uint64_t, Queue> queues_;  // per flow key; kInternalKey = internal queue
  std::unordered_map<std::uint64_t, std::uint8_t> last_band_;
  std::array<std::uint32_t, kBands> band_count_{};
  std::uint64_t total_ = 0, internal_count_ = 0, seq_ = 0;
  // Each flow's time_next_packet at the last check, and the flows that have
  // sent since (their pacing time has moved).
  std::unordered_map<std::uint64_t, Time> pacing_time_;
  std::unordered_set<std::uint64_t> sent_since_check_;
};

}  // namespace ufq::inv
