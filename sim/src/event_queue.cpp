#include "ufq/sim/event_queue.hpp"

#include <stdexcept>
#include <utility>

namespace ufq::sim {

Event::Event(EventQueue& queue, Callback callback)
    : queue_(&queue), callback_(std::move(callback)) {}

Event::~Event() {
  if (armed()) queue_->cancel(*this);
}

Time Event::when() const { return queue_->heap_[heap_index_].time; }

EventQueue::~EventQueue() {
  // A vacant root's event is already disarmed (and may be gone).
  for (std::size_t i = root_vacant_ ? 1 : 0; i < heap_.size(); ++i) heap_[i].event->heap_index_ = Event::kNotArmed;
}

Time EventQueue::next_time() const {
  if (!root_vacant_) return heap_.empty() ? kNever : heap_.front().time;
  // The earliest armed entry is one of the vacant root's children.
  const std::size_t n = heap_.size();
  if (n < 2) return kNever;
  if (n < 3) return heap_[1].time;
  return earlier(heap_[1], heap_[2]) ? heap_[1].time : heap_[2].time;
}

void EventQueue::schedule(Event& event, Time at) {
  if (event.queue_ != this) throw std::logic_error("EventQueue::schedule: event bound to another queue");
  if (at < now_) throw std::logic_error("EventQueue::schedule: time in the past");
  if (at == kNever) throw std::logic_error("EventQueue::schedule: time is kNever");
  const Entry entry{at, next_seq_++, &event};
  if (root_vacant_ && !event.armed()) {
    root_vacant_ = false;
    place(0, entry);
    sift_down(0);
    return;
  }
  settle();
  if (event.armed()) {
    place(event.heap_index_, entry);
    restore(event.heap_index_);
  } else {
    heap_.push_back(entry);
    event.heap_index_ = heap_.size() - 1;
    sift_up(event.heap_index_);
  }
}

bool EventQueue::cancel(Event& event) {
  if (!event.armed() || event.queue_ != this) return false;
  settle();
  remove_at(event.heap_index_);
  return true;
}

bool EventQueue::run_next() {
  settle();
  if (heap_.empty()) return false;
  Event& event = *heap_.front().event;
  now_ = heap_.front().time;
  event.heap_index_ = Event::kNotArmed;
  root_vacant_ = true;
  ++events_run_;
  event.callback_();
  return true;
}

std::uint64_t EventQueue::run_until(Time limit) {
  if (limit < now_ || limit == kNever) throw std::logic_error("EventQueue::run_until: bad limit");
  std::uint64_t n = 0;
  for (;;) {
    settle();
    if (heap_.empty() || heap_.front().time > limit) break;
    run_next();
    ++n;
  }
  now_ = limit;
  return n;
}

std::uint64_t EventQueue::run() {
  std::uint64_t n = 0;
  while (run_next()) ++n;
  return n;
}

void EventQueue::place(std::size_t i, const Entry& e) {
  heap_[i] = e;
  e.event->heap_index_ = i;
}

void EventQueue::sift_up(std::size_t i) {
  const Entry moving = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(moving, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, moving);
}

void EventQueue::sift_down(std::size_t i) {
  const Entry moving = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], moving)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, moving);
}

void EventQueue::restore(std::size_t i) {
  if (i > 0 && earlier(heap_[i], heap_[(i - 1) / 2])) {
    sift_up(i);
  } else {
    sift_down(i);
  }
}

void EventQueue::remove_root() {
  const std::size_t last = heap_.size() - 1;
  if (last == 0) {
    heap_.pop_back();
    return;
  }
  place(0, heap_[last]);
  heap_.pop_back();
  sift_down(0);
}

void EventQueue::remove_at(std::size_t i) {
  heap_[i].event->heap_index_ = Event::kNotArmed;
  const std::size_t last = heap_.size() - 1;
  if (i != last) {
    place(i, heap_[last]);
    heap_.pop_back();
    restore(i);
  } else {
    heap_.pop_back();
  }
}

}  // namespace ufq::sim
