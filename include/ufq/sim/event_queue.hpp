// The simulator's virtual clock and its pending events.
//
// An Event is a callback owned by whoever needs it (a NIC, a traffic source,
// the clock-event device of an HrtimerModel) and bound to one EventQueue. The
// queue is an indexed binary heap of {time, sequence, event} entries in one
// reusable vector: arming, moving and cancelling an event never allocate once
// the vector has grown to the largest number of simultaneously armed events.
//
// Order is total and deterministic: by time, then by the sequence number the
// event got when it was last armed (so events armed for the same instant run
// in the order they were armed). Nothing depends on addresses or on wall-clock
// time, so the same inputs always give the same run. Because no two entries
// compare equal, the run order does not depend on the heap's shape either.
//
// Speed (docs/simulator.md, "Speed"): most events arm one new event from their
// callback, so the entry that has just run is not removed at once. Its slot at
// the root stays vacant until the next operation: an arm fills it with one
// sift-down instead of a removal's sift-down plus an insertion's sift-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "ufq/time.hpp"

namespace ufq::sim {

class EventQueue;

// One schedulable callback. Not copyable or movable: the queue refers to it by
// address while it is armed. Destroying an armed Event cancels it.
class Event {
 public:
  using Callback = std::function<void()>;

  // Binds the event to `queue` for its whole life; `queue` must outlive it
  // (or be destroyed first, which disarms every event it holds).
  Event(EventQueue& queue, Callback callback);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // True from schedule() until the event runs or is cancelled. While the
  // callback runs the event is no longer armed, so the callback may re-arm it.
  bool armed() const { return heap_index_ != kNotArmed; }

  // The time the event will run at. Precondition: armed().
  Time when() const;

  // Replace the callback. Allowed at any time except from inside the callback
  // being replaced.
  void set_callback(Callback callback) { callback_ = std::move(callback); }

  EventQueue& queue() const { return *queue_; }

 private:
  friend class EventQueue;
  static constexpr std::size_t kNotArmed = ~std::size_t{0};

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
  void schedule(Event& event, Time at);

  // Disarm `event`. Returns whether it was armed (false, doing nothing, for an
  // event bound to another queue). Never allocates.
  bool cancel(Event& event);

  // Number of armed events.
  std::size_t size() const { return heap_.size() - (root_vacant_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  // Time of the earliest armed event, kNever when none.
  Time next_time() const;

  // Run the earliest event: advance now() to its time, disarm it, call its
  // callback. Returns false (doing nothing) when no event is armed.
  bool run_next();

  // Run every event due at or before `limit`, including those that callbacks
  // arm within the limit, then advance now() to `limit`. Returns how many ran.
  // Precondition: now() <= limit < kNever (throws std::logic_error).
  std::uint64_t run_until(Time limit);

  // Run events until none is armed. Returns how many ran. Does not return if
  // callbacks keep re-arming events forever.
  std::uint64_t run();

  // Events run since construction.
  std::uint64_t events_run() const { return events_run_; }

  // Pre-size the heap for `n` simultaneously armed events.
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  struct Entry {
    Time time;
    std::uint64_t seq;
    Event* event;
  };
  static bool earlier(const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  }
  void place(std::size_t i, const Entry& e);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void restore(std::size_t i);  // sift in whichever direction is needed
  void remove_at(std::size_t i);
  // Remove the vacant root entry, if any (the event that ran last and armed nothing).
  void settle() {
    if (root_vacant_) {
      root_vacant_ = false;
      remove_root();
    }
  }
  void remove_root();

  friend class Event;
  std::vector<Entry> heap_;
  Time now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  bool root_vacant_ = false;  // heap_[0] is the entry of the event that ran last (disarmed)
};

}  // namespace ufq::sim
