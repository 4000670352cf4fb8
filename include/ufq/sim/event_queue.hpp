// The simulator's virtual clock and its pending events.
//
// An Event is a callback owned by whoever needs it (a NIC, a traffic source,
// the clock-event device of an HrtimerModel) and bound to one EventQueue. The
// queue is an indexed binary heap of {key, event} entries in one reusable
// vector (a 4-ary one ran 1.7 % more instructions on the main job): arming,
// moving and cancelling an event never allocate once the vector has grown to
// the largest number of simultaneously armed events.
//
// Order is total and deterministic: by time, then by the sequence number the
// event got when it was last armed (so events armed for the same instant run
// in the order they were armed). Nothing depends on addresses or on wall-clock
// time, so the same inputs always give the same run. Because no two keys are
// equal, the run order does not depend on the heap's shape either.
//
// Speed (docs/simulator.md, "Speed"); each trick keeps that order exactly:
//  * the key is one 128-bit number, time above sequence, so an entry compares
//    in two instructions;
//  * most events arm one new event from their callback, so the entry that has
//    just run is not removed at once: its slot at the root stays vacant until
//    the next operation, and an arm fills it with one sift-down instead of a
//    removal's sift-down plus an insertion's sift-up;
//  * an armed event moved later (a clock-event device reprogrammed for a later
//    timer, several times between firings) keeps its entry where it is, under
//    its old, smaller key; the event holds its true key. Such an entry only
//    surfaces earlier than its event is due, and is then re-keyed and sifted
//    down once, however many moves it had. Every other entry's key is at most
//    its event's, so a root whose key is true is the earliest event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ufq/time.hpp"

namespace ufq::sim {

class EventQueue;

namespace detail {
__extension__ typedef unsigned __int128 EventKey;  // time << 64 | sequence
}  // namespace detail

// One schedulable callback. Not copyable or movable: the queue refers to it by
// address while it is armed. Destroying an armed Event cancels it.
class Event {
 public:
  using Callback = std::function<void()>;

  // Binds the event to `queue` for its whole life; `queue` must outlive it
  // (or be destroyed first, which disarms every event it holds).
  Event(EventQueue& queue, Callback callback) : queue_(&queue), callback_(std::move(callback)) {}
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // True from schedule() until the event runs or is cancelled. While the
  // callback runs the event is no longer armed, so the callback may re-arm it.
  bool armed() const { return heap_index_ != kNotArmed; }

  // The time the event will run at. Precondition: armed().
  Time when() const { return static_cast<Time>(key_ >> 64); }

  // Replace the callback. Allowed at any time except from inside the callback
  // being replaced.
  void set_callback(Callback callback) { callback_ = std::move(callback); }

  EventQueue& queue() const { return *queue_; }

 private:
  friend class EventQueue;
  static constexpr std::size_t kNotArmed = ~std::size_t{0};

  detail::EventKey key_ = 0;  // while armed: its true key (its entry's may be smaller)
  EventQueue* queue_;
  Callback callback_;
  std::size_t heap_index_ = kNotArmed;  // position in EventQueue::heap_
};

class EventQueue {
 public:
  // Virtual time starts at `start`.
  explicit EventQueue(Time start = 0) : now_(start) {}
  // Disarms every event still armed (their destructors then do nothing).
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Current virtual time: the time of the event running now, or of the last
  // one run, or the limit of the last run_until(). Never decreases.
  Time now() const { return now_; }

  // Arm `event` (bound to this queue) to run at `at`, or move it there if it
  // is already armed. It gets a fresh sequence number either way, so it runs
  // after every event already armed for the same instant. Preconditions:
  // now() <= at < kNever (throws std::logic_error otherwise: a simulation that
  // schedules into the past is wrong, not slow), and `event` is bound to this
  // queue (also std::logic_error). No allocation once the heap has reached its
  // high-water mark.
  void schedule(Event& event, Time at) {
    if (event.queue_ != this) [[unlikely]] throw std::logic_error("EventQueue::schedule: event bound to another queue");
    if (at < now_ || at == kNever) [[unlikely]] bad_time(at);
    const detail::EventKey key = detail::EventKey{at} << 64 | next_seq_++;
    event.key_ = key;
    if (event.armed()) {
      // Moved later: the entry stays, under a smaller key (see above).
      if (heap_[event.heap_index_].key < key) return;
      settle();
      heap_[event.heap_index_].key = key;
      sift_up(event.heap_index_);
    } else if (root_vacant_) {
      root_vacant_ = false;
      heap_[0] = Entry{key, &event};
      sift_down(0);
    } else {
      heap_.push_back(Entry{key, &event});
      sift_up(heap_.size() - 1);
    }
  }

  // Disarm `event`. Returns whether it was armed (false, doing nothing, for an
  // event bound to another queue). Never allocates.
  bool cancel(Event& event);

  // Number of armed events.
  std::size_t size() const { return heap_.size() - (root_vacant_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  // Time of the earliest armed event, kNever when none.
  Time next_time() const;

  // False only if no armed event is due at now(): then a callback that would
  // arm an event for now() may run its work at the end of its own instead, in
  // the same order (every event armed from now on comes after it anyway). May
  // be true for an event moved later (conservative). O(1).
  bool maybe_due_now() const {
    const std::size_t n = heap_.size();
    if (!root_vacant_) return n > 0 && static_cast<Time>(heap_[0].key >> 64) <= now_;
    for (std::size_t c = 1; c <= kArity && c < n; ++c)  // the vacant root's children
      if (static_cast<Time>(heap_[c].key >> 64) <= now_) return true;
    return false;
  }

  // Run the earliest event: advance now() to its time, disarm it, call its
  // callback. Returns false (doing nothing) when no event is armed.
  bool run_next() {
    if (!surface()) return false;
    run_root();
    return true;
  }

  // Run every event due at or before `limit`, including those that callbacks
  // arm within the limit, then advance now() to `limit`. Returns how many ran.
  // Precondition: now() <= limit < kNever (throws std::logic_error).
  std::uint64_t run_until(Time limit) {
    if (limit < now_ || limit == kNever) throw std::logic_error("EventQueue::run_until: bad limit");
    const detail::EventKey last = detail::EventKey{limit} << 64 | ~std::uint64_t{0};
    std::uint64_t n = 0;
    for (const Entry* root; (root = surface()) && root->key <= last; ++n) run_root();
    now_ = limit;
    return n;
  }

  // Run events until none is armed. Returns how many ran. Does not return if
  // callbacks keep re-arming events forever.
  std::uint64_t run();

  // Events run since construction.
  std::uint64_t events_run() const { return events_run_; }

  // Pre-size the heap for `n` simultaneously armed events.
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  struct Entry {
    detail::EventKey key;  // at most event->key_ (equal unless the event was moved later)
    Event* event;
  };
  static constexpr std::size_t kArity = 2;  // children per entry

  [[noreturn]] static void bad_time(Time at);

  // Settle the vacant root and re-key early entries until the root is the
  // earliest armed event; nullptr when none is armed.
  const Entry* surface() {
    settle();
    while (!heap_.empty()) {
      Entry& root = heap_[0];
      if (root.key == root.event->key_) [[likely]] return &root;
      root.key = root.event->key_;
      sift_down(0);
    }
    return nullptr;
  }
  // Run the root (surfaced): its slot stays vacant until the next operation.
  void run_root() {
    Event& event = *heap_[0].event;
    now_ = static_cast<Time>(event.key_ >> 64);
    event.heap_index_ = Event::kNotArmed;
    root_vacant_ = true;
    ++events_run_;
    event.callback_();
  }

  void sift_up(std::size_t i) {
    const Entry moving = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (heap_[parent].key < moving.key) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, moving);
  }
  void sift_down(std::size_t i) {
    const Entry moving = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[c].key < heap_[best].key) best = c;
      if (moving.key < heap_[best].key) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, moving);
  }
  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    e.event->heap_index_ = i;
  }
  // Remove the vacant root entry, if any (the event that ran last and armed nothing).
  void settle() {
    if (root_vacant_) {
      root_vacant_ = false;
      remove_root();
    }
  }
  void remove_root();
  void remove_at(std::size_t i);

  friend class Event;
  std::vector<Entry> heap_;
  Time now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  bool root_vacant_ = false;  // heap_[0] is the entry of the event that ran last (disarmed)
};

inline Event::~Event() {
  if (armed()) queue_->cancel(*this);
}

}  // namespace ufq::sim
