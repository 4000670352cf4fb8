// The reference fq scheduler (ufq::reference::FqScheduler). Data structures
// mirror the kernel's (a hash table of ordered trees for flow lookup, per-flow
// FIFO plus ordered tree for packets, an ordered throttled set, singly linked
// round-robin lists) so that this file is the oracle the public scheduler
// (src/core/scheduler.cpp) is compared with. Each decision cites the
// section of docs/fq-rules.md it implements.

#include "ufq/reference/scheduler.hpp"
#include "ufq/scheduler_concept.hpp"

#include "burst.hpp"
#include "fq_rules.hpp"
#include "packet_bits.hpp"

#include <boost/intrusive/rbtree.hpp>
#include <boost/intrusive/set.hpp>

#include <algorithm>
#include <array>
#include <vector>

namespace ufq::reference {

namespace bi = boost::intrusive;

namespace {

// Credits and band credits are signed 32-bit and wrap like the kernel's
// (which is built with -fno-strict-overflow); do the arithmetic unsigned.
std::int32_t wrap_add(std::int32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + b);
}
std::int32_t wrap_sub(std::int32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - b);
}

using detail::PacketTree;

struct Flow {
  bi::set_member_hook<> table_hook;  // in its bucket's tree
  bi::set_member_hook<> rate_hook;   // in the throttled set
  Packet* head = nullptr;            // in-order FIFO
  Packet* tail = nullptr;
  PacketTree t_root;                 // out-of-order packets
  Flow* next = nullptr;              // round-robin list link, or free-list link
  Flow* age_prev = nullptr;          // detached-flow list, oldest detach first (GC)
  Flow* age_next = nullptr;
  std::uint64_t key = 0;
  std::uint64_t age = 0;             // jiffies | 1 when it became detached
  Time time_next_packet = 0;
  Time slack_deadline = 0;           // while throttled with the adaptive slack: the latest wake-up
  std::uint32_t socket_hash = 0;
  std::uint32_t qlen = 0;
  std::int32_t credit = 0;
  std::uint8_t band = 0;
  FlowState state = FlowState::detached;
};

// The kernel's tree compares socket pointers "reversed" (greater keys to the
// right); we keep that order so the search path visits the same kind of nodes.
struct ByKeyReversed {
  bool operator()(const Flow& a, const Flow& b) const { return a.key > b.key; }
};
using FlowTree = bi::rbtree<Flow, bi::member_hook<Flow, bi::set_member_hook<>, &Flow::table_hook>,
                            bi::compare<ByKeyReversed>, bi::constant_time_size<false>>;

struct ByTimeNextPacket {
  bool operator()(const Flow& a, const Flow& b) const { return a.time_next_packet < b.time_next_packet; }
};
// Throttled flows by due time; ties in throttle order (upper-bound insert).
using ThrottledSet =
    bi::multiset<Flow, bi::member_hook<Flow, bi::set_member_hook<>, &Flow::rate_hook>,
                 bi::compare<ByTimeNextPacket>, bi::constant_time_size<false>>;

struct FlowList {
  Flow* first = nullptr;
  Flow* last = nullptr;
};

struct Band {
  FlowList new_flows;
  FlowList old_flows;
  std::int32_t credit = 0;
  std::int32_t quantum = 0;  // the band's weight
};

// Flow objects in chunks with a free list: a flow costs an allocation only
// when the pool grows, never in steady state. `cap` (0 = none) models the
// kernel's allocation failure.
class FlowPool {
 public:
  explicit FlowPool(std::uint32_t cap) : cap_(cap) {}

  Flow* allocate() {
    if (!free_) {
      if (cap_ && capacity_ >= cap_) return nullptr;
      std::size_t n = std::clamp<std::size_t>(capacity_ / 2, 64, 65536);
      if (cap_) n = std::min<std::size_t>(n, cap_ - capacity_);
      chunks_.push_back(std::make_unique<Flow[]>(n));
      Flow* chunk = chunks_.back().get();
      for (std::size_t i = n; i-- > 0;) {
        chunk[i].next = free_;
        free_ = &chunk[i];
      }
      capacity_ += n;
    }
    Flow* f = free_;
    free_ = f->next;
    return f;
  }

  void release(Flow* f) {
    // Hooks are unlinked and the packet tree empty by now; reset the rest.
    f->head = f->tail = nullptr;
    f->time_next_packet = 0;
    f->qlen = 0;
    f->credit = 0;
    f->band = 0;
    f->state = FlowState::detached;
    f->age_prev = f->age_next = nullptr;
    f->next = free_;
    free_ = f;
  }

 private:
  std::vector<std::unique_ptr<Flow[]>> chunks_;
  Flow* free_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint32_t cap_;
};

// Flows freed per enqueue at most (docs/fq-rules.md#garbage-collection): the kernel's FQ_GC_MAX in 5.7; the
// newest kernel frees every candidate on its search path (a red-black path, so
// a few dozen at most), which the age-ordered rule bounds at 64.
inline constexpr std::size_t kGcMax57 = 8;
inline constexpr std::size_t kGcMaxLatest = 64;

// The multiplicative hash of the kernel's hash_ptr() on 64-bit hosts.
std::uint32_t bucket_of(std::uint64_t key, std::uint8_t log) {
  return static_cast<std::uint32_t>((key * 0x61C8864680B583EBULL) >> (64 - log));
}

}  // namespace

class FqScheduler::Impl {
 public:
  explicit Impl(const FqConfig& cfg) : pool_(cfg.max_flows) {
    if (auto err = validate(cfg)) throw *err;
    apply(cfg);
    buckets_ = std::make_unique<FlowTree[]>(cfg.buckets());
    internal_.state = FlowState::old_list;  // never detached: it is never listed or hashed
  }

  // Forget the packets still held without touching them: the caller may already
  // have freed them (call reset() first to get them back).
  ~Impl() {
    delayed_.clear();
    for (std::uint32_t i = 0; i < cfg_.buckets(); ++i) buckets_[i].clear();
  }

  // ---------------------------------------------------------------- enqueue
  Verdict enqueue(Packet& pkt, Time now) {
    ++st_.offered;
    return latest_ ? enqueue_latest(pkt, now) : enqueue_5_7(pkt, now);
  }

  Verdict enqueue_latest(Packet& pkt, Time now) {
    // docs/fq-rules.md#admission-limit: the limit applies per band.
    const std::uint8_t band = cfg_.priomap[pkt.priority & 15];
    if (band_pkt_count_[band] >= cfg_.limit) {
      ++st_.band_drops[band];
      return drop(Verdict::drop_limit);
    }
    // docs/fq-rules.md#departure-time-and-horizon: departure time, horizon.
    if (pkt.tstamp == 0) {
      pkt.time_to_send_ = now;
    } else {
      if (static_cast<std::int64_t>(pkt.tstamp) > static_cast<std::int64_t>(now + horizon_ns_)) {
        if (cfg_.horizon_drop) {
          ++st_.horizon_drops;
          return drop(Verdict::drop_horizon);
        }
        ++st_.horizon_caps;
        pkt.tstamp = now + horizon_ns_;
      }
      pkt.time_to_send_ = pkt.tstamp;
    }

    Flow* f = classify(pkt, now);
    if (f != &internal_) {
      // docs/fq-rules.md#flow-limit
      if (f->qlen >= cfg_.flow_limit) {
        ++st_.flows_plimit;
        return drop(Verdict::drop_flow_limit);
      }
      // docs/fq-rules.md#activation-and-refill: activation goes to the new list of the flow's previous band.
      if (f->state == FlowState::detached) {
        age_unlink(f);
        add_tail(f, FlowState::new_list);
        refill_after_idle(f, now);
      }
      f->band = band;
      ++band_pkt_count_[band];
      detail::set_band(pkt, band);
      if (f->qlen == 0) --inactive_flows_;
    }
    link(f, pkt);
    return Verdict::queued;
  }

  Verdict enqueue_5_7(Packet& pkt, Time now) {
    // docs/fq-rules.md#admission-limit S: one global limit.
    if (qlen_ >= cfg_.limit) return drop(Verdict::drop_limit);
    // docs/fq-rules.md#departure-time-and-horizon S: no horizon.
    pkt.time_to_send_ = pkt.tstamp ? pkt.tstamp : now;
    detail::set_band(pkt, 0);

    Flow* f = classify(pkt, now);
    if (f != &internal_ && f->qlen >= cfg_.flow_limit) {
      ++st_.flows_plimit;
      return drop(Verdict::drop_flow_limit);
    }
    if (f->state == FlowState::detached && f != &internal_) {
      age_unlink(f);
      add_tail(f, FlowState::new_list);
      refill_after_idle(f, now);
      --inactive_flows_;  // 5.7 counts detached flows as inactive
    }
    link(f, pkt);
    if (f == &internal_) ++st_.highprio_packets;
    return Verdict::queued;
  }

  Verdict drop(Verdict why) {
    ++st_.drops;
    return why;
  }

  // docs/fq-rules.md#activation-and-refill: a flow idle longer than refill_delay
  // gets at least one quantum. The max is on unsigned values, so a negative
  // credit (huge as u32) is kept.
  void refill_after_idle(Flow* f, Time now) {
    if (time_after(jiffies(now), f->age + refill_delay_jiffies_))
      f->credit = static_cast<std::int32_t>(
          std::max(static_cast<std::uint32_t>(f->credit), cfg_.quantum));
  }

  void link(Flow* f, Packet& pkt) {
    ++f->qlen;
    flow_queue_add(f, pkt);
    st_.backlog += pkt.len;
    ++qlen_;
  }

  // docs/fq-rules.md#packet-order-in-a-flow: in-order packets go to the FIFO, earlier ones to the tree.
  static void flow_queue_add(Flow* f, Packet& pkt) {
    if (!f->head || pkt.time_to_send_ >= f->tail->time_to_send_) {
      pkt.next_ = nullptr;
      if (f->head)
        f->tail->next_ = &pkt;
      else
        f->head = &pkt;
      f->tail = &pkt;
      return;
    }
    f->t_root.insert(pkt);
  }

  // The flow a packet belongs to, or the internal queue (docs/fq-rules.md#classification
  // to #lookup-allocation-and-socket-reuse).
  Flow* classify(Packet& pkt, Time now) {
    // 5.7: TC_PRIO_CONTROL goes to the high-priority internal queue.
    if (!latest_ && (pkt.priority & 15) == 7) {
      detail::set_orphaned(pkt, false);
      return &internal_;
    }
    const FlowOwner* owner = pkt.owner;
    bool socket_keyed = false;
    std::uint64_t key;
    detail::set_orphaned(pkt, false);
    const bool orphan_kind =
        owner && (owner->kind == FlowOwner::Kind::listener ||
                  (latest_ && owner->kind == FlowOwner::Kind::time_wait));
    if (!owner || orphan_kind) {
      key = (static_cast<std::uint64_t>(pkt.hash & cfg_.orphan_mask) << 1) | 1;
      detail::set_orphaned(pkt, true);  // skb_orphan(): the owner's rate no longer applies
    } else if (owner->kind == FlowOwner::Kind::unconnected) {
      key = (static_cast<std::uint64_t>(pkt.hash & cfg_.orphan_mask) << 1) | 1;
    } else {
      key = owner->id << 1;
      socket_keyed = true;
    }

    if (latest_ && fastpath_ok(pkt, now)) {
      ++st_.fastpath_packets;
      return &internal_;
    }

    FlowTree& tree = buckets_[bucket_of(key, cfg_.buckets_log)];
    // docs/fq-rules.md#garbage-collection: garbage collection before the lookup, from the oldest detached
    // flow on (see gc()).
    if (latest_)
      gc(key, now, kGcMaxLatest);
    else if (flows_ >= (2U << cfg_.buckets_log) && inactive_flows_ > flows_ / 2)
      gc(key, now, kGcMax57);

    if (Flow* f = find(tree, key)) {
      // docs/fq-rules.md#lookup-allocation-and-socket-reuse: the owner id was reused by a new owner.
      if (socket_keyed && f->socket_hash != owner->hash_generation) {
        f->credit = static_cast<std::int32_t>(cfg_.initial_quantum);
        f->socket_hash = owner->hash_generation;
        if (f->state == FlowState::throttled) unset_throttled(f);
        f->time_next_packet = 0;
      }
      return f;
    }

    Flow* f = pool_.allocate();
    if (!f) {
      ++st_.allocation_errors;
      return &internal_;
    }
    f->key = key;
    f->socket_hash = socket_keyed ? owner->hash_generation : 0;
    f->credit = static_cast<std::int32_t>(cfg_.initial_quantum);
    f->time_next_packet = 0;
    f->band = 0;
    f->qlen = 0;
    f->head = f->tail = nullptr;
    detach(f, now);
    tree.insert_equal(*f);
    ++flows_;
    ++inactive_flows_;
    return f;
  }

  // docs/fq-rules.md#fast-path: the fast path (latest only).
  bool fastpath_ok(const Packet& pkt, Time now) const {
    if (pkt.time_to_send_ > now + offload_ns_) return false;
    if (qlen_ != 0) {
      if (flows_ != inactive_flows_ + throttled_flows_) return false;
      if (internal_.qlen >= 8) return false;
      if (time_next_delayed_flow_ <= now + offload_ns_) return false;
    }
    // A full non-TCP socket with SO_MAX_PACING_RATE must be paced by its flow.
    // We also refuse one with only pacing_rate set: for UDP the kernel keeps
    // both equal, so this is the same decision.
    const FlowOwner* o = detail::orphaned(pkt) ? nullptr : pkt.owner;
    if (o && !o->tcp && o->kind != FlowOwner::Kind::time_wait &&
        (o->max_pacing_rate != kUnlimitedRate || o->pacing_rate != kUnlimitedRate))
      return false;
    return cfg_.maxrate == kUnlimitedRate;
  }

  Flow* find(FlowTree& tree, std::uint64_t key) {
    using traits = FlowTree::node_traits;
    auto node = tree.root() == tree.end() ? traits::node_ptr() : tree.root().pointed_node();
    while (node) {
      Flow* f = FlowTree::value_traits::to_value_ptr(node);
      if (f->key == key) return f;
      node = f->key > key ? traits::get_right(node) : traits::get_left(node);
    }
    return nullptr;
  }

  bool gc_candidate(const Flow* f, Time now) const {
    return f->state == FlowState::detached && time_after(jiffies(now), f->age + 3ULL * cfg_.hz);
  }

  // Free idle flows (detached, idle > 3 s) from the head of the detached-flow
  // list, oldest detach first, at most `cap`, stopping at the first one not
  // idle long enough; the flow being looked up (`key`) is skipped, never freed.
  // The kernel frees the candidates on its bucket tree's search path instead:
  // that depends on tree shape, which no implementation here reproduces (or
  // should); this rule keeps the contract (idle > 3 s flows are freed, counted
  // in gc_flows, bounded work per enqueue) and is structure-independent, so
  // every implementation decides it identically (docs/features.md).
  void gc(std::uint64_t key, Time now, std::size_t cap) {
    std::size_t n = 0;
    Flow* f = age_head_;
    while (f && n < cap && gc_candidate(f, now)) {
      Flow* next = f->age_next;
      if (f->key != key) {
        age_unlink(f);
        buckets_[bucket_of(f->key, cfg_.buckets_log)].erase(
            FlowTree::s_iterator_to(*f));
        pool_.release(f);
        ++n;
      }
      f = next;
    }
    flows_ -= static_cast<std::uint32_t>(n);
    inactive_flows_ -= static_cast<std::uint32_t>(n);
    st_.gc_flows += n;
  }

  void age_append(Flow* f) {
    f->age_next = nullptr;
    f->age_prev = age_tail_;
    if (age_tail_)
      age_tail_->age_next = f;
    else
      age_head_ = f;
    age_tail_ = f;
  }

  void age_unlink(Flow* f) {
    (f->age_prev ? f->age_prev->age_next : age_head_) = f->age_next;
    (f->age_next ? f->age_next->age_prev : age_tail_) = f->age_prev;
    f->age_prev = f->age_next = nullptr;
  }

  // ---------------------------------------------------------------- dequeue
  static Packet* peek(Flow* f) {
    Packet* head = f->head;
    if (f->t_root.empty()) return head;
    Packet* first = &*f->t_root.begin();
    if (!head || first->time_to_send_ < head->time_to_send_) return first;
    return head;
  }

  void dequeue_packet(Flow* f, Packet* p) {
    if (p == f->head) {
      f->head = p->next_;
      if (!f->head) f->tail = nullptr;
    } else {
      f->t_root.erase(f->t_root.iterator_to(*p));
    }
    p->next_ = nullptr;
    st_.backlog -= p->len;
    --qlen_;
    st_.bytes += p->len;
    st_.packets += p->segments;
    ++st_.dequeued;
  }

  FlowList& list_of(Flow* f, FlowState which) {
    Band& b = bands_[f->band];
    return which == FlowState::new_list ? b.new_flows : b.old_flows;
  }

  void add_tail(Flow* f, FlowState which) {
    FlowList& l = list_of(f, which);
    f->next = nullptr;
    if (l.first)
      l.last->next = f;
    else
      l.first = f;
    l.last = f;
    f->state = which;
  }

  void detach(Flow* f, Time now) {
    f->state = FlowState::detached;
    f->next = nullptr;
    f->age = jiffies(now) | 1;
    age_append(f);
  }

  void set_throttled(Flow* f, Time now) {
    if (cfg_.adaptive_slack()) f->slack_deadline = detail::slack_deadline(f->time_next_packet, now, cfg_);
    delayed_.insert(*f);
    f->state = FlowState::throttled;
    ++throttled_flows_;
    ++st_.throttled;
    if (time_next_delayed_flow_ > f->time_next_packet) time_next_delayed_flow_ = f->time_next_packet;
  }

  void unset_throttled(Flow* f) {
    delayed_.erase(delayed_.iterator_to(*f));
    --throttled_flows_;
    add_tail(f, FlowState::old_list);
  }

  // docs/fq-rules.md#releasing-throttled-flows: release every throttled flow due by now (+ offload horizon).
  void check_throttled(Time now) {
    if (time_next_delayed_flow_ > now + offload_ns_) return;
    const std::uint64_t sample = now - time_next_delayed_flow_;
    // 6.13+ learns only from positive samples; 5.7 also from on-time releases.
    if (!latest_ || static_cast<std::int64_t>(sample) > 0) {
      unthrottle_latency_ns_ -= unthrottle_latency_ns_ >> 3;
      unthrottle_latency_ns_ += sample >> 3;
    }
    const Time until = now + offload_ns_;
    time_next_delayed_flow_ = kNever;
    while (!delayed_.empty()) {
      Flow* f = &*delayed_.begin();
      if (f->time_next_packet > until) {
        time_next_delayed_flow_ = f->time_next_packet;
        break;
      }
      unset_throttled(f);
    }
  }

  // docs/fq-rules.md#arming-the-watchdog; with the adaptive slack
  // (#adaptive-slack) the window ends at the earliest deadline of the flows
  // that become due inside it: walk them in due order until one is due after
  // the end found so far (a deadline is never before its flow's due time).
  void arm_watchdog() {
    if (time_next_delayed_flow_ == kNever) return;
    Time end = kNever;
    if (cfg_.adaptive_slack()) {
      for (const Flow& f : delayed_) {
        if (f.time_next_packet > end) break;
        end = std::min(end, f.slack_deadline);
      }
      // Only a stale due time (the flows left early, on socket reuse): the fixed window.
      if (delayed_.empty()) end = detail::slack_deadline(time_next_delayed_flow_, time_next_delayed_flow_, cfg_);
    }
    detail::arm(watchdog_, time_next_delayed_flow_, end, cfg_);
  }

  Packet* dequeue(Time now) {
    if (qlen_ == 0) return nullptr;
    // docs/fq-rules.md#internal-queue: the internal queue goes first, with no clock, pacing or marking.
    if (Packet* p = peek(&internal_)) {
      --internal_.qlen;
      dequeue_packet(&internal_, p);
      p->due = p->time_to_send_;
      return p;
    }
    check_throttled(now);
    return latest_ ? dequeue_latest(now) : dequeue_5_7(now);
  }

  Packet* dequeue_latest(Time now) {
    unsigned retry = 0;
    Band* pband = &bands_[band_nr_];
    for (;;) {
      // docs/fq-rules.md#choosing-a-flow L: weighted round robin over the bands.
      FlowList* head = nullptr;
      if (pband->credit > 0) {
        if (pband->new_flows.first)
          head = &pband->new_flows;
        else if (pband->old_flows.first)
          head = &pband->old_flows;
      }
      if (!head) {
        bool found = false;
        while (++retry <= kBands) {
          if (++band_nr_ == kBands) band_nr_ = 0;
          pband = &bands_[band_nr_];
          pband->credit = detail::refilled_band_credit(pband->credit, pband->quantum);
          if (pband->credit > 0) {
            found = true;
            break;
          }
          retry = 0;  // a band still in deficit does not count
        }
        if (found) continue;
        arm_watchdog();
        return nullptr;
      }
      Flow* f = head->first;
      retry = 0;
      // docs/fq-rules.md#flow-credit
      if (f->credit <= 0) {
        f->credit = wrap_add(f->credit, cfg_.quantum);
        head->first = f->next;
        add_tail(f, FlowState::old_list);
        continue;
      }
      Packet* p = peek(f);
      if (!p) {
        // docs/fq-rules.md#empty-flows L: an empty new flow passes through the old list first.
        head->first = f->next;
        if (head == &pband->new_flows)
          add_tail(f, FlowState::old_list);
        else
          detach(f, now);
        continue;
      }
      // docs/fq-rules.md#throttling
      const Time tnp = std::max(p->time_to_send_, f->time_next_packet);
      if (now + offload_ns_ < tnp) {
        head->first = f->next;
        f->time_next_packet = tnp;
        set_throttled(f, now);
        continue;
      }
      // docs/fq-rules.md#sending-and-ce-marking
      dequeue_packet(f, p);
      mark_departure(p, now, tnp);
      if (--f->qlen == 0) ++inactive_flows_;
      --band_pkt_count_[detail::band(*p)];
      // docs/fq-rules.md#charging
      f->credit = wrap_sub(f->credit, p->len);
      pband->credit = wrap_sub(pband->credit, p->len);
      pace(f, p, now);
      return p;
    }
  }

  Packet* dequeue_5_7(Time now) {
    Band& b = bands_[0];
    for (;;) {
      FlowList* head = &b.new_flows;
      if (!head->first) {
        head = &b.old_flows;
        if (!head->first) {
          arm_watchdog();
          return nullptr;
        }
      }
      Flow* f = head->first;
      if (f->credit <= 0) {
        f->credit = wrap_add(f->credit, cfg_.quantum);
        head->first = f->next;
        add_tail(f, FlowState::old_list);
        continue;
      }
      Packet* p = peek(f);
      if (!p) {
        // docs/fq-rules.md#empty-flows S: to the old list only if it has flows, else detach.
        head->first = f->next;
        if (head == &b.new_flows && b.old_flows.first) {
          add_tail(f, FlowState::old_list);
        } else {
          detach(f, now);
          ++inactive_flows_;
        }
        continue;
      }
      const Time tnp = std::max(p->time_to_send_, f->time_next_packet);
      if (now < tnp) {
        head->first = f->next;
        f->time_next_packet = tnp;
        set_throttled(f, now);
        continue;
      }
      mark_departure(p, now, tnp);
      dequeue_packet(f, p);
      --f->qlen;
      f->credit = wrap_sub(f->credit, p->len);
      pace(f, p, now);
      return p;
    }
  }

  // docs/fq-rules.md#sending-and-ce-marking and #pacing-gap, shared with the other implementation (fq_rules.hpp).
  void mark_departure(Packet* p, Time now, Time tnp) {
    detail::mark_departure(*p, now, tnp, ce_threshold_ns_, st_);
  }
  void pace(Flow* f, const Packet* p, Time now) { detail::pace(*f, *p, now, cfg_, st_); }

  // ---------------------------------------------------------------- control
  void apply(const FqConfig& cfg) {
    cfg_ = cfg;
    const detail::Derived d = detail::Derived::of(cfg);
    latest_ = d.latest;
    tick_ns_ = d.tick_ns;
    refill_delay_jiffies_ = d.refill_delay_jiffies;
    ce_threshold_ns_ = d.ce_threshold_ns;
    horizon_ns_ = d.horizon_ns;
    offload_ns_ = d.offload_ns;
    for (std::size_t i = 0; i < kBands; ++i) bands_[i].quantum = cfg.weights[i];
  }

  std::size_t change(const FqConfig& cfg, Time now, const PacketSink& trimmed) {
    if (auto err = validate(cfg)) throw *err;
    if (cfg.compat != cfg_.compat)
      throw ConfigError("compat", to_string(cfg.compat),
                        std::string("unchanged (") + to_string(cfg_.compat) + ")");
    if (cfg.hz != cfg_.hz)
      throw ConfigError("hz", std::to_string(cfg.hz), "unchanged (" + std::to_string(cfg_.hz) + ")");
    if (cfg.max_flows != cfg_.max_flows)
      throw ConfigError("max_flows", std::to_string(cfg.max_flows),
                        "unchanged (" + std::to_string(cfg_.max_flows) + ")");
    const std::uint8_t old_log = cfg_.buckets_log;
    apply(cfg);
    // docs/fq-rules.md#adaptive-slack: flows throttled before the change get
    // the new floor, timer_slack, as their allowance.
    if (cfg_.adaptive_slack())
      for (Flow& f : delayed_) f.slack_deadline = detail::slack_deadline(f.time_next_packet, f.time_next_packet, cfg_);
    if (cfg.buckets_log != old_log) resize(old_log, now);
    // Lowering the limit: remove what dequeue would send (throttled packets cannot be).
    std::size_t n = 0;
    while (qlen_ > cfg_.limit) {
      Packet* p = dequeue(now);
      if (!p) break;
      ++n;
      ++st_.trimmed;
      if (trimmed) trimmed(*p);
    }
    return n;
  }

  // docs/fq-rules.md#change-reset-resize: move every flow to the new table; idle GC candidates are freed.
  void resize(std::uint8_t old_log, Time now) {
    auto fresh = std::make_unique<FlowTree[]>(cfg_.buckets());
    std::uint32_t freed = 0;
    for (std::uint32_t i = 0; i < (1U << old_log); ++i) {
      FlowTree& t = buckets_[i];
      while (!t.empty()) {
        Flow* f = &*t.begin();
        t.erase(t.begin());
        if (gc_candidate(f, now)) {
          age_unlink(f);
          pool_.release(f);
          ++freed;
          continue;
        }
        fresh[bucket_of(f->key, cfg_.buckets_log)].insert_equal(*f);
      }
    }
    buckets_ = std::move(fresh);
    flows_ -= freed;
    inactive_flows_ -= freed;
    st_.gc_flows += freed;
  }

  void purge(Flow* f, const PacketSink& sink) {
    while (Packet* p = peek(f)) {
      if (p == f->head) {
        f->head = p->next_;
      } else {
        f->t_root.erase(f->t_root.iterator_to(*p));
      }
      p->next_ = nullptr;
      ++st_.purged;
      if (sink) sink(*p);
    }
    f->head = f->tail = nullptr;
    f->qlen = 0;
  }

  void reset(const PacketSink& sink) {
    purge(&internal_, sink);
    delayed_.clear();
    if (buckets_) {
      for (std::uint32_t i = 0; i < cfg_.buckets(); ++i) {
        FlowTree& t = buckets_[i];
        while (!t.empty()) {
          Flow* f = &*t.begin();
          t.erase(t.begin());
          purge(f, sink);
          pool_.release(f);
        }
      }
    }
    for (Band& b : bands_) b.new_flows = b.old_flows = FlowList{};
    age_head_ = age_tail_ = nullptr;
    qlen_ = 0;
    st_.backlog = 0;
    flows_ = inactive_flows_ = throttled_flows_ = 0;
    band_pkt_count_ = {};  // the March 2026 fix; 5.7 has no bands
    // time_next_delayed_flow is left as is, like the kernel (docs/fq-rules.md#change-reset-resize).
  }

  // ---------------------------------------------------------------- inspection
  FqStats stats(Time now) const {
    FqStats s = st_;
    s.qlen = qlen_;
    s.flows = flows_;
    s.inactive_flows = inactive_flows_;
    s.throttled_flows = throttled_flows_;
    s.time_next_delayed_flow =
        static_cast<std::int64_t>(time_next_delayed_flow_ + cfg_.timer_slack_ns - now);
    s.unthrottle_latency_ns = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(unthrottle_latency_ns_, 0xFFFFFFFFULL));
    s.band_pkt_count = band_pkt_count_;
    if (latest_) s.highprio_packets = 0;
    return s;
  }

  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const {
    for (std::uint32_t i = 0; i < cfg_.buckets(); ++i)
      for (const Flow& f : buckets_[i])
        fn(FlowInfo{f.key, f.qlen, f.credit, f.time_next_packet, f.state, f.band});
  }

  std::uint64_t jiffies(Time now) const { return now / tick_ns_; }

  FqConfig cfg_;
  bool latest_ = true;
  std::uint64_t tick_ns_ = 0;
  std::uint64_t refill_delay_jiffies_ = 0;
  Time ce_threshold_ns_ = 0, horizon_ns_ = 0, offload_ns_ = 0;

  std::unique_ptr<FlowTree[]> buckets_;
  FlowPool pool_;
  std::array<Band, kBands> bands_{};
  unsigned band_nr_ = 0;
  Flow internal_;
  ThrottledSet delayed_;
  Flow* age_head_ = nullptr;  // detached flows, oldest detach first
  Flow* age_tail_ = nullptr;
  Time time_next_delayed_flow_ = kNever;
  std::uint64_t unthrottle_latency_ns_ = 0;
  std::array<std::uint32_t, kBands> band_pkt_count_{};
  std::uint32_t flows_ = 0, inactive_flows_ = 0, throttled_flows_ = 0;
  std::uint32_t qlen_ = 0;
  FqStats st_;
  Watchdog watchdog_;
};

FqScheduler::FqScheduler(const FqConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) {}
FqScheduler::~FqScheduler() = default;
Verdict FqScheduler::enqueue(Packet& pkt, Time now) { return impl_->enqueue(pkt, now); }
Packet* FqScheduler::dequeue(Time now) { return impl_->dequeue(now); }
std::size_t FqScheduler::enqueue_burst(std::span<Packet* const> packets, Time now, std::span<Verdict> verdicts) {
  detail::check_burst_sizes(packets.size(), verdicts.size());
  std::size_t queued = 0;
  for (std::size_t i = 0; i < packets.size(); ++i)
    queued += (verdicts[i] = impl_->enqueue(*packets[i], now)) == Verdict::queued;
  return queued;
}
std::size_t FqScheduler::dequeue_burst(Time now, std::span<Packet*> out) {
  std::size_t n = 0;
  for (; n < out.size(); ++n) {
    Packet* p = impl_->dequeue(now);
    if (!p) break;
    out[n] = p;
  }
  return n;
}
std::size_t FqScheduler::change(const FqConfig& cfg, Time now, const PacketSink& trimmed) {
  return impl_->change(cfg, now, trimmed);
}
void FqScheduler::reset(const PacketSink& purged) { impl_->reset(purged); }
FqStats FqScheduler::stats(Time now) const { return impl_->stats(now); }
const FqConfig& FqScheduler::config() const { return impl_->cfg_; }
Watchdog& FqScheduler::watchdog() { return impl_->watchdog_; }
const Watchdog& FqScheduler::watchdog() const { return impl_->watchdog_; }
std::uint32_t FqScheduler::qlen() const { return impl_->qlen_; }
Time FqScheduler::time_next_delayed_flow() const { return impl_->time_next_delayed_flow_; }
std::uint32_t FqScheduler::internal_qlen() const { return impl_->internal_.qlen; }
void FqScheduler::for_each_flow(const std::function<void(const FlowInfo&)>& fn) const {
  impl_->for_each_flow(fn);
}

}  // namespace ufq::reference
static_assert(ufq::Scheduler<ufq::reference::FqScheduler>);
