// The fq scheduler (ufq::FqScheduler). Decisions are those of the reference
// (src/reference/scheduler.cpp) line by line; only the structures differ:
//  * flows live in one array, linked by 32-bit indices; a flow is 48 bytes
//    (the FIFO tail shares its word with the idle age, the round-robin link with
//    the detached-list link and the throttle ticket), its fields grouped by who
//    reads them so that few records an access reads cross a cache line;
//  * the flow table is open addressing in 64-byte groups of 12 slots (tag bytes
//    + flow indices, F14-style overflow counts instead of tombstones), hashed
//    with a per-instance random key so an adversary cannot aim collisions;
//  * the throttled set is ordered by (time_next_packet, throttle order), the
//    reference's order, as a FIFO lane for due times that arrive in order (the
//    common case: every flow throttled by the same gap, EDT clocks) plus a
//    radix wheel for the rest (8 us buckets in a base-256 radix heap of chunk
//    lists, the current bucket an exact 4-ary heap: throttled_set.hpp);
//    removal is lazy (a ticket per throttle);
//  * a flow's packets: a circular FIFO through Packet::next_ (one pointer per
//    flow) and, rarely, an out-of-order tree kept off the flow, from a pool
//    (out_of_order_trees.hpp).

#include "ufq/scheduler.hpp"
#include "ufq/scheduler_concept.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include "burst.hpp"
#include "flow_table.hpp"
#include "fq_rules.hpp"
#include "huge_pages.hpp"
#include "out_of_order_trees.hpp"
#include "packet_bits.hpp"
#include "throttled_set.hpp"


// The hot path (a paced packet's enqueue and dequeues) is compiled into one
// frame per call; what it rarely needs (new flows, GC, out-of-order packets,
// socket reuse, band rotation) is kept out of line so it does not cost the
// common case registers or instructions.
#define UFQ_COLD [[gnu::cold, gnu::noinline]]
#define UFQ_INLINE [[gnu::always_inline]] inline

namespace ufq {

namespace {

std::int32_t wrap_add(std::int32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + b);
}
std::int32_t wrap_sub(std::int32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - b);
}

inline constexpr std::uint32_t kNil = 0xFFFFFFFFU;
inline constexpr std::uint32_t kInternal = 0xFFFFFFFEU;  // the internal queue's index
inline constexpr FlowState kFree = static_cast<FlowState>(0xFF);  // state of a pooled flow
// The key of a pooled flow: odd, a hashed flow's form, so never a socket's
// (id << 1, even). An owner whose flow was freed (GC, reset) still names it
// in its hint; the hint's key test alone then fails on the enqueue's common path.
inline constexpr std::uint64_t kFreeKey = 1;
inline constexpr std::size_t kGcMax57 = 8;
inline constexpr std::size_t kGcMaxLatest = 64;

// An enqueue's common path reads these owner fields, and only these: kept
// within bytes 0-16 (docs/architecture.md#memory-layout).
static_assert(offsetof(FlowOwner, flow_hint_) < 16 && offsetof(FlowOwner, hash_generation) < 16 &&
              offsetof(FlowOwner, kind) <= 16);

// 48 bytes in three 16-byte parts, laid out by who reads them
// (docs/architecture.md#memory-layout). In the flow array a line boundary
// falls between parts 0 and 1 (a record at 48 mod 64) or 1 and 2 (at 32 mod
// 64), never inside a part: an enqueue's common path reads parts 0-1 and a
// release and the DRR visit parts 1-2, so each crosses a line for a quarter
// of the records (all three parts: half).
struct Flow {
  // Part 0: the owner hint's check (an enqueue), the detached list's back link.
  std::uint64_t key;
  std::uint32_t socket_hash;
  std::uint32_t prev;  // detached-list back link
  // Part 1: read by enqueue and dequeue alike.
  union {
    Packet* tail;       // while it is listed or throttled: the FIFO's last packet (tail->next_ = head)
    std::uint64_t age;  // while detached (always empty then): jiffies | 1 when it became detached
  };
  std::uint32_t qlen;
  std::uint8_t band;
  // FlowState, or kFree. An enum, not a std::uint8_t: a store through a
  // character type may alias anything, so each state change made the hot
  // path reload every member it had read (the flow array, the lane, counters).
  FlowState state;
  bool has_ooo;  // out-of-order packets in ooo_
  // Part 2: the DRR's and the throttled set's (a release reads parts 1-2).
  Time time_next_packet;
  // Round-robin list link, detached-list link, free-list link, or while
  // throttled (in no list then) the throttle ticket.
  std::uint32_t next;
  std::int32_t credit;
};
static_assert(sizeof(Flow) == 48 && offsetof(Flow, tail) == 16 && offsetof(Flow, time_next_packet) == 32);

struct FlowList {
  std::uint32_t first = kNil;
  std::uint32_t last = kNil;
};

struct Band {
  FlowList new_flows;
  FlowList old_flows;
  std::int32_t credit = 0;
  std::int32_t quantum = 0;
};

// ------------------------------------------------------------ throttled set
// (throttled_set.hpp)
using Entry = detail::ThrottleEntry;
using detail::before;
using detail::ThrottledSet;

// The adaptive slack's deadlines (docs/fq-rules.md#adaptive-slack): a binary
// min-heap of (deadline, throttle ticket, flow); an entry goes stale when its
// flow leaves the throttled set and is dropped when it surfaces (or by
// compaction), as in ThrottledSet. Only used when the extension is on.
class DeadlineHeap {
 public:
  void push(Time deadline, std::uint64_t seq, std::uint32_t idx) {
    heap_.push_back(Entry{deadline, seq, idx});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.front(); }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  void clear() { heap_.clear(); }
  std::size_t size() const { return heap_.size(); }
  template <class Live>
  void compact(const Live& live) {
    std::erase_if(heap_, [&](const Entry& e) { return !live(e); });
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  std::size_t bytes() const { return detail::allocated_bytes(heap_); }

 private:
  static bool later(const Entry& a, const Entry& b) { return before(b, a); }
  detail::HugeVector<Entry> heap_;
};

}  // namespace

class FqScheduler::Impl {
 public:
  explicit Impl(const FqConfig& cfg) {
    if (auto err = validate(cfg)) throw *err;
    apply(cfg);
    std::memset(static_cast<void*>(&internal_), 0, sizeof internal_);
    internal_.state = FlowState::old_list;
    internal_.next = internal_.prev = kNil;
  }

  // ---------------------------------------------------------------- flows
  Flow* at(std::uint32_t i) { return i == kInternal ? &internal_ : &flows_[i]; }
  std::uint32_t idx(const Flow* f) const {
    return f == &internal_ ? kInternal : static_cast<std::uint32_t>(f - flows_.data());
  }
  static FlowState state(const Flow* f) { return f->state; }
  static void set_state(Flow* f, FlowState s) { f->state = s; }

  std::uint32_t allocate_flow() {
    if (free_ != kNil) {
      const std::uint32_t i = free_;
      free_ = flows_[i].next;
      return i;
    }
    if (cfg_.max_flows && flows_.size() >= cfg_.max_flows) return kNil;
    flows_.emplace_back();
    return flow_slots_++;
  }

  void release_flow(Flow* f) {
    if (f->has_ooo) ooo_.release(idx(f));
    f->has_ooo = false;
    f->state = kFree;
    f->key = kFreeKey;
    f->next = free_;
    free_ = idx(f);
  }

  std::uint64_t key_of(std::uint32_t i) const { return flows_[i].key; }

  // ---------------------------------------------------------------- enqueue
  UFQ_INLINE Verdict enqueue(Packet& pkt, Time now) {
    if (latest_ ? enqueue_common(pkt, now) : enqueue_common_5_7(pkt, now)) [[likely]]
      return Verdict::queued;
    return enqueue_any(pkt, now);  // a tail call: the common case saves no registers
  }

  // The public enqueue(), one path per compat: latest's common path has a
  // frame of its own (in one shared function every 5.7 packet saved and
  // restored the four registers it uses); 5.7's, which needs none, is
  // inlined in the public enqueue() itself.
  [[gnu::noinline]] Verdict enqueue_one_latest(Packet& pkt, Time now) {
    if (enqueue_common(pkt, now)) [[likely]]
      return Verdict::queued;
    return enqueue_any(pkt, now);
  }

  [[gnu::noinline]] Verdict enqueue_any(Packet& pkt, Time now) {
    ++st_.offered;
    return latest_ ? enqueue_latest(pkt, now) : enqueue_5_7(pkt, now);
  }

  // What enqueue_common() tests of the scheduler alone, not of the packet: no
  // GC candidate and, when some flow is detached (only then is jiffies(now)
  // read: for the GC test or an activation), the tick cached (jiffies(now)
  // would divide). Every detached flow is in the age list. Within a burst at
  // one `now` it cannot turn false once true: the tick stays, and the age
  // list is in idle-age order (a flow joins it at its tail with the current
  // age), so its oldest flow only ever gets younger.
  bool common_case_possible(Time now) {
    if (age_head_ == kNil) return true;
    if (now - jiffy_start_ >= tick_ns_) return false;  // unsigned: a time before the tick too
    return !gc_candidate(&flows_[age_head_], now);
  }

  // enqueue_latest() for the common case, with no calls: a packet of a
  // connected owner whose flow hint holds, due after the offload horizon and
  // within the time horizon, in order within its flow, no GC candidate, the
  // tick cached. Returns false, having changed nothing, when anything else
  // holds; enqueue_any() then decides the packet from the start.
  UFQ_INLINE bool enqueue_common(Packet& pkt, Time now) {
    return common_case_possible(now) && enqueue_common_at(pkt, now, now + horizon_ns_, now + offload_ns_);
  }

  // The packet's part of enqueue_common() (latest), with the horizons'
  // ends, now + horizon_ns_ and now + offload_ns_, given.
  // kInlineActivate: the activation inline too (the prefetching burst, where
  // most packets activate their flow; elsewhere a call keeps the loop small).
  template <bool kInlineActivate = false>
  UFQ_INLINE bool enqueue_common_at(Packet& pkt, Time now, Time horizon_end, Time offload_end) {
    const std::uint8_t band = cfg_.priomap[pkt.priority & 15];
    if (band_pkt_count_[band] >= cfg_.limit) return false;
    const Time tts = pkt.tstamp ? pkt.tstamp : now;
    if (static_cast<std::int64_t>(pkt.tstamp) > static_cast<std::int64_t>(horizon_end)) return false;
    if (tts <= offload_end) return false;  // fastpath_ok() may hold: the internal queue's case
    const FlowOwner* owner = pkt.owner;
    if (!owner || owner->kind != FlowOwner::Kind::connected) return false;
    const std::uint32_t i = owner->flow_hint_;
    if (i >= flow_slots_) return false;
    Flow* f = &flows_[i];
    if (f->key != owner->id << 1 || f->socket_hash != owner->hash_generation) return false;  // kFreeKey: not kFree
    if (f->qlen >= cfg_.flow_limit) return false;
    const bool detached = state(f) == FlowState::detached;
    Packet* tail = detached ? nullptr : f->tail;
    if (tail && tts < tail->time_to_send_) return false;  // out of order: the side tree

    ++st_.offered;
    pkt.time_to_send_ = tts;
    detail::set_flags(pkt, band, false);
    if (detached) {
      if constexpr (kInlineActivate)
        activate_inline(i, now);
      else
        activate(i, now);
    }
    f->band = band;
    ++band_pkt_count_[band];
    if (f->qlen == 0) --inactive_flows_;
    link_in_order(f, tail, pkt);
    return true;
  }

  // enqueue_5_7() for the common case, as enqueue_common() for latest: a
  // packet of a connected or TIME_WAIT owner (5.7 keys both on the socket)
  // whose flow hint holds, not of priority 7, in order within its flow, under
  // both limits, no GC candidate, the tick cached.
  UFQ_INLINE bool enqueue_common_5_7(Packet& pkt, Time now) {
    if (qlen_ >= cfg_.limit) return false;
    if ((pkt.priority & 15) == 7) return false;
    const FlowOwner* owner = pkt.owner;
    if (!owner || (owner->kind != FlowOwner::Kind::connected && owner->kind != FlowOwner::Kind::time_wait))
      return false;
    const std::uint32_t i = owner->flow_hint_;
    if (i >= flow_slots_) return false;
    Flow* f = &flows_[i];
    if (f->key != owner->id << 1 || f->socket_hash != owner->hash_generation) return false;  // kFreeKey: not kFree
    if (f->qlen >= cfg_.flow_limit) return false;
    if (!common_case_possible(now)) return false;
    if (state(f) == FlowState::detached) return false;  // activation: a call, and rare here
    const Time tts = pkt.tstamp ? pkt.tstamp : now;
    Packet* tail = f->tail;
    if (tail && tts < tail->time_to_send_) return false;  // out of order: the side tree

    ++st_.offered;
    pkt.time_to_send_ = tts;
    detail::set_flags(pkt, 0, false);
    link_in_order(f, tail, pkt);
    return true;
  }

  // link() without its out-of-order branch (order checked by the caller, who
  // read `tail`); calling link() costs ~5 instructions more per packet
  // (callgrind).
  UFQ_INLINE void link_in_order(Flow* f, Packet* tail, Packet& pkt) {
    ++f->qlen;
    if (!tail) {
      pkt.next_ = &pkt;
    } else {
      pkt.next_ = tail->next_;
      tail->next_ = &pkt;
    }
    f->tail = &pkt;
    queued_bytes_ += pkt.len;
    ++qlen_;
  }

  Verdict enqueue_latest(Packet& pkt, Time now) {
    const std::uint8_t band = cfg_.priomap[pkt.priority & 15];
    if (band_pkt_count_[band] >= cfg_.limit) {
      ++st_.band_drops[band];
      return drop(Verdict::drop_limit);
    }
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
    const std::uint32_t i = classify(pkt, now, band);
    Flow* f = at(i);
    if (i != kInternal) {
      if (f->qlen >= cfg_.flow_limit) {
        ++st_.flows_plimit;
        return drop(Verdict::drop_flow_limit);
      }
      if (state(f) == FlowState::detached) activate(i, now);
      f->band = band;
      ++band_pkt_count_[band];
      if (f->qlen == 0) --inactive_flows_;
    }
    link(f, pkt);
    return Verdict::queued;
  }

  Verdict enqueue_5_7(Packet& pkt, Time now) {
    if (qlen_ >= cfg_.limit) return drop(Verdict::drop_limit);
    pkt.time_to_send_ = pkt.tstamp ? pkt.tstamp : now;
    const std::uint32_t i = classify(pkt, now, 0);
    Flow* f = at(i);
    if (i != kInternal && f->qlen >= cfg_.flow_limit) {
      ++st_.flows_plimit;
      return drop(Verdict::drop_flow_limit);
    }
    if (i != kInternal && state(f) == FlowState::detached) {
      activate(i, now);
      --inactive_flows_;
    }
    link(f, pkt);
    if (i == kInternal) ++st_.highprio_packets;
    return Verdict::queued;
  }

  Verdict drop(Verdict why) {
    ++st_.drops;
    return why;
  }

  // Leave the detached list for the new list; refill from the idle age
  // (docs/fq-rules.md#activation-and-refill).
  void activate(std::uint32_t i, Time now) { activate_inline(i, now); }
  UFQ_INLINE void activate_inline(std::uint32_t i, Time now) {
    Flow* f = &flows_[i];
    age_unlink(f);
    const std::uint64_t age = f->age;
    f->tail = nullptr;
    add_tail(i, FlowState::new_list);
    if (time_after(jiffies(now), age + refill_delay_jiffies_))
      f->credit = static_cast<std::int32_t>(std::max(static_cast<std::uint32_t>(f->credit), cfg_.quantum));
  }

  UFQ_COLD void link_ooo(Flow* f, Packet& pkt) {
    ooo_.acquire(idx(f)).insert(pkt);
    f->has_ooo = true;
  }

  UFQ_INLINE void link(Flow* f, Packet& pkt) {
    ++f->qlen;
    Packet* tail = f->tail;
    if (!tail) {
      pkt.next_ = &pkt;
      f->tail = &pkt;
    } else if (pkt.time_to_send_ >= tail->time_to_send_) {
      pkt.next_ = tail->next_;
      tail->next_ = &pkt;
      f->tail = &pkt;
    } else {
      link_ooo(f, pkt);
    }
    queued_bytes_ += pkt.len;
    ++qlen_;
  }

  // The flow `pkt` belongs to (kInternal: the internal queue); also writes the
  // packet's band and orphan flag.
  UFQ_INLINE std::uint32_t classify(Packet& pkt, Time now, std::uint8_t band) {
    if (!latest_ && (pkt.priority & 15) == 7) {
      detail::set_flags(pkt, band, false);
      return kInternal;
    }
    FlowOwner* owner = pkt.owner;
    bool socket_keyed = false;
    std::uint64_t key;
    bool orphan = false;
    const bool orphan_kind =
        owner && (owner->kind == FlowOwner::Kind::listener ||
                  (latest_ && owner->kind == FlowOwner::Kind::time_wait));
    if (!owner || orphan_kind) {
      key = (static_cast<std::uint64_t>(pkt.hash & cfg_.orphan_mask) << 1) | 1;
      orphan = true;
    } else if (owner->kind == FlowOwner::Kind::unconnected) {
      key = (static_cast<std::uint64_t>(pkt.hash & cfg_.orphan_mask) << 1) | 1;
    } else {
      key = owner->id << 1;
      socket_keyed = true;
    }
    detail::set_flags(pkt, band, orphan);

    if (latest_ && fastpath_ok(pkt, now)) {
      ++st_.fastpath_packets;
      return kInternal;
    }

    // gc() stops at the first flow not yet idle long enough: test the oldest here.
    if (age_head_ != kNil && gc_candidate(&flows_[age_head_], now)) {
      if (latest_)
        gc(key, now, kGcMaxLatest);
      else if (flows_n_ >= (2U << cfg_.buckets_log) && inactive_flows_ > flows_n_ / 2)
        gc(key, now, kGcMax57);
    }

    std::uint32_t found = kNil;
    if (socket_keyed) {
      const std::uint32_t h = owner->flow_hint_;
      if (h < flow_slots_ && flows_[h].key == key && flows_[h].state != kFree) found = h;
    }
    if (found == kNil) found = table_.find(key, [this](std::uint32_t i) { return key_of(i); });
    if (found != kNil) {
      // Written only when it changes: the owner's cache line may be read by
      // other threads (producers), so a store per packet would bounce it.
      if (socket_keyed && owner->flow_hint_ != found) owner->flow_hint_ = found;
      if (socket_keyed && flows_[found].socket_hash != owner->hash_generation) reuse(found, *owner);
      return found;
    }
    return create_flow(key, socket_keyed ? owner : nullptr, now);
  }

  // The owner's id came back with a new generation (a new socket): the flow
  // starts over (docs/fq-rules.md#lookup-allocation-and-socket-reuse).
  UFQ_COLD void reuse(std::uint32_t i, const FlowOwner& owner) {
    Flow* f = &flows_[i];
    f->credit = static_cast<std::int32_t>(cfg_.initial_quantum);
    f->socket_hash = owner.hash_generation;
    if (state(f) == FlowState::throttled) unset_throttled(i);
    f->time_next_packet = 0;
  }

  // `owner`: the socket the flow is keyed on, nullptr for a hashed flow.
  UFQ_COLD std::uint32_t create_flow(std::uint64_t key, FlowOwner* owner, Time now) {
    const bool socket_keyed = owner != nullptr;
    const std::uint32_t i = allocate_flow();
    if (i == kNil) {
      ++st_.allocation_errors;
      return kInternal;
    }
    Flow* f = &flows_[i];
    f->key = key;
    f->socket_hash = socket_keyed ? owner->hash_generation : 0;
    f->credit = static_cast<std::int32_t>(cfg_.initial_quantum);
    f->time_next_packet = 0;
    f->band = 0;
    f->qlen = 0;
    f->has_ooo = false;
    detach(i, now);
    table_.insert(key, i, [this](std::uint32_t j) { return key_of(j); });
    if (socket_keyed) owner->flow_hint_ = i;
    ++flows_n_;
    ++inactive_flows_;
    return i;
  }

  bool fastpath_ok(const Packet& pkt, Time now) const {
    if (pkt.time_to_send_ > now + offload_ns_) return false;
    if (qlen_ != 0) {
      if (flows_n_ != inactive_flows_ + throttled_flows()) return false;
      if (internal_.qlen >= 8) return false;
      if (time_next_delayed_flow_ <= now + offload_ns_) return false;
    }
    const FlowOwner* o = detail::orphaned(pkt) ? nullptr : pkt.owner;
    if (o && !o->tcp && o->kind != FlowOwner::Kind::time_wait &&
        (o->max_pacing_rate != kUnlimitedRate || o->pacing_rate != kUnlimitedRate))
      return false;
    return cfg_.maxrate == kUnlimitedRate;
  }

  bool gc_candidate(const Flow* f, Time now) {
    return state(f) == FlowState::detached && time_after(jiffies(now), f->age + 3ULL * cfg_.hz);
  }

  // The reference's rule: oldest detached first, stop at the first one not idle
  // > 3 s, skip the flow being looked up, at most `cap`.
  UFQ_COLD void gc(std::uint64_t key, Time now, std::size_t cap) {
    std::size_t n = 0;
    std::uint32_t i = age_head_;
    while (i != kNil && n < cap) {
      Flow* f = &flows_[i];
      if (!gc_candidate(f, now)) break;
      const std::uint32_t next = f->next;
      if (f->key != key) {
        age_unlink(f);
        table_.erase(f->key, i);
        release_flow(f);
        ++n;
      }
      i = next;
    }
    flows_n_ -= static_cast<std::uint32_t>(n);
    inactive_flows_ -= static_cast<std::uint32_t>(n);
    st_.gc_flows += n;
  }

  void age_append(std::uint32_t i) {
    Flow* f = &flows_[i];
    f->next = kNil;
    f->prev = age_tail_;
    if (age_tail_ != kNil)
      flows_[age_tail_].next = i;
    else
      age_head_ = i;
    age_tail_ = i;
  }

  void age_unlink(Flow* f) {
    (f->prev != kNil ? flows_[f->prev].next : age_head_) = f->next;
    (f->next != kNil ? flows_[f->next].prev : age_tail_) = f->prev;
    f->next = f->prev = kNil;
  }

  // ---------------------------------------------------------------- dequeue
  UFQ_INLINE Packet* peek(Flow* f) {
    Packet* head = f->tail ? f->tail->next_ : nullptr;
    if (!f->has_ooo) [[likely]] return head;
    return peek_ooo(f, head);
  }
  UFQ_COLD Packet* peek_ooo(Flow* f, Packet* head) {
    detail::PacketTree& t = ooo_.get(idx(f));
    Packet* first = &*t.begin();
    if (!head || first->time_to_send_ < head->time_to_send_) return first;
    return head;
  }

  UFQ_INLINE void unlink_packet(Flow* f, Packet* p) {
    Packet* tail = f->tail;
    if (tail && p == tail->next_) [[likely]] {
      if (p == tail)
        f->tail = nullptr;
      else
        tail->next_ = p->next_;
    } else {
      unlink_ooo(f, p);
    }
    p->next_ = nullptr;
  }
  UFQ_COLD void unlink_ooo(Flow* f, Packet* p) {
    detail::PacketTree& t = ooo_.get(idx(f));
    t.erase(t.iterator_to(*p));
    if (t.empty()) {
      ooo_.release(idx(f));
      f->has_ooo = false;
    }
  }

  void dequeue_packet(Flow* f, Packet* p) {
    unlink_packet(f, p);
    count_dequeue(p);
  }
  // dequeue_packet()'s counts, the packet unlinked.
  // The backlog and the dequeued count are derived in stats().
  UFQ_INLINE void count_dequeue(const Packet* p) {
    st_.bytes += p->len;
    st_.packets += p->segments;
    --qlen_;
  }

  FlowList& list_of(Flow* f, FlowState which) {
    Band& b = bands_[f->band];
    return which == FlowState::new_list ? b.new_flows : b.old_flows;
  }

  void add_tail(std::uint32_t i, FlowState which) { append(list_of(&flows_[i], which), i, which); }
  // add_tail() with the list given (`which` of the flow's band).
  void append(FlowList& l, std::uint32_t i, FlowState which) {
    Flow* f = &flows_[i];
    f->next = kNil;
    if (l.first != kNil)
      flows_[l.last].next = i;
    else
      l.first = i;
    l.last = i;
    set_state(f, which);
  }

  void detach(std::uint32_t i, Time now) {
    Flow* f = &flows_[i];
    set_state(f, FlowState::detached);
    f->age = jiffies(now) | 1;
    age_append(i);
  }

  // Throttle flow `i` (at `f`) until `tnp` (its time_next_packet from now
  // on). The time is passed, not read back: a store to the lane could alias it.
  // kPlain: known !adaptive_ (plain_, a burst's compile-time copy).
  template <bool kPlain = false>
  UFQ_INLINE void set_throttled(std::uint32_t i, Flow* f, Time now, Time tnp) {
    f->time_next_packet = tnp;
    const std::uint64_t seq = ++throttle_seq_;
    f->next = static_cast<std::uint32_t>(seq);
    delayed_.push(tnp, seq, i);
    if (!kPlain && adaptive_) [[unlikely]]
      push_deadline(detail::slack_deadline(tnp, now, cfg_), seq, i);
    set_state(f, FlowState::throttled);  // counted by throttled_flows(); st_.throttled is throttle_seq_ (stats())
    if (time_next_delayed_flow_ > tnp) time_next_delayed_flow_ = tnp;
  }

  // The entry still stands for its flow's current throttle.
  bool live(const Entry& e) const {
    const Flow& f = flows_[e.idx];
    return f.state == FlowState::throttled &&
           f.next == static_cast<std::uint32_t>(e.seq) && f.time_next_packet == e.t;
  }

  // The throttled flows: each has one live entry, every other entry is
  // stale. Derived, not counted: no count to move at each throttle and release.
  std::uint32_t throttled_flows() const { return static_cast<std::uint32_t>(delayed_.size() - stale_); }

  // Leaving the set early (socket reuse): the entry goes stale.
  void unset_throttled(std::uint32_t i) {
    ++stale_;
    add_tail(i, FlowState::old_list);
    maybe_stale_ = true;
    if (delayed_.size() > 2 * static_cast<std::size_t>(throttled_flows()) + 1024) {
      delayed_.compact([this](const Entry& e) { return live(e); });
      maybe_stale_ = false;  // compact() kept the live entries only
      stale_ = 0;
    }
  }

  UFQ_INLINE Packet* dequeue_internal() {
    Packet* p = peek(&internal_);
    --internal_.qlen;
    dequeue_packet(&internal_, p);
    p->due = p->time_to_send_;
    return p;
  }

  // `prefetch`: look ahead in the lane (prefetch_due_soon) as flows leave.
  UFQ_INLINE void check_throttled(Time now, bool prefetch) {
    if (latest_)
      check_throttled_as<true>(now, prefetch);
    else
      check_throttled_as<false>(now, prefetch);
  }
  template <bool kLatest>
  UFQ_INLINE void check_throttled_as(Time now, bool prefetch) {
    if (time_next_delayed_flow_ > now + (kLatest ? offload_ns_ : 0)) return;  // 5.7: no offload horizon
    const std::uint64_t sample = now - time_next_delayed_flow_;
    if (!kLatest || static_cast<std::int64_t>(sample) > 0) {
      unthrottle_latency_ns_ -= unthrottle_latency_ns_ >> 3;
      unthrottle_latency_ns_ += sample >> 3;
    }
    const Time until = now + (kLatest ? offload_ns_ : 0);
    time_next_delayed_flow_ = kNever;
    // Releasing adds nothing to the wheel. (prefetch_due_soon() reads the
    // lane's position, which drain_lane() writes back only at its end.)
    if (!prefetch && !maybe_stale_ && delayed_.wheel_empty()) [[likely]] {
      release_from_lane<!kLatest>(until);
      return;
    }
    release_any(until, prefetch);
  }

  // check_throttled() with the wheel in use (or prefetching): out of line, so
  // that the wheel's code costs the lane-only release no registers.
  [[gnu::noinline]] void release_any(Time until, bool prefetch) {
    for (;;) {
      const auto [e, from_lane] = delayed_.top();
      if (!e) break;
      if (!live(*e)) {
        delayed_.pop(from_lane);
        --stale_;
        continue;
      }
      if (e->t > until) {
        time_next_delayed_flow_ = e->t;
        break;
      }
      const std::uint32_t fi = e->idx;
      delayed_.pop(from_lane);
      add_tail(fi, FlowState::old_list);
      if (prefetch) prefetch_due_soon();
    }
  }

  // check_throttled()'s releases while the wheel is empty and no entry can
  // be stale (every entry live: no live() test). kBand0: 5.7, where every
  // flow is in band 0 (only the latest enqueue sets a flow's band).
  template <bool kBand0>
  UFQ_INLINE void release_from_lane(Time until) {
    if constexpr (kBand0) {
      release_to_band0(until);
    } else {
      delayed_.drain_lane([&](const Entry& e) {
        if (e.t > until) {
          time_next_delayed_flow_ = e.t;
          return false;
        }
        add_tail(e.idx, FlowState::old_list);
        return true;
      });
    }
  }
  // The same in 5.7: the released flows, in lane order, joined to band 0's
  // old list as one chain, each record written once (its state, the link to
  // it); the chain's end and the list's last after the loop. The same list
  // as append() for each flow, which also wrote each link kNil and re-read
  // the list's ends (the flows' stores could alias them).
  UFQ_INLINE void release_to_band0(Time until) {
    FlowList& l = bands_[0].old_flows;
    Flow* const flows = flows_.data();
    std::uint32_t* link = l.first == kNil ? &l.first : &flows[l.last].next;
    std::uint32_t last = kNil;
    delayed_.drain_lane([&](const Entry& e) {
      if (e.t > until) {
        time_next_delayed_flow_ = e.t;
        return false;
      }
      const std::uint32_t fi = e.idx;
      *link = fi;
      Flow* f = &flows[fi];
      link = &f->next;
      set_state(f, FlowState::old_list);
      last = fi;
      return true;
    });
    if (last == kNil) return;
    *link = kNil;
    l.last = last;
  }

  // Flows leave the throttled set in lane order and their head packets are
  // sent (or appended to) next: with many flows those are cache misses, so
  // fetch the flow record a few releases ahead and, once it has arrived, the
  // packet it points at. A stale entry only costs a useless prefetch.
  // Below this many flows their records stay in the L2 cache: no prefetching.
  static constexpr std::size_t kPrefetchFlows = 4096;
  void prefetch_due_soon() {
    static constexpr std::size_t kFlowAhead = 8, kPacketAhead = 4;
    if (const Entry* a = delayed_.lane_ahead(kFlowAhead)) __builtin_prefetch(&flows_[a->idx].tail);
    if (const Entry* b = delayed_.lane_ahead(kPacketAhead)) {
      const Flow& f = flows_[b->idx];
      if (f.state == FlowState::throttled) __builtin_prefetch(f.tail);
    }
  }

  template <bool kPlain = false>
  UFQ_INLINE void arm_watchdog() {
    if (time_next_delayed_flow_ == kNever) return;
    if (kPlain || !adaptive_) [[likely]] {
      watchdog_.schedule_range(time_next_delayed_flow_, cfg_.timer_slack_ns);
      return;
    }
    arm_adaptive();
  }

  // ------------------------------------------------ adaptive slack (ufq extension)
  // docs/fq-rules.md#adaptive-slack: the window ends at the earliest deadline
  // of the throttled flows (the same end as the reference's walk over the
  // flows due inside the window: a deadline is never before its due time).
  UFQ_COLD void arm_adaptive() {
    while (!deadlines_.empty() && !live_deadline(deadlines_.top())) deadlines_.pop();
    // No live flow (a stale due time after socket reuse): the fixed window.
    const Time end = deadlines_.empty()
                         ? detail::slack_deadline(time_next_delayed_flow_, time_next_delayed_flow_, cfg_)
                         : deadlines_.top().t;
    detail::arm(watchdog_, time_next_delayed_flow_, end, cfg_);
  }
  bool live_deadline(const Entry& e) const {
    const Flow& f = flows_[e.idx];
    return f.state == FlowState::throttled && f.next == static_cast<std::uint32_t>(e.seq);
  }
  UFQ_COLD void push_deadline(Time deadline, std::uint64_t seq, std::uint32_t i) {
    if (deadlines_.size() > 2 * static_cast<std::size_t>(throttled_flows()) + 1024)
      deadlines_.compact([this](const Entry& e) { return live_deadline(e); });
    deadlines_.push(deadline, seq, i);
  }
  // After change(): every throttled flow gets the floor, timer_slack, as its allowance.
  void rebuild_deadlines() {
    deadlines_.clear();
    if (!adaptive_) return;
    delayed_.for_each([this](const Entry& e) {
      if (live(e)) deadlines_.push(detail::slack_deadline(e.t, e.t, cfg_), e.seq, e.idx);
    });
  }

  Packet* dequeue(Time now) {
    if (qlen_ == 0) return nullptr;
    if (internal_.qlen) return dequeue_internal();
    check_throttled(now, flow_slots_ > kPrefetchFlows);
    return latest_ ? dequeue_latest(now, now + offload_ns_) : dequeue_5_7(now);
  }

  // `until`: now + offload_ns_ (a burst computes it once).
  UFQ_INLINE Packet* dequeue_latest(Time now, Time until) {
    Band* pband = &bands_[band_nr_];
    for (;;) {
      FlowList* head;
      if (pband->credit > 0 && pband->new_flows.first != kNil) {
        head = &pband->new_flows;
      } else if (pband->credit > 0 && pband->old_flows.first != kNil) {
        head = &pband->old_flows;
      } else {
        pband = next_band();
        if (!pband) {
          arm_watchdog();
          return nullptr;
        }
        continue;
      }
      const std::uint32_t fi = head->first;
      Flow* f = &flows_[fi];
      if (f->credit <= 0) {
        f->credit = wrap_add(f->credit, cfg_.quantum);
        head->first = f->next;
        add_tail(fi, FlowState::old_list);
        continue;
      }
      Packet* p = peek(f);
      if (!p) {
        head->first = f->next;
        if (head == &pband->new_flows)
          add_tail(fi, FlowState::old_list);
        else
          detach(fi, now);
        continue;
      }
      const Time tnp = std::max(p->time_to_send_, f->time_next_packet);
      if (until < tnp) {
        head->first = f->next;
        set_throttled(fi, f, now, tnp);
        continue;
      }
      dequeue_packet(f, p);
      mark_departure(p, now, tnp);
      if (--f->qlen == 0) ++inactive_flows_;
      --band_pkt_count_[detail::band(*p)];
      f->credit = wrap_sub(f->credit, p->len);
      pband->credit = wrap_sub(pband->credit, p->len);
      pace(f, p, now);
      return p;
    }
  }

  // The current band has no credit or nothing listed: the kernel's band
  // rotation. Refill the next band; take it if its credit is positive and it
  // lists a flow; give up (nullptr) after kBands positive bands in a row with
  // nothing listed. A band whose refill leaves no credit restarts that count.
  [[gnu::noinline]] Band* next_band() {
    if (refill_idle_bands()) return nullptr;
    unsigned retry = 0;
    for (;;) {
      Band* b = nullptr;
      while (++retry <= kBands) {
        if (++band_nr_ == kBands) band_nr_ = 0;
        b = &bands_[band_nr_];
        b->credit = detail::refilled_band_credit(b->credit, b->quantum);
        if (b->credit > 0) break;
        b = nullptr;
        retry = 0;
      }
      if (!b) return nullptr;
      if (b->new_flows.first != kNil || b->old_flows.first != kNil) return b;
    }
  }

  // Nothing listed in any band (only throttled or detached flows: the paced
  // steady state). The band loop in dequeue_latest would then refill every band
  // once, starting after the current one, and come back to it; when each of
  // those refills leaves credit > 0 that is its whole effect, done here without
  // the loop. Returns false (nothing changed) otherwise.
  bool refill_idle_bands() {
    std::uint32_t listed = kNil;  // stays all ones only if every list is empty
    for (const Band& b : bands_) listed &= b.new_flows.first & b.old_flows.first;
    if (listed != kNil) return false;
    std::array<std::int32_t, kBands> refilled;
    bool positive = true;
    for (std::size_t i = 0; i < kBands; ++i) {
      refilled[i] = detail::refilled_band_credit(bands_[i].credit, bands_[i].quantum);
      positive &= refilled[i] > 0;
    }
    if (!positive) return false;
    for (std::size_t i = 0; i < kBands; ++i) bands_[i].credit = refilled[i];
    return true;
  }

  // The kernel's 5.7 dequeue: the new list's flows first, then the old
  // list's. A dequeue never adds to the new list (only an enqueue's
  // activation does), so once it is empty the old list alone is visited.
  UFQ_INLINE Packet* dequeue_5_7(Time now) {
    Band& b = bands_[0];
    while (b.new_flows.first != kNil)
      if (Packet* p = visit_5_7<true>(b, now)) return p;
    while (b.old_flows.first != kNil)
      if (Packet* p = visit_5_7<false>(b, now)) return p;
    arm_watchdog();
    return nullptr;
  }

  // One step of dequeue_5_7() at the head flow of the new list (kNew) or, the
  // new list being empty, of the old list: the flow is refilled and moved to
  // the old list's tail, or, empty, moved there or detached, or throttled
  // (nullptr for these), or it sends its head packet, which is returned.
  template <bool kNew>
  UFQ_INLINE Packet* visit_5_7(Band& b, Time now) {
    const std::uint32_t fi = (kNew ? b.new_flows : b.old_flows).first;
    return visit_flow_5_7<kNew>(b, fi, &flows_[fi], now);
  }
  // The same with the head flow given (`fi`, at `f`). A flow that sends stays
  // at the head (nullptr: it has left it), so a burst visits it again
  // without looking it up.
  // kNoCe: known now < ce_threshold_ns_ (a burst's compile-time copy), so
  // no departure is late by the threshold: mark_departure()'s test left out.
  template <bool kNew, bool kPlain = false, bool kNoCe = false>
  UFQ_INLINE Packet* visit_flow_5_7(Band& b, std::uint32_t fi, Flow* f, Time now) {
    FlowList* head = kNew ? &b.new_flows : &b.old_flows;
    if (f->credit <= 0) {
      f->credit = wrap_add(f->credit, cfg_.quantum);
      // The old list's only flow: moving it to the tail leaves the list as
      // it is (first = last = fi, the state old_list), so the same flow is
      // visited next; with credit now, that visit follows here.
      if (kNew || f->next != kNil || f->credit <= 0) {
        head->first = f->next;
        add_tail(fi, FlowState::old_list);
        return nullptr;
      }
    }
    Packet* p = peek(f);
    if (!p) {
      head->first = f->next;
      if (kNew && b.old_flows.first != kNil) {
        add_tail(fi, FlowState::old_list);
      } else {
        detach(fi, now);
        ++inactive_flows_;
      }
      return nullptr;
    }
    const Time tnp = std::max(p->time_to_send_, f->time_next_packet);
    if (now < tnp) {
      head->first = f->next;
      set_throttled<kPlain>(fi, f, now, tnp);
      return nullptr;
    }
    if (kNoCe)
      p->due = tnp;
    else
      mark_departure(p, now, tnp);
    dequeue_packet(f, p);
    --f->qlen;
    f->credit = wrap_sub(f->credit, p->len);
    pace<kPlain>(f, p, now);
    return p;
  }

  void mark_departure(Packet* p, Time now, Time tnp) {
    detail::mark_departure(*p, now, tnp, ce_threshold_ns_, st_);
  }
  // The same with now - ce_threshold_ns_ (`ce_now`) computed once per
  // burst: now - tnp - threshold, as a signed difference, is ce_now - tnp.
  UFQ_INLINE void mark_departure_by(Packet* p, Time tnp, Time ce_now) {
    p->due = tnp;
    if (static_cast<std::int64_t>(ce_now - tnp) > 0) {
      if (p->ect) p->ce = true;
      ++st_.ce_mark;
    }
  }
  // detail::pace(); a packet with a departure time changes nothing without
  // pacing or a maxrate (edt_unpaced_): one test for that common case.
  template <bool kPlain = false>
  UFQ_INLINE void pace(Flow* f, const Packet* p, Time now) {
    if ((kPlain || edt_unpaced_) && p->tstamp != 0) return;
    detail::pace(*f, *p, now, cfg_, st_);
  }
  // The same for a caller holding the flow's credit after the charge
  // (`credit`, not yet stored): stores it, and returns the credit after
  // pacing (detail::pace() may zero it).
  template <bool kPlain>
  UFQ_INLINE std::int32_t pace_credit(Flow* f, const Packet* p, Time now, std::int32_t credit) {
    f->credit = credit;
    if ((kPlain || edt_unpaced_) && p->tstamp != 0) [[likely]]
      return credit;
    detail::pace(*f, *p, now, cfg_, st_);
    return f->credit;
  }

  // ---------------------------------------------------------------- bursts
  // docs/architecture.md#batched-calls. The decisions are those of the single
  // calls, in the same order; what a burst adds is prefetching: with many
  // flows each packet's owner, flow record and the packets it links to are
  // cache (and TLB) misses, which one call at a time waits for one after the
  // other. A burst starts them for packets a few places ahead (software
  // pipelining), so they are in flight together.

  // Pipeline distances, in packets: the owner (or, for a hashed flow, its
  // table group) first; once it has arrived the flow record it names; once
  // that has arrived what the enqueue will write through it (the FIFO's tail
  // packet, or the neighbours in the detached list).
  // Measured at 1M shuffled flows (bench BM_PacedShuffledBurst): 12/6/3 was
  // no slower than 16/8/4, 24/12/6 or 32/16/8 on this machine.
  static constexpr std::size_t kOwnerAhead = 12, kFlowRecordAhead = 6, kLinksAhead = 3;
  static constexpr std::size_t kStageRing = 8;  // a power of two > kFlowRecordAhead
  static_assert(kStageRing > kFlowRecordAhead && (kStageRing & (kStageRing - 1)) == 0);

  std::size_t enqueue_burst(std::span<Packet* const> pkts, Time now, std::span<Verdict> verdicts) {
    detail::check_burst_sizes(pkts.size(), verdicts.size());
    const std::size_t n = pkts.size();
    std::size_t queued = 0;
    if (flow_slots_ <= detail::burst_prefetch_min_flows() || !scattered_) {
      if (latest_ && common_case_possible(now)) {
        // What enqueue_common() tests of the scheduler and of `now`, once.
        const Time horizon_end = now + horizon_ns_, offload_end = now + offload_ns_;
        for (std::size_t i = 0; i < n; ++i) {
          Packet& p = *pkts[i];
          const Verdict v = enqueue_common_at(p, now, horizon_end, offload_end) ? Verdict::queued : enqueue_any(p, now);
          verdicts[i] = v;
          queued += v == Verdict::queued;
        }
        return queued;
      }
      for (std::size_t i = 0; i < n; ++i) queued += (verdicts[i] = enqueue(*pkts[i], now)) == Verdict::queued;
      return queued;
    }
    // As above, what enqueue_common() tests of the scheduler and `now`, once.
    if (latest_ && common_case_possible(now))
      return enqueue_prefetched<true>(pkts, now, verdicts);
    return enqueue_prefetched<false>(pkts, now, verdicts);
  }

  // enqueue_burst() with the prefetch pipeline. kCommon: latest, and
  // common_case_possible(now) held at the burst's start (so for all of it).
  template <bool kCommon>
  UFQ_INLINE std::size_t enqueue_prefetched(std::span<Packet* const> pkts, Time now, std::span<Verdict> verdicts) {
    const std::size_t n = pkts.size();
    std::size_t queued = 0;
    [[maybe_unused]] const Time horizon_end = now + horizon_ns_, offload_end = now + offload_ns_;
    // What the record stage found (the hinted flow, or kNil: look the key
    // up) for the links stage kFlowRecordAhead - kLinksAhead packets later.
    std::array<std::uint32_t, kStageRing> found;
    for (std::size_t i = 0; i < std::min(n, kOwnerAhead); ++i) prefetch_owner(*pkts[i]);
    for (std::size_t i = 0; i < std::min(n, kFlowRecordAhead); ++i) found[i % kStageRing] = prefetch_flow(*pkts[i]);
    for (std::size_t i = 0; i < std::min(n, kLinksAhead); ++i) prefetch_links(*pkts[i], found[i % kStageRing]);
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kOwnerAhead < n) prefetch_owner(*pkts[i + kOwnerAhead]);
      if (i + kFlowRecordAhead < n)
        found[(i + kFlowRecordAhead) % kStageRing] = prefetch_flow(*pkts[i + kFlowRecordAhead]);
      if (i + kLinksAhead < n) prefetch_links(*pkts[i + kLinksAhead], found[(i + kLinksAhead) % kStageRing]);
      Packet& p = *pkts[i];
      Verdict v;
      if constexpr (kCommon)
        v = enqueue_common_at<true>(p, now, horizon_end, offload_end) ? Verdict::queued : enqueue_any(p, now);
      else
        v = enqueue(p, now);
      verdicts[i] = v;
      queued += v == Verdict::queued;
    }
    return queued;
  }

  // The key classify() will look the packet's flow up by (kOwnerKeyed: the
  // owner's id, found through the owner's hint first).
  static constexpr std::uint64_t kOwnerKeyed = ~std::uint64_t{0};
  std::uint64_t hashed_key(const Packet& p) const {
    const FlowOwner* o = p.owner;
    if (o && (o->kind == FlowOwner::Kind::connected || (!latest_ && o->kind == FlowOwner::Kind::time_wait)))
      return kOwnerKeyed;
    return (static_cast<std::uint64_t>(p.hash & cfg_.orphan_mask) << 1) | 1;
  }

  // Prefetching never faults (any address will do) and changes nothing. A
  // record or packet may straddle two cache lines, so both ends are fetched;
  // kWrite: the line will be written (fetched for ownership).
  // The empty asm statement (no clobbers) keeps the prefetches where they are
  // written: GCC 12 deletes a loop whose only effects are prefetches, and
  // moves or drops others (docs/results.md, "prefetch loops that GCC deletes").
  template <int kWrite = 0>
  static void prefetch_span(const void* first, const void* last) {
    __builtin_prefetch(first, kWrite);
    __builtin_prefetch(last, kWrite);
    asm volatile("");
  }

  // A flow record's parts an enqueue's common path reads (0-1), and those a
  // release and the DRR visit read (1-2): struct Flow.
  static void prefetch_enqueue_part(const Flow& f) { prefetch_span(&f.key, &f.has_ooo); }
  static void prefetch_dequeue_part(const Flow& f) { prefetch_span(&f.tail, &f.credit); }

  static void prefetch_owner(const Packet& p) {
    if (const FlowOwner* o = p.owner) prefetch_span(&o->id, &o->kind);
  }

  // The flow record the owner's hint names, or the table group of the key.
  // Returns the hinted flow for prefetch_links() (kNil: the key is looked up).
  std::uint32_t prefetch_flow(const Packet& p) const {
    const std::uint64_t key = hashed_key(p);
    if (key != kOwnerKeyed) {
      table_.prefetch(key);
      return kNil;
    }
    const std::uint32_t h = p.owner->flow_hint_;
    if (h < flow_slots_) {
      prefetch_enqueue_part(flows_[h]);
      return h;
    }
    table_.prefetch(p.owner->id << 1);
    return kNil;
  }

  // What enqueue writes through the flow record: the tail packet's link, or
  // the detached-list neighbours that activate() unlinks the flow from.
  // `hinted`: what prefetch_flow() returned for the packet (the owner and the
  // record are not read again for it). Only a prefetch: a stale hint costs
  // a useless one.
  void prefetch_links(const Packet& p, std::uint32_t hinted) const {
    std::uint32_t i = hinted;
    if (i == kNil) {
      const std::uint64_t key = hashed_key(p);
      if (key == kOwnerKeyed) return;  // a hint out of range: a new flow
      i = table_.find(key, [this](std::uint32_t j) { return key_of(j); });
    }
    if (i >= flow_slots_) return;
    const Flow& f = flows_[i];
    if (f.state == FlowState::detached) {
      __builtin_prefetch(&f.next, 1);  // activate() appends the flow to a list
      if (f.prev < flow_slots_) __builtin_prefetch(&flows_[f.prev].next, 1);
      if (f.next < flow_slots_) __builtin_prefetch(&flows_[f.next].prev, 1);
    } else if (f.state != kFree && f.tail) {
      prefetch_span<1>(&f.tail->time_to_send_, &f.tail->next_);
    }
  }

  // The single calls' sequence, with what repeats in it paid once: the
  // internal queue is drained first (a dequeue() takes from it before anything
  // else), then the throttled flows are released once, because after one
  // check_throttled() at `now` the next one returns at its first test (no
  // flow is throttled until a time within now + offload_ns_, and only enqueue
  // adds to the internal queue); then the flows' dequeues run in one loop,
  // with the compat branch resolved once, until one finds nothing.
  // Inline in the public dequeue_burst(), which has no frame of its own: a
  // 5.7 burst with nothing due and nothing listed (a quarter of the
  // simulator's runs) makes only the watchdog request, without entering the
  // loops' function (whose register saves GCC hoists above any early test).
  UFQ_INLINE std::size_t dequeue_burst(Time now, std::span<Packet*> out) {
    if (latest_) return dequeue_burst_latest(now, out);
    if (nothing_due_5_7(now, out.size())) {
      arm_watchdog();
      return 0;
    }
    if (!plain_) return dequeue_burst_5_7(now, out);
    // Before the CE threshold no due packet (tnp <= now) can be late by it
    // (now - tnp <= now < threshold): with the threshold off (the default,
    // about 71 minutes) that is every burst.
    return now < ce_threshold_ns_ ? dequeue_burst_5_7_plain_no_ce(now, out) : dequeue_burst_5_7_plain(now, out);
  }
  // A 5.7 burst would release nothing and find no flow to visit: packets are
  // queued (the internal queue empty), the first throttled flow is not due and
  // band 0 lists no flow. (With many flows the burst samples
  // releases_scattered() first: not taken here.)
  bool nothing_due_5_7(Time now, std::size_t cap) const {
    // The test that fails most often first (a burst after a wake-up).
    return time_next_delayed_flow_ > now && b0_idle() && qlen_ != 0 && internal_.qlen == 0 && cap != 0 &&
           flow_slots_ <= detail::burst_prefetch_min_flows();
  }
  // One function per compat, as enqueue_one_*(): the compat branches resolved
  // at compile time, each with a frame of its own.
  [[gnu::noinline]] std::size_t dequeue_burst_latest(Time now, std::span<Packet*> out) {
    return dequeue_burst_as<true>(now, out);
  }
  // Pre (dequeue_burst()): !nothing_due_5_7(now, out.size()).
  [[gnu::noinline]] std::size_t dequeue_burst_5_7(Time now, std::span<Packet*> out) {
    return dequeue_burst_as<false>(now, out);
  }
  // The same without the adaptive slack and with a stamped packet's pacing
  // a no-op (plain_): the tests of both flags resolved at compile time.
  [[gnu::noinline]] std::size_t dequeue_burst_5_7_plain(Time now, std::span<Packet*> out) {
    return dequeue_burst_as<false, true>(now, out);
  }
  // The same without the CE test. Pre: now < ce_threshold_ns_.
  [[gnu::noinline]] std::size_t dequeue_burst_5_7_plain_no_ce(Time now, std::span<Packet*> out) {
    return dequeue_burst_as<false, true, true>(now, out);
  }
  template <bool kLatest, bool kPlain = false, bool kNoCe = false>
  UFQ_INLINE std::size_t dequeue_burst_as(Time now, std::span<Packet*> out) {
    const std::size_t cap = out.size();
    std::size_t n = 0;
    if (cap == 0 || qlen_ == 0) return 0;
    while (internal_.qlen) [[unlikely]] {
      out[n++] = dequeue_internal();
      if (n == cap || qlen_ == 0) return n;
    }
    if (flow_slots_ > detail::burst_prefetch_min_flows() && (scattered_ = releases_scattered())) [[unlikely]]
      check_throttled_burst(now);
    else
      check_throttled_as<kLatest>(now, false);
    if constexpr (kLatest)
      return dequeue_flows_latest(now, out.data(), n, cap);
    else
      return dequeue_flows_5_7<kPlain, kNoCe>(now, out.data(), n, cap);
  }

  bool b0_idle() const { return (bands_[0].new_flows.first & bands_[0].old_flows.first) == kNil; }

  // dequeue_latest() until out[0..cap) is full, the queue is empty or one
  // finds nothing.
  UFQ_INLINE std::size_t dequeue_flows_latest(Time now, Packet** out, std::size_t n, std::size_t cap) {
    const Time until = now + offload_ns_;
    for (; n < cap; ++n) {
      if (qlen_ == 0) break;
      Packet* p = dequeue_latest(now, until);
      if (!p) break;
      out[n] = p;
    }
    return n;
  }

  // dequeue_5_7() likewise, its two list loops kept across the dequeues: the
  // new list cannot refill within the burst, so once the old list's turn has
  // come, no dequeue looks at the new list again.
  // Pre: n < cap, qlen_ > 0; kNoCe: now < ce_threshold_ns_.
  template <bool kPlain, bool kNoCe = false>
  UFQ_INLINE std::size_t dequeue_flows_5_7(Time now, Packet** out, std::size_t n, std::size_t cap) {
    Band& b = bands_[0];
    const Time ce_now = now - ce_threshold_ns_;  // mark_departure_by()
    for (std::uint32_t fi; (fi = b.new_flows.first) != kNil;) {
      Flow* f = &flows_[fi];
      while (Packet* p = visit_flow_5_7<true, kPlain, kNoCe>(b, fi, f, now)) {
        out[n++] = p;
        if (n == cap || qlen_ == 0) return n;
      }
    }
    for (std::uint32_t fi; (fi = b.old_flows.first) != kNil;) {
      Flow* f = &flows_[fi];
      if (f->credit > 0 && !f->has_ooo && f->tail) [[likely]] {
        // visit_flow_5_7<false>() while the flow sends, with its FIFO's
        // tail in a register (each packet's stores could alias f->tail);
        // the same decisions: send while due and in credit, a throttle when
        // the head is not due; the rest (credit used, empty) below.
        Packet* tail = f->tail;
        std::int32_t credit = f->credit;  // f->credit, in a register likewise
        bool throttled = false;
        for (;;) {
          Packet* p = tail->next_;
          const Time tnp = std::max(p->time_to_send_, f->time_next_packet);
          if (now < tnp) {
            b.old_flows.first = f->next;
            set_throttled<kPlain>(fi, f, now, tnp);
            throttled = true;
            break;
          }
          if (kNoCe)
            p->due = tnp;
          else
            mark_departure_by(p, tnp, ce_now);
          if (p == tail) {
            tail = nullptr;
            f->tail = nullptr;
          } else {
            tail->next_ = p->next_;
          }
          // p->next_ is left as it is: private to the scheduler, and every
          // enqueue writes it (link(), or the tree's insert) before reading.
          // The length read once: the counters' stores could alias it.
          const std::uint32_t len = p->len;
          st_.bytes += len;
          st_.packets += p->segments;
          --qlen_;
          --f->qlen;
          credit = pace_credit<kPlain>(f, p, now, wrap_sub(credit, len));
          out[n++] = p;
          if (n == cap) return n;
          // The queue empty means this FIFO too (no side tree here): the
          // qlen_ test only when the FIFO is.
          if (!tail) {
            if (qlen_ == 0) return n;
            break;
          }
          if (credit <= 0) break;
        }
        if (throttled) continue;
        if (credit <= 0) {  // its next visit: visit_flow_5_7()'s first case (band 0 in 5.7)
          f->credit = wrap_add(f->credit, cfg_.quantum);
          if (f->next != kNil || f->credit <= 0) {
            b.old_flows.first = f->next;
            append(b.old_flows, fi, FlowState::old_list);
            continue;
          }
        }
      }
      while (Packet* p = visit_flow_5_7<false, kPlain, kNoCe>(b, fi, f, now)) {
        out[n++] = p;
        if (n == cap || qlen_ == 0) return n;
      }
    }
    arm_watchdog<kPlain>();
    return n;
  }

  // check_throttled(): the same flows released in the same order, in two
  // passes per group of up to kReleaseGroup entries, so that their flow
  // records are fetched together. First the due entries leave the set, each
  // flow record prefetched as its entry leaves; then each flow whose entry
  // still stands for its throttle (live) is released and its next packet
  // prefetched. Equivalent because a flow has at most one live entry, so
  // releasing one flow never changes whether another flow's entry is live.
  // Only with many flows (dequeue_burst() decides, once per burst); out of
  // line, so that its group buffer and registers cost the small-flow bursts nothing.
  static constexpr std::size_t kReleaseGroup = 32;
  // Until a flow leaves the set early (maybe_stale_) every entry is live:
  // then no live() tests, and only the flows' indices are kept.
  [[gnu::noinline]] void check_throttled_burst(Time now) {
    if (maybe_stale_)
      check_throttled_burst_as<true>(now);
    else
      check_throttled_burst_as<false>(now);
  }
  template <bool kMaybeStale>
  UFQ_INLINE void check_throttled_burst_as(Time now) {
    if (time_next_delayed_flow_ > now + offload_ns_) return;
    const std::uint64_t sample = now - time_next_delayed_flow_;
    if (!latest_ || static_cast<std::int64_t>(sample) > 0) {
      unthrottle_latency_ns_ -= unthrottle_latency_ns_ >> 3;
      unthrottle_latency_ns_ += sample >> 3;
    }
    const Time until = now + offload_ns_;
    time_next_delayed_flow_ = kNever;
    std::array<Entry, kReleaseGroup> due;  // kMaybeStale: for the live() tests
    std::array<std::uint32_t, kReleaseGroup> fi;
    std::array<const Packet*, kReleaseGroup> tails;  // of the released flows that hold packets
    for (bool more = true; more;) {
      std::size_t n = 0;
      while (n < kReleaseGroup) {
        const auto [e, from_lane] = delayed_.top();
        if (!e) {
          more = false;
          break;
        }
        if (e->t > until) {
          if (kMaybeStale && !live(*e)) {
            delayed_.pop(from_lane);
            --stale_;
            continue;
          }
          time_next_delayed_flow_ = e->t;
          more = false;
          break;
        }
        prefetch_dequeue_part(flows_[e->idx]);
        if constexpr (kMaybeStale) due[n] = *e;
        fi[n++] = e->idx;
        delayed_.pop(from_lane);
      }
      std::size_t released = 0;
      for (std::size_t k = 0; k < n; ++k) {
        if (kMaybeStale && !live(due[k])) {
          --stale_;
          continue;
        }
        const std::uint32_t i = fi[k];
        add_tail(i, FlowState::old_list);
        if (const Packet* t = flows_[i].tail) {
          prefetch_span(&t->len, &t->ce);
          tails[released++] = t;
        }
      }
      // The DRR visits these flows next and reads their head packets, which
      // differ from the tails when a flow holds more than one: fetch them too
      // (reading each tail's link waits for the prefetch above, but the
      // group's waits overlap).
      for (std::size_t k = 0; k < released; ++k) {
        const Packet* h = tails[k]->next_;
        prefetch_span(&h->len, &h->ce);
      }
    }
    prefetch_next_release();
  }

  // The flows the next wake-up's release takes from the lane first: their
  // records, fetched now, arrive while the caller enqueues its next burst
  // instead of while the release waits for them (about half the flows due in
  // a wake-up come from the lane in shuffled order, the rest from the wheel).
  void prefetch_next_release() const {
    const Flow* flows = flows_.data();
    delayed_.for_lane_front(kReleaseGroup, [flows](const Entry& e) { prefetch_dequeue_part(flows[e.idx]); });
  }

  // Whether the flows about to be released lie scattered in memory (flows in
  // no useful order, as a server with many connections sees them): then the
  // burst calls prefetch. In memory order (round robin) the hardware
  // prefetcher already has the records, owners and packets, and software
  // prefetching is only instructions (11 % of the time at 1M flows,
  // docs/results.md, "prefetch loops that GCC deletes"). Sampled once per
  // dequeue_burst(): out-of-order throttles (the wheel in use), or the lane's
  // next two flows more than a few records apart. enqueue_burst() follows
  // the last sample. With the threshold at 0 (tests, the fuzzer: the
  // prefetching code under their sanitizers) always.
  bool releases_scattered() const {
    if (!delayed_.wheel_empty() || detail::burst_prefetch_min_flows() == 0) return true;
    const Entry* a = delayed_.lane_ahead(0);
    const Entry* b = delayed_.lane_ahead(1);
    if (!a || !b) return scattered_;
    const std::uint32_t d = a->idx > b->idx ? a->idx - b->idx : b->idx - a->idx;
    return d > kNearRecords;
  }
  static constexpr std::uint32_t kNearRecords = 16;  // 768 bytes of 48-byte records

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
    adaptive_ = cfg.adaptive_slack();
    edt_unpaced_ = !cfg.pacing || cfg.maxrate == kUnlimitedRate;
    plain_ = !adaptive_ && edt_unpaced_;
    for (std::size_t i = 0; i < kBands; ++i) bands_[i].quantum = cfg.weights[i];
    jiffy_start_ = jiffies_ = 0;
  }

  std::size_t change(const FqConfig& cfg, Time now, const PacketSink& trimmed) {
    if (auto err = validate(cfg)) throw *err;
    if (cfg.compat != cfg_.compat)
      throw ConfigError("compat", to_string(cfg.compat), std::string("unchanged (") + to_string(cfg_.compat) + ")");
    if (cfg.hz != cfg_.hz)
      throw ConfigError("hz", std::to_string(cfg.hz), "unchanged (" + std::to_string(cfg_.hz) + ")");
    if (cfg.max_flows != cfg_.max_flows)
      throw ConfigError("max_flows", std::to_string(cfg.max_flows),
                        "unchanged (" + std::to_string(cfg_.max_flows) + ")");
    const std::uint8_t old_log = cfg_.buckets_log;
    apply(cfg);
    rebuild_deadlines();
    if (cfg.buckets_log != old_log) resize(now);
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

  // docs/fq-rules.md#change-reset-resize: the table does not depend on
  // buckets_log; free every idle candidate.
  void resize(Time now) {
    std::uint32_t freed = 0;
    for (std::uint32_t i = 0; i < flows_.size(); ++i) {
      Flow* f = &flows_[i];
      if (f->state == kFree || !gc_candidate(f, now)) continue;
      age_unlink(f);
      table_.erase(f->key, i);
      release_flow(f);
      ++freed;
    }
    flows_n_ -= freed;
    inactive_flows_ -= freed;
    st_.gc_flows += freed;
  }

  void purge(Flow* f, const PacketSink& sink) {
    while (Packet* p = peek(f)) {
      unlink_packet(f, p);
      ++st_.purged;
      if (sink) sink(*p);
    }
    f->tail = nullptr;
    f->qlen = 0;
  }

  void reset(const PacketSink& sink) {
    purge(&internal_, sink);
    delayed_.clear();
    maybe_stale_ = false;
    stale_ = 0;
    deadlines_.clear();
    // Purge in the reference's order is not required: purged packets are
    // handed back, their order is not a scheduling decision.
    for (std::uint32_t i = 0; i < flows_.size(); ++i) {
      Flow* f = &flows_[i];
      if (f->state == kFree) continue;
      if (f->state == FlowState::detached) f->tail = nullptr;
      purge(f, sink);
      release_flow(f);
    }
    table_.clear();
    for (Band& b : bands_) b.new_flows = b.old_flows = FlowList{};
    age_head_ = age_tail_ = kNil;
    qlen_ = 0;
    queued_bytes_ = st_.bytes;  // a backlog of 0
    flows_n_ = inactive_flows_ = 0;
    band_pkt_count_ = {};
  }

  // ---------------------------------------------------------------- inspection
  FqStats stats(Time now) const {
    FqStats s = st_;
    // Derived, not counted per packet: every queued byte is either dequeued
    // (st_.bytes) or still queued, the purged ones leaving queued_bytes_ at
    // reset(); offered = dequeued + drops + purged + qlen (ufq/stats.hpp);
    // one throttle order per throttle.
    s.backlog = queued_bytes_ - st_.bytes;
    s.dequeued = st_.offered - st_.drops - st_.purged - qlen_;
    s.throttled = throttle_seq_;
    s.qlen = qlen_;
    s.flows = flows_n_;
    s.inactive_flows = inactive_flows_;
    s.throttled_flows = throttled_flows();
    s.time_next_delayed_flow = static_cast<std::int64_t>(time_next_delayed_flow_ + cfg_.timer_slack_ns - now);
    s.unthrottle_latency_ns =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(unthrottle_latency_ns_, 0xFFFFFFFFULL));
    s.band_pkt_count = band_pkt_count_;
    if (latest_) s.highprio_packets = 0;
    return s;
  }

  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const {
    for (const Flow& f : flows_)
      if (f.state != kFree)
        fn(FlowInfo{f.key, f.qlen, f.credit, f.time_next_packet, f.state, f.band});
  }

  std::size_t memory_bytes() const {
    return detail::allocated_bytes(flows_) + table_.bytes() + delayed_.bytes() + deadlines_.bytes() + ooo_.bytes();
  }

  // now / tick_ns_, with the division only when `now` leaves the cached tick
  // (a 64-bit division costs more than the rest of a paced enqueue).
  std::uint64_t jiffies(Time now) {
    if (now - jiffy_start_ >= tick_ns_) {  // unsigned: a time before the tick also recomputes
      jiffies_ = now / tick_ns_;
      jiffy_start_ = jiffies_ * tick_ns_;
    }
    return jiffies_;
  }

  FqConfig cfg_;
  bool latest_ = true;
  std::uint64_t tick_ns_ = 0;
  std::uint64_t refill_delay_jiffies_ = 0;
  Time ce_threshold_ns_ = 0, horizon_ns_ = 0, offload_ns_ = 0;
  bool scattered_ = true;  // releases_scattered() at the last dequeue_burst() with many flows
  Time jiffy_start_ = 0;  // jiffies_ * tick_ns_
  std::uint64_t jiffies_ = 0;

  detail::HugeVector<Flow> flows_;  // huge pages from 2 MiB (huge_pages.hpp)
  std::uint32_t flow_slots_ = 0;  // flows_.size(), without a division by sizeof(Flow)
  std::uint32_t free_ = kNil;
  detail::FlowTable table_;
  detail::OutOfOrderTrees ooo_;
  std::array<Band, kBands> bands_{};
  unsigned band_nr_ = 0;
  Flow internal_;
  ThrottledSet delayed_;
  DeadlineHeap deadlines_;  // adaptive slack only
  bool adaptive_ = false;   // cfg_.adaptive_slack()
  bool edt_unpaced_ = true;  // !cfg_.pacing || cfg_.maxrate unlimited: pace() leaves a stamped packet's flow alone
  bool plain_ = true;  // !adaptive_ && edt_unpaced_ (5.7 has no adaptive slack): the 5.7 burst without their tests
  // Some entry of delayed_ may be stale (a flow left the set early:
  // unset_throttled()); until then every entry is live, its flow's only one.
  bool maybe_stale_ = false;
  std::size_t stale_ = 0;  // stale entries in delayed_
  std::uint64_t throttle_seq_ = 0;
  std::uint32_t age_head_ = kNil, age_tail_ = kNil;
  Time time_next_delayed_flow_ = kNever;
  std::uint64_t unthrottle_latency_ns_ = 0;
  std::array<std::uint32_t, kBands> band_pkt_count_{};
  std::uint32_t flows_n_ = 0, inactive_flows_ = 0;
  std::uint32_t qlen_ = 0;
  std::uint64_t queued_bytes_ = 0;  // bytes ever queued, less those purged by reset(): stats()
  FqStats st_;  // backlog, dequeued and throttled derived in stats()
  Watchdog watchdog_;
};

FqScheduler::FqScheduler(const FqConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) {}
FqScheduler::~FqScheduler() = default;
Verdict FqScheduler::enqueue(Packet& pkt, Time now) {
  Impl& m = *impl_;
  if (m.latest_) return m.enqueue_one_latest(pkt, now);
  // 5.7's common path here, without a frame (it calls nothing): no jump to
  // a function of its own.
  if (m.enqueue_common_5_7(pkt, now)) [[likely]]
    return Verdict::queued;
  return m.enqueue_any(pkt, now);
}
Packet* FqScheduler::dequeue(Time now) { return impl_->dequeue(now); }
std::size_t FqScheduler::enqueue_burst(std::span<Packet* const> packets, Time now, std::span<Verdict> verdicts) {
  return impl_->enqueue_burst(packets, now, verdicts);
}
std::size_t FqScheduler::dequeue_burst(Time now, std::span<Packet*> out) { return impl_->dequeue_burst(now, out); }
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
std::size_t FqScheduler::memory_bytes() const { return impl_->memory_bytes(); }
std::size_t FqScheduler::flow_bytes() { return sizeof(Flow); }

}  // namespace ufq
static_assert(ufq::Scheduler<ufq::FqScheduler>);
