// The fast scheduler's throttled set (src/core/scheduler.cpp): throttled flows
// ordered by (due time, throttle order), the reference's order
// (docs/architecture.md#the-public-scheduler). Three parts:
//  * a FIFO lane for entries not due earlier than the lane's last (the common
//    case: every flow throttled by the same gap, EDT clocks): O(1) both ways;
//  * for the others, a RadixWheel: a radix heap over 8 us buckets of due time
//    (unsorted chunk lists, 256 slots per level, 8 bits of the bucket number
//    per level) whose current bucket is a sorted run (the entries a refill
//    took out) beside an exact 4-ary heap (QuadHeap: pushes into it). An
//    entry moves down the levels in sequential passes (at most 7 moves), so a
//    million out-of-order throttles cost sequential reads and writes instead
//    of a big heap's random ones at its lower levels;
//  * removal is lazy: a stale entry (its flow left the set early) is skipped
//    by the scheduler when it surfaces, or dropped by compact().
// Internal to the library; tests/core/test_throttled_set.cpp checks it against
// a sorted model.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "huge_pages.hpp"
#include "ufq/time.hpp"

#define UFQ_TS_COLD [[gnu::cold, gnu::noinline]]

namespace ufq::detail {

struct ThrottleEntry {
  Time t;
  std::uint64_t seq;  // global throttle order: ties on t leave in throttle order
  std::uint32_t idx;
};
static_assert(sizeof(ThrottleEntry) == 24);
inline bool before(const ThrottleEntry& a, const ThrottleEntry& b) {
  return a.t < b.t || (a.t == b.t && a.seq < b.seq);
}

// A 4-ary min-heap of entries in (t, seq) order. Its array is shifted by kPad
// slots, so that from a cache-line aligned start (a huge-page array's, from
// 2 MiB: the heaps whose lower levels miss) the 4 children of node i
// (4i+1..4i+4, 96 bytes) start at byte 96(i+1), a multiple of 32: they span 2
// cache lines, never 3, and the 16 grandchildren a pop prefetches exactly 6.
// Grows amortised, never shrinks.
class QuadHeap {
 public:
  using Entry = ThrottleEntry;
  static constexpr std::size_t kPad = 3;
  QuadHeap() : v_(kPad) {}
  bool empty() const { return v_.size() == kPad; }
  std::size_t size() const { return v_.size() - kPad; }
  const Entry& top() const { return at(0); }
  void push(const Entry& e) {
    v_.push_back(e);
    sift_up(size() - 1);
  }
  void pop() {
    at(0) = v_.back();
    v_.pop_back();
    if (!empty()) sift_down(0);
  }
  void clear() { v_.resize(kPad); }
  const Entry* begin() const { return v_.data() + kPad; }
  const Entry* end() const { return v_.data() + v_.size(); }
  // Keeps the entries `keep` accepts, in place.
  template <class Keep>
  void filter(const Keep& keep) {
    v_.erase(std::remove_if(v_.begin() + kPad, v_.end(), [&](const Entry& e) { return !keep(e); }), v_.end());
    for (std::size_t i = size(); i-- > 0;) sift_down(i);
  }
  std::size_t bytes() const { return allocated_bytes(v_); }

 private:
  Entry& at(std::size_t i) { return v_[i + kPad]; }
  const Entry& at(std::size_t i) const { return v_[i + kPad]; }
  void sift_up(std::size_t i) {
    const Entry e = at(i);
    while (i > 0) {
      const std::size_t p = (i - 1) / 4;
      if (!before(e, at(p))) break;
      at(i) = at(p);
      i = p;
    }
    at(i) = e;
  }
  // Below this many entries the heap stays in the L2 cache: no prefetching.
  static constexpr std::size_t kPrefetchEntries = 4096;
  void sift_down(std::size_t i) {
    const Entry e = at(i);
    const std::size_t n = size();
    const bool prefetch = n > kPrefetchEntries;
    for (;;) {
      const std::size_t c = 4 * i + 1;
      if (c >= n) break;
      // A pop walks ~log4(n) levels, each a dependent cache miss in a big
      // heap: fetch all 16 grandchildren (6-7 lines) while the children are
      // compared, so two levels' misses overlap. The top levels (the first
      // 341 entries, 8 KiB) stay cached.
      if (prefetch && i >= 21) prefetch_entries(16 * i + 5, std::min(16 * i + 21, n));
      std::size_t best = c;
      const std::size_t end = std::min(c + 4, n);
      for (std::size_t j = c + 1; j < end; ++j)
        if (before(at(j), at(best))) best = j;
      if (!before(at(best), e)) break;
      at(i) = at(best);
      i = best;
    }
    at(i) = e;
  }
  void prefetch_entries(std::size_t first, std::size_t end) const {
    if (first >= end) return;
    const char* p = reinterpret_cast<const char*>(&at(first));
    const char* last = reinterpret_cast<const char*>(&at(end - 1));
    // The empty asm keeps this prefetch-only loop: GCC 12 deletes such loops
    // (docs/results.md, "prefetch loops that GCC deletes").
    for (; p <= last; p += 64) {
      __builtin_prefetch(p);
      asm volatile("");
    }
    __builtin_prefetch(last + sizeof(Entry) - 1);
  }

  HugeVector<Entry> v_;
};

// A priority queue of entries in exact (t, seq) order for any order of
// pushes (due times may go backwards, repeat, or lie anywhere in 64 bits).
//
// Due times are grouped in buckets of 2^kShift ns, numbered k = t >> kShift.
// `cur_` is the current bucket: entries with k <= cur_ (the current bucket,
// or earlier: time went backwards) are in `run_`, the entries a refill took
// out for bucket cur_, sorted once and read from the front, or, pushed
// while cur_ stood, in `near_`, an exact heap; the front is the smaller of
// their fronts. (A heap's push and pop for each refilled entry cost about
// 100 instructions; the sorted run about 20: docs/results.md, "The shuffled
// path's instructions".) Every other
// entry (k > cur_) is in the wheel, a radix heap over k in base 256: at the
// level of the highest base-256 digit where k differs from cur_, in the slot
// of its digit there. So run_ and near_ < level 0 < level 1 < ... in order,
// and within a level the slots are in order. When run_ and near_ are empty
// and the front is needed, the lowest non-empty slot of the lowest non-empty
// level is taken out: at level 0 its entries (one bucket) go to run_ and cur_
// becomes their bucket; higher up, cur_ becomes the slot's first bucket and
// its entries are placed again relative to it, each one level lower at least
// (or into run_). cur_ only grows, except when the queue is empty.
//
// Storage: each slot is a list of 512-byte chunks (21 entries) from one pool
// that grows amortised and is never shrunk; a taken slot's chunks go back to a
// LIFO free list, so the chunks a pass writes are the ones it just read.
class RadixWheel {
 public:
  using Entry = ThrottleEntry;
  static constexpr unsigned kShift = 13;  // 8.192 us buckets (13 against 12 or 14: docs/results.md, "The shuffled path's instructions")
  static constexpr unsigned kDigitBits = 8;
  static constexpr unsigned kSlots = 1U << kDigitBits;
  static constexpr unsigned kLevels = (64 - kShift + kDigitBits - 1) / kDigitBits;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Entry& e) {
    const std::uint64_t k = e.t >> kShift;
    if (size_ == 0 && k < cur_) cur_ = k;  // empty: start over from the earlier bucket
    ++size_;
    if (k <= cur_) {
      push_near(e);
    } else {
      place(k, e);  // after the front: top_ stands
    }
  }
  // The first entry. Pre: !empty(). Not const: it may take the next slot out.
  // The front is kept (top_) until a pop or a push into near_ may change it.
  const Entry& top() {
    if (top_) [[likely]]
      return *top_;
    return find_top();
  }
  // Pre: !empty(), top() called since the last push or pop.
  void pop() {
    if (from_run_) [[likely]]
      ++run_next_;
    else
      near_.pop();
    top_ = nullptr;
    --size_;
  }
  void clear() {
    top_ = nullptr;
    run_.clear();
    run_next_ = run_end_ = run_.data();
    near_.clear();
    std::fill(slots_.begin(), slots_.end(), Slot{});
    for (auto& b : bits_) b.fill(0);
    levels_ = 0;
    free_ = kNoChunk;
    fresh_ = 0;
    size_ = 0;
    cur_ = 0;
  }
  // Keeps the entries `keep` accepts, in place (no allocation).
  template <class Keep>
  void filter(const Keep& keep) {
    top_ = nullptr;
    near_.filter(keep);
    // The kept run entries slide to its start, in order.
    std::size_t kept = 0;
    for (const Entry* e = run_next_; e != run_end_; ++e)
      if (keep(*e)) run_[kept++] = *e;
    run_.resize(kept);
    run_next_ = run_.data();
    run_end_ = run_next_ + kept;
    std::size_t n = near_.size() + kept;
    for (unsigned lvl = 0; lvl < kLevels; ++lvl)
      for (unsigned d = 0; d < kSlots; ++d)
        if (bits_[lvl][d / 64] >> (d % 64) & 1) n += filter_slot(lvl, d, keep);
    size_ = n;
  }
  // Every entry, in no particular order.
  template <class Fn>
  void for_each(const Fn& fn) const {
    for (const Entry* e = run_next_; e != run_end_; ++e) fn(*e);
    for (const Entry& e : near_) fn(e);
    for (const Slot& s : slots_)
      for (std::uint32_t c = s.head; c != kNoChunk; c = pool_[c].next)
        for (std::uint32_t i = 0; i < pool_[c].n; ++i) fn(pool_[c].e[i]);
  }
  std::size_t bytes() const {
    return near_.bytes() + run_.capacity() * sizeof(Entry) + allocated_bytes(pool_) + slots_.capacity() * sizeof(Slot);
  }

 private:
  static constexpr std::uint32_t kNoChunk = 0xFFFFFFFFU;
  static constexpr std::uint32_t kChunkEntries = 21;
  // The header first: on the line of the first entries, which a slot with
  // few entries (a level-0 bucket holds about 4) reads and writes with it.
  struct alignas(64) Chunk {
    std::uint32_t next;  // the slot's next chunk, or the free list's
    std::uint32_t n;     // entries used; every chunk but a slot's last is full
    Entry e[kChunkEntries];
  };
  static_assert(sizeof(Chunk) == 512);
  struct Slot {
    std::uint32_t head = kNoChunk, tail = kNoChunk;
  };

  static unsigned level_of(std::uint64_t k, std::uint64_t cur) {
    return static_cast<unsigned>(63 - std::countl_zero(k ^ cur)) / kDigitBits;
  }
  static unsigned digit(std::uint64_t k, unsigned lvl) {
    return static_cast<unsigned>(k >> (lvl * kDigitBits)) & (kSlots - 1);
  }

  // Into the current bucket (or earlier): rare, and out of line, so that
  // the common push saves no registers for the heap's growth.
  [[gnu::noinline]] void push_near(const Entry& e) {
    near_.push(e);
    top_ = nullptr;
  }
  // Pre: k > cur_.
  void place(std::uint64_t k, const Entry& e) {
    if (slots_.empty()) [[unlikely]] init_slots();
    const unsigned lvl = level_of(k, cur_);
    append(lvl, digit(k, lvl), e);
  }
  void append(unsigned lvl, unsigned d, const Entry& e) {
    Slot& s = slot(lvl, d);
    std::uint32_t c = s.tail;
    if (c == kNoChunk) [[unlikely]] {
      c = allocate();
      s.head = s.tail = c;
      bits_[lvl][d / 64] |= std::uint64_t{1} << (d % 64);
      levels_ |= 1U << lvl;
    } else if (pool_[c].n == kChunkEntries) [[unlikely]] {
      const std::uint32_t grown = allocate();
      pool_[c].next = grown;
      s.tail = c = grown;
    }
    Chunk& ch = pool_[c];
    ch.e[ch.n++] = e;
  }
  std::uint32_t allocate() {
    std::uint32_t c;
    if (free_ != kNoChunk) {
      c = free_;
      free_ = pool_[c].next;
    } else {
      if (fresh_ == pool_.size()) grow();
      c = fresh_++;
    }
    pool_[c].next = kNoChunk;
    pool_[c].n = 0;
    return c;
  }
  // The slots (14 KiB) are allocated once, when first needed: a scheduler
  // whose throttles all come in order never pays for them.
  UFQ_TS_COLD void init_slots() { slots_.resize(std::size_t{kLevels} * kSlots); }
  Slot& slot(unsigned lvl, unsigned d) { return slots_[lvl * kSlots + d]; }
  UFQ_TS_COLD void grow() { pool_.resize(std::max<std::size_t>(16, 2 * pool_.size())); }
  void release(std::uint32_t c) {
    pool_[c].next = free_;
    free_ = c;
  }
  // Takes slot (lvl, d) out of the wheel; returns its first chunk.
  std::uint32_t take(unsigned lvl, unsigned d) {
    Slot& s = slot(lvl, d);
    const std::uint32_t head = s.head;
    s = Slot{};
    std::uint64_t& w = bits_[lvl][d / 64];
    w &= ~(std::uint64_t{1} << (d % 64));
    if (bits_[lvl][0] == 0 && bits_[lvl][1] == 0 && bits_[lvl][2] == 0 && bits_[lvl][3] == 0)
      levels_ &= ~(1U << lvl);
    return head;
  }
  unsigned first_slot(unsigned lvl) const {
    unsigned w = 0;
    while (bits_[lvl][w] == 0) ++w;
    return w * 64 + static_cast<unsigned>(std::countr_zero(bits_[lvl][w]));
  }

  // Pre: run_ (read to its end) and near_ empty, the wheel not. Until run_
  // holds the front: the first slot of the lowest level comes out (see the
  // class comment); run_ is then sorted. Out of line
  // but not cold: in shuffled flow order it runs every few releases, and GCC
  // optimises cold functions for size (no inlined place(), near_.push()).
  [[gnu::noinline]] void refill() {
    run_.clear();
    do {
      const unsigned lvl = static_cast<unsigned>(std::countr_zero(levels_));
      const unsigned d = first_slot(lvl);
      const unsigned above = (lvl + 1) * kDigitBits;
      const std::uint64_t high = above >= 64 ? 0 : cur_ >> above << above;
      cur_ = high | std::uint64_t{d} << (lvl * kDigitBits);
      // From level 1 (cur_'s digit 0 now 0, its higher digits the entries')
      // every entry not in bucket cur_ goes to level 0: no level_of().
      if (lvl == 1)
        redistribute<true>(take(lvl, d));
      else
        redistribute<false>(take(lvl, d));
    } while (run_.empty());
    sort_run();
    run_next_ = run_.data();
    run_end_ = run_next_ + run_.size();
  }
  // top() when the front is not known: the smaller of run_'s and near_'s
  // fronts (run_ refilled first when both are empty).
  const Entry& find_top() {
    if (near_.empty()) {
      if (run_next_ == run_end_) refill();  // into run_ only
      from_run_ = true;
    } else {
      from_run_ = run_next_ != run_end_ && before(*run_next_, near_.top());
    }
    top_ = from_run_ ? run_next_ : &near_.top();
    return *top_;
  }
  // refill(): the entries of a slot taken out (its first chunk `c`) placed
  // again relative to the new cur_. kToLevel0: the slot was at level 1.
  template <bool kToLevel0>
  void redistribute(std::uint32_t c) {
    while (c != kNoChunk) {
      const std::uint32_t next = pool_[c].next;
      if (next != kNoChunk) __builtin_prefetch(&pool_[next]);
      const std::uint32_t n = pool_[c].n;
      for (std::uint32_t i = 0; i < n; ++i) {
        // Copied and indexed anew: append() may grow the pool.
        const Entry e = pool_[c].e[i];
        const std::uint64_t k = e.t >> kShift;
        if (k == cur_)
          run_.push_back(e);
        else if (kToLevel0)
          append(0, digit(k, 0), e);
        else
          place(k, e);
      }
      release(c);
      c = next;
    }
  }
  // A bucket holds a few entries in the common case (insertion sort); many
  // (ties, bursts of throttles) get std::sort.
  void sort_run() {
    const std::size_t n = run_.size();
    if (n > 16) {
      std::sort(run_.begin(), run_.end(), before);
      return;
    }
    for (std::size_t i = 1; i < n; ++i) {
      const Entry e = run_[i];
      std::size_t j = i;
      for (; j > 0 && before(e, run_[j - 1]); --j) run_[j] = run_[j - 1];
      run_[j] = e;
    }
  }

  // filter() for one slot: the kept entries slide towards its head, the
  // chunks left over go back to the pool. Returns the entries kept.
  template <class Keep>
  std::size_t filter_slot(unsigned lvl, unsigned d, const Keep& keep) {
    Slot& s = slot(lvl, d);
    std::uint32_t wc = s.head, wn = 0;
    std::size_t kept = 0;
    for (std::uint32_t rc = s.head; rc != kNoChunk;) {
      const std::uint32_t next = pool_[rc].next, n = pool_[rc].n;
      for (std::uint32_t i = 0; i < n; ++i) {
        const Entry e = pool_[rc].e[i];
        if (!keep(e)) continue;
        if (wn == kChunkEntries) {  // full (it was already): on to the next, read already
          wc = pool_[wc].next;
          wn = 0;
        }
        pool_[wc].e[wn++] = e;
        ++kept;
      }
      rc = next;
    }
    if (kept == 0) {
      for (std::uint32_t c = take(lvl, d); c != kNoChunk;) {
        const std::uint32_t next = pool_[c].next;
        release(c);
        c = next;
      }
      return 0;
    }
    for (std::uint32_t c = pool_[wc].next; c != kNoChunk;) {
      const std::uint32_t next = pool_[c].next;
      release(c);
      c = next;
    }
    pool_[wc].next = kNoChunk;
    pool_[wc].n = wn;
    s.tail = wc;
    return kept;
  }

  std::vector<Entry> run_;  // bucket cur_'s refilled entries, sorted
  const Entry* run_next_ = nullptr;  // [run_next_, run_end_): run_'s entries not yet popped
  const Entry* run_end_ = nullptr;
  const Entry* top_ = nullptr;  // the front, while known (run_'s or near_'s)
  bool from_run_ = false;       // top_ is run_'s front
  QuadHeap near_;
  std::vector<Slot> slots_;  // kLevels x kSlots, level-major; empty until the first place()
  std::array<std::array<std::uint64_t, kSlots / 64>, kLevels> bits_{};  // non-empty slots
  std::uint32_t levels_ = 0;  // bit l: level l has a non-empty slot
  std::uint32_t free_ = kNoChunk;
  std::uint32_t fresh_ = 0;  // pool_[fresh_..] never handed out since clear()
  std::size_t size_ = 0;
  std::uint64_t cur_ = 0;
  HugeVector<Chunk> pool_;
};

// Entries in (t, seq) order: a FIFO lane takes every entry not earlier than its
// last one (O(1)); the others go to a RadixWheel. Stale entries (the flow left
// the set early, on socket reuse) are skipped when they surface.
class ThrottledSet {
 public:
  using Entry = ThrottleEntry;
  ThrottledSet() : lane_(64) { reset_lane(); }
  // The lane's pointers point into its own storage.
  ThrottledSet(const ThrottledSet&) = delete;
  ThrottledSet& operator=(const ThrottledSet&) = delete;
  // `seq` must be newer than every entry's (the throttle order only grows), so
  // the entry belongs behind the lane's last unless it is due earlier.
  // lane_back_t_ is also compared while the lane is empty (one test fewer
  // per throttle): it is then the last entry's time, at most the `until` of
  // the release that drained it, which a later throttle's time exceeds; if
  // not (time going back, stale entries popped early), the entry goes to the
  // wheel, which keeps the order as well.
  void push(Time t, std::uint64_t seq, std::uint32_t idx) {
    if (t >= lane_back_t_) [[likely]]
      lane_push(t, seq, idx);
    else
      wheel_push(t, seq, idx);
  }
  bool empty() const { return rd_ == wr_ && wheel_.empty(); }
  // The smaller of the two fronts (nullptr when empty) and whether it is the
  // lane's. Returned by value so the flag stays in a register. Not const: the
  // wheel may bring its next bucket forward. The entry is valid until the
  // next push or pop.
  struct Front {
    const Entry* entry;
    bool from_lane;
  };
  // Inline even with a wheel: a few out-of-order throttles (flows that waited
  // a DRR round for credit) can keep one there for long.
  Front top() {
    const Entry* l = rd_ != wr_ ? rd_ : nullptr;
    if (wheel_.empty()) [[likely]]
      return {l, true};
    const Entry& w = wheel_.top();
    if (l && before(*l, w)) return {l, true};
    return {&w, false};
  }
  // Pre: top() returned an entry with this flag since the last push or pop.
  void pop(bool from_lane) {
    if (from_lane) [[likely]] {
      rd_ = next(rd_);
    } else {
      wheel_pop();
    }
  }
  // While the wheel is empty (every throttle came in due-time order, the
  // common case) the lane's front is the set's: drain_lane() pops from the
  // front while visit(entry) returns true (the entry stays when it returns
  // false), without the wheel's tests, the ring's position kept in registers.
  // visit() must not touch the set.
  bool wheel_empty() const { return wheel_.empty(); }
  template <class Visit>
  [[gnu::always_inline]] void drain_lane(Visit&& visit) {
    Entry* rd = rd_;
    const Entry* const wr = wr_;
    Entry* const begin = begin_;
    const Entry* const end = end_;
    while (rd != wr && visit(*rd))
      if (++rd == end) rd = begin;
    rd_ = rd;
  }
  // fn(entry) for the lane's first min(k, lane size) entries, front first.
  template <class Fn>
  void for_lane_front(std::size_t k, const Fn& fn) const {
    for (const Entry* e = rd_; k != 0 && e != wr_; --k, e = next(e)) fn(*e);
  }
  // The lane entry `k` places behind the front, if there is one.
  const Entry* lane_ahead(std::size_t k) const {
    return k < lane_size() ? at(k) : nullptr;
  }
  void clear() {
    rd_ = wr_ = begin_;
    lane_back_t_ = 0;
    wheel_.clear();
  }
  std::size_t size() const { return lane_size() + wheel_.size(); }
  // Drop stale entries when they outnumber the live ones. In place (the live
  // lane entries slide towards the head, keeping their order): no allocation.
  template <class Live>
  void compact(const Live& live) {
    Entry* w = rd_;
    for (Entry* e = rd_; e != wr_; e = next(e))
      if (live(*e)) {
        *w = *e;
        w = next(w);
      }
    wr_ = w;
    lane_back_t_ = rd_ != wr_ ? lane_back().t : 0;
    wheel_.filter(live);
  }
  std::size_t bytes() const { return allocated_bytes(lane_) + wheel_.bytes(); }
  // Every entry, stale ones included, in no particular order.
  template <class Fn>
  void for_each(const Fn& fn) const {
    for (const Entry* e = rd_; e != wr_; e = next(e)) fn(*e);
    wheel_.for_each(fn);
  }

 private:
  // The ring's next place after `e`.
  template <class E>
  E* next(E* e) const {
    return ++e == end_ ? begin_ : e;
  }
  std::size_t lane_size() const {
    return static_cast<std::size_t>(wr_ >= rd_ ? wr_ - rd_ : (end_ - rd_) + (wr_ - begin_));
  }
  // The entry `k` places behind the front. Pre: k < lane_size().
  const Entry* at(std::size_t k) const {
    const std::size_t to_end = static_cast<std::size_t>(end_ - rd_);
    return k < to_end ? rd_ + k : begin_ + (k - to_end);
  }
  const Entry& lane_back() const { return wr_ == begin_ ? end_[-1] : wr_[-1]; }
  // Field by field: an Entry built first went through the stack. Full
  // (the write place reaching the front) only after a push: grown then.
  void lane_push(Time t, std::uint64_t seq, std::uint32_t idx) {
    Entry* e = wr_;
    e->t = t;
    e->seq = seq;
    e->idx = idx;
    lane_back_t_ = t;
    e = next(e);
    wr_ = e;
    if (e == rd_) [[unlikely]] grow_lane();
  }
  // Pre: full (wr_ == rd_ after a push).
  UFQ_TS_COLD void grow_lane() {
    const std::size_t n = lane_.size();
    HugeVector<Entry> grown(n * 2);
    const Entry* e = rd_;
    for (std::size_t i = 0; i < n; ++i, e = next(e)) grown[i] = *e;
    lane_ = std::move(grown);
    reset_lane();
    wr_ = begin_ + n;
  }
  void reset_lane() {
    begin_ = rd_ = wr_ = lane_.data();
    end_ = begin_ + lane_.size();
  }
  // Out of line (the lane-only paths keep their registers), not cold: half
  // the throttles in shuffled order (cold is optimised for size).
  // The fields in registers (an Entry built by the caller went through the stack).
  [[gnu::noinline]] void wheel_push(Time t, std::uint64_t seq, std::uint32_t idx) { wheel_.push(Entry{t, seq, idx}); }
  [[gnu::noinline]] void wheel_pop() { wheel_.pop(); }

  // A ring buffer, read at rd_ and written at wr_ (empty when they meet; it
  // grows when a push fills it). Pointers, not indices: a push is then a
  // store through one and a compare with the ring's end.
  HugeVector<Entry> lane_;
  Entry* begin_ = nullptr;  // lane_'s storage, [begin_, end_)
  Entry* end_ = nullptr;
  Entry* rd_ = nullptr;  // the front
  Entry* wr_ = nullptr;  // the place behind the last
  Time lane_back_t_ = 0;  // lane_back().t; while the lane is empty its last entry's (or 0): push() compares with it
  RadixWheel wheel_;
};

}  // namespace ufq::detail

#undef UFQ_TS_COLD
