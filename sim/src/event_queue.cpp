#include "ufq/sim/event_queue.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace ufq::sim {

EventQueue::EventQueue(Time start) : near_(new Near[kNearSlots]), now_(start) {
  far_.resize(kInitialFarSlots, sentinel());
}

EventQueue::~EventQueue() {
  for (std::uint32_t i = lo_; i < hi_; ++i) near_[i].event->filed_ = Event::kNotFiled;
  for (std::size_t i = 0; i < n_far_; ++i) far_[i].event->filed_ = Event::kNotFiled;
  for (std::uint32_t i = 0; i < n_relays_; ++i) relays_[i]->key_ &= ~detail::EventKey{detail::kSeqUnknown};
}

void EventQueue::bad_relay() {
  throw std::logic_error("EventQueue::schedule_relay: the second stage's time (at + delay) reaches kNever");
}

void EventQueue::bad_queue() {
  throw std::logic_error("EventQueue::schedule: event bound to another queue");
}

void EventQueue::bad_time(Time at) {
  if (at == kNever) throw std::logic_error("EventQueue::schedule: time is kNever");
  throw std::logic_error("EventQueue::schedule: time in the past");
}

Time EventQueue::next_time() const {
  // Entries may be early (see the header), so ask the events themselves.
  detail::EventKey best = ~detail::EventKey{0};
  for (std::uint32_t i = lo_; i < hi_; ++i) best = std::min(best, near_[i].event->key_);
  for (std::size_t i = 0; i < n_far_; ++i) best = std::min(best, far_[i].event->key_);
  // A relay's first stage comes before its second's entry.
  return size() ? std::min(static_cast<Time>(best >> 64), relay_at_) : kNever;
}

bool EventQueue::cancel(Event& event) {
  if (!event.armed() || event.queue_ != this) return false;
  if (event.seq_unknown()) forget_relay(event);
  unfile(event);
  event.filed_ = Event::kNotFiled;
  event.relay_ = 0;  // schedule_unarmed() arms a plain event
  return true;
}

void EventQueue::refile_early(Event& e) {
  unfile(e);
  e.filed_ = e.key_;
  file<false>(e.key_, &e);
}

std::uint64_t EventQueue::run() {
  const std::uint64_t before = events_run_;
  while (run_next()) {
  }
  return events_run_ - before;
}

void EventQueue::recenter() {
  const std::uint32_t n = hi_ - lo_;
  const std::uint32_t to = (kNearSlots - n) / 2;
  Near* const a = near_.get();
  if (to < lo_)
    std::copy(a + lo_, a + hi_, a + to);
  else
    std::copy_backward(a + lo_, a + hi_, a + to + n);
  lo_ = to;
  hi_ = to + n;
}

void EventQueue::refill() {
  const std::size_t n = std::min<std::size_t>(n_far_, kNearMax / 2);
  lo_ = hi_ = static_cast<std::uint32_t>((kNearSlots - n) / 2);
  for (std::size_t i = 0; i < n; ++i) {
    near_[hi_++] = Near{time_of(far_[0].key), far_[0].event};
    remove_far_root();
  }
}

void EventQueue::unfile(Event& event) {
  entry_gone(event);
  // Near entries are below every far one.
  if (lo_ != hi_ && event.filed_ <= near_[hi_ - 1].event->filed_) {
    Near* const a = near_.get();
    const std::uint32_t i = static_cast<std::uint32_t>(
        std::lower_bound(a + lo_, a + hi_, event.filed_, [](const Near& e, detail::EventKey k) { return e.event->filed_ < k; }) - a);
    // Close the gap from the nearer end (a few entries: plain loops, no
    // library call).
    if (i - lo_ < hi_ - 1 - i) {
      for (std::uint32_t k = i; k > lo_; --k) a[k] = a[k - 1];
      ++lo_;
    } else {
      for (std::uint32_t k = i; k + 1 < hi_; ++k) a[k] = a[k + 1];
      --hi_;
    }
    return;
  }
  remove_far_at(event.heap_index_);
}

void EventQueue::remove_far_at(std::size_t i) {
  const Entry last = far_[--n_far_];
  far_[n_far_] = sentinel();
  if (i == n_far_) return;
  if (i > 0 && last.key < far_[(i - 1) / 2].key)
    sift_up(i, last);
  else
    sift_down(i, last);
}

}  // namespace ufq::sim
