// Baseline: the pattern common in user-space pacers. A hash map from flow key
// to flow, a FIFO per flow, and one binary heap of next-send times (one entry
// per backlogged flow). No DRR, no bands, no GC: it is here to be measured,
// not to decide as fq does.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "ufq/packet.hpp"

namespace ufq::bench {

class HeapPacer {
 public:
  bool enqueue(Packet& p, Time now) {
    const std::uint64_t key = p.owner ? p.owner->id << 1 : (std::uint64_t{p.hash} << 1) | 1;
    auto [it, fresh] = index_.try_emplace(key, static_cast<std::uint32_t>(flows_.size()));
    if (fresh) flows_.push_back(Flow{});
    Flow& f = flows_[it->second];
    p.time_to_send_ = p.tstamp ? p.tstamp : now;
    p.next_ = nullptr;
    if (f.tail)
      f.tail->next_ = &p;
    else
      f.head = &p;
    f.tail = &p;
    if (f.head == &p) heap_.push(Item{std::max(p.time_to_send_, f.next_send), it->second});
    return true;
  }

  // When the earliest flow may send (kNever when nothing is queued): a pacer
  // thread sleeps until then (plus its timer slack).
  Time next_due() const { return heap_.empty() ? kNever : heap_.top().t; }

  Packet* dequeue(Time now) {
    if (heap_.empty() || heap_.top().t > now) return nullptr;
    const Item top = heap_.top();
    heap_.pop();
    Flow& f = flows_[top.flow];
    Packet* p = f.head;
    f.head = p->next_;
    if (!f.head) f.tail = nullptr;
    p->next_ = nullptr;
    const Rate rate = p->owner ? p->owner->pacing_rate : kUnlimitedRate;
    f.next_send = rate == kUnlimitedRate || rate == 0 ? now : now + p->len * kNsecPerSec / rate;
    if (f.head) heap_.push(Item{std::max(f.head->time_to_send_, f.next_send), top.flow});
    return p;
  }

 private:
  struct Flow {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    Time next_send = 0;
  };
  struct Item {
    Time t;
    std::uint32_t flow;
    bool operator>(const Item& o) const { return t > o.t; }
  };
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  std::vector<Flow> flows_;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap_;
};

}  // namespace ufq::bench
