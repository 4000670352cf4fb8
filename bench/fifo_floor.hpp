// The floor benchmark's queue: the least a queue that releases packets at
// their departure time can do per packet. One FIFO of every packet in arrival
// order, released while the head's departure time has come; no flows, no
// fairness, no per-flow rates, no bands, no statistics. The paced benchmarks'
// packets arrive with non-decreasing departure times, so it releases them when
// fq would, and the difference between it and a scheduler is the price of fq's
// decisions, not of moving a packet (issue "Scale": round-robin paced 1k flows
// within 2.5x of this).
#pragma once

#include "ufq/packet.hpp"

namespace ufq::bench {

class FifoFloor {
 public:
  bool enqueue(Packet& p, Time now) {
    p.time_to_send_ = p.tstamp ? p.tstamp : now;
    p.next_ = nullptr;
    if (tail_)
      tail_->next_ = &p;
    else
      head_ = &p;
    tail_ = &p;
    return true;
  }

  // When the head may leave (kNever when nothing is queued).
  Time next_due() const { return head_ ? head_->time_to_send_ : kNever; }
  // The oldest queued packet (nullptr when empty); the rest follow through next_.
  const Packet* head() const { return head_; }

  Packet* dequeue(Time now) {
    Packet* p = head_;
    if (!p || p->time_to_send_ > now) return nullptr;
    head_ = p->next_;
    if (!head_) tail_ = nullptr;
    p->next_ = nullptr;
    return p;
  }

 private:
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
};

}  // namespace ufq::bench
