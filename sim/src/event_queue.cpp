#include "ufq/sim/event_queue.hpp"

#include <stdexcept>

namespace ufq::sim {

EventQueue::~EventQueue() {
  // A vacant root's event is already disarmed (and may be gone).
  for (std::size_t i = root_vacant_ ? 1 : 0; i < n_; ++i) heap_[i].event->heap_index_ = Event::kNotArmed;
}

void EventQueue::bad_time(Time at) {
  if (at == kNever) throw std::logic_error("EventQueue::schedule: time is kNever");
  throw std::logic_error("EventQueue::schedule: time in the past");
}

Time EventQueue::next_time() const {
  // Entries may be early (see the header), so ask the events themselves.
  detail::EventKey best = ~detail::EventKey{0};
  for (std::size_t i = root_vacant_ ? 1 : 0; i < n_; ++i)
    if (heap_[i].event->key_ < best) best = heap_[i].event->key_;
  return size() ? static_cast<Time>(best >> 64) : kNever;
}

bool EventQueue::cancel(Event& event) {
  if (!event.armed() || event.queue_ != this) return false;
  settle();
  remove_at(event.heap_index_);
  return true;
}

std::uint64_t EventQueue::run() {
  std::uint64_t n = 0;
  while (run_next()) ++n;
  return n;
}

void EventQueue::remove_at(std::size_t i) {
  heap_[i].event->heap_index_ = Event::kNotArmed;
  const Entry last = heap_[--n_];
  heap_[n_] = sentinel();
  if (i == n_) return;
  if (i > 0 && last.key < heap_[(i - 1) / 2].key)
    sift_up(i, last);
  else
    sift_down(i, last);
}

}  // namespace ufq::sim
