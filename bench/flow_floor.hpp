// The per-flow floor: the FIFO floor (fifo_floor.hpp) plus the least per-flow
// state a fair scheduler keeps, to measure what flow order alone costs. Per
// packet it touches the random lines any scheduler with per-flow state must:
// the owner and the flow's record at enqueue, the record again at dequeue
// (the packets themselves it reaches in arrival order, as the FIFO floor
// does). It cheats wherever a scheduler could not: the record is indexed by
// the owner's id (no lookup, no hash, no key check), there is one FIFO for all
// flows (no fairness, no pacing), and it keeps 16 bytes per flow. Its batched
// calls prefetch owners and records ahead, as FqScheduler's do, so in shuffled
// order it shows how far prefetching hides those lines on this machine: the
// yardstick for the fast scheduler's shuffled / round-robin ratio
// (docs/results.md, "The per-flow floor").
// Pre: every owner's id is below 2^32 (the harnesses number them 1..flows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fifo_floor.hpp"
#include "huge_pages.hpp"
#include "ufq/packet.hpp"
#include "ufq/verdict.hpp"

namespace ufq::bench {

class FlowFloor {
 public:
  // Queues in[0..n) in order; every verdict is `queued`. Returns in.size().
  std::size_t enqueue_burst(std::span<Packet* const> in, Time now, std::span<Verdict> verdicts) {
    const std::size_t n = in.size();
    // Owners kOwnerAhead packets ahead, records kRecordAhead ahead (the owner
    // line, prefetched earlier, gives the index).
    for (std::size_t k = 0; k < n + kOwnerAhead; ++k) {
      if (k < n) __builtin_prefetch(in[k]->owner);
      if (k >= kOwnerAhead - kRecordAhead && k - (kOwnerAhead - kRecordAhead) < n)
        prefetch_record(in[k - (kOwnerAhead - kRecordAhead)]->owner->id);
      if (k >= kOwnerAhead) {
        const std::size_t i = k - kOwnerAhead;
        push(*in[i], now);
        verdicts[i] = Verdict::queued;
      }
    }
    return n;
  }

  Verdict enqueue(Packet& p, Time now) {
    push(p, now);
    return Verdict::queued;
  }

  // Up to out.size() due packets in arrival order; their records prefetched
  // before any is updated.
  std::size_t dequeue_burst(Time now, std::span<Packet*> out) {
    std::size_t n = 0;
    for (const Packet* p = fifo_.head(); p && n < out.size() && p->time_to_send_ <= now; p = p->next_, ++n)
      __builtin_prefetch(&records_[p->right_bits_], 1);
    for (std::size_t k = 0; k < n; ++k) out[k] = dequeue(now);
    return n;
  }

  Packet* dequeue(Time now) {
    Packet* p = fifo_.dequeue(now);
    if (p) {
      Record& r = records_[p->right_bits_];
      --r.qlen;
      r.credit -= static_cast<std::int32_t>(p->len);
    }
    return p;
  }

  // When the head may leave (kNever when nothing is queued).
  Time next_due() const { return fifo_.next_due(); }

 private:
  struct Record {
    std::uint64_t bytes = 0;
    std::uint32_t qlen = 0;
    std::int32_t credit = 0;
  };
  static constexpr std::size_t kOwnerAhead = 12, kRecordAhead = 6;

  void prefetch_record(std::uint64_t id) {
    if (id < records_.size()) __builtin_prefetch(&records_[id], 1);
  }

  void push(Packet& p, Time now) {
    const std::uint64_t id = p.owner ? p.owner->id : 0;
    if (id >= records_.size()) records_.resize(id + 1);  // only while flows are first seen
    Record& r = records_[id];
    ++r.qlen;
    r.bytes += p.len;
    fifo_.enqueue(p, now);
    p.right_bits_ = id;
  }

  detail::HugeVector<Record> records_;
  FifoFloor fifo_;
};

}  // namespace ufq::bench
