// The simulator's virtual clock and its pending events.
//
// An Event is a callback owned by whoever needs it (a NIC, a traffic source,
// the clock-event device of an HrtimerModel) and bound to one EventQueue. The
// queue is an indexed binary heap of {key, event} entries in one reusable
// vector, padded with a sentinel entry that never wins (a 4-ary heap ran
// 1.7 % more instructions on the main job): arming,
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
  // The cheaper form, for the simulator's hot events: a plain function called
  // with `context` (no std::function indirection per run).
  using Fn = void (*)(void* context);

  // Binds the event to `queue` for its whole life; `queue` must outlive it
  // (or be destroyed first, which disarms every event it holds).
  Event(EventQueue& queue, Callback callback)
      : queue_(&queue), fn_(&call_callback), context_(this), callback_(std::move(callback)) {}
  // As above, running fn(context). Precondition: fn is not null.
  Event(EventQueue& queue, Fn fn, void* context) : queue_(&queue), fn_(fn), context_(context) {}
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
  void set_callback(Callback callback) {
    callback_ = std::move(callback);
    fn_ = &call_callback;
    context_ = this;
  }

  EventQueue& queue() const { return *queue_; }

 private:
  friend class EventQueue;
  static constexpr std::size_t kNotArmed = ~std::size_t{0};
  static void call_callback(void* self) { static_cast<Event*>(self)->callback_(); }

  detail::EventKey key_ = 0;  // while armed: its true key (its entry's may be smaller)
  EventQueue* queue_;
  std::size_t heap_index_ = kNotArmed;  // position in EventQueue::heap_
  Fn fn_;
  void* context_;
  Callback callback_;  // the std::function form's callback (fn_ calls it)
};

class EventQueue {
 public:
  // Virtual time starts at `start`.
  explicit EventQueue(Time start = 0) : now_(start) { heap_.resize(kInitialSlots, sentinel()); }
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
  void schedule(Event& event, Time at) { schedule_key(event, at, next_seq_++); }

  // Take the sequence number schedule() would give next, for an arm decided
  // now but made later with schedule_reserved(): the event then runs where it
  // would have had it been armed now (a clock-event device written several
  // times in one interrupt is armed once, at the interrupt's end).
  std::uint64_t reserve_seq() { return next_seq_++; }
  // schedule(event, at) with the sequence number `seq` from reserve_seq()
  // (not used for another arm). Same preconditions as schedule().
  void schedule_reserved(Event& event, Time at, std::uint64_t seq) { schedule_key(event, at, seq); }

  // Disarm `event`. Returns whether it was armed (false, doing nothing, for an
  // event bound to another queue). Never allocates.
  bool cancel(Event& event);

  // Number of armed events.
  std::size_t size() const { return n_ - (root_vacant_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  // Time of the earliest armed event, kNever when none.
  Time next_time() const;

  // False only if no armed event is due at now(): then a callback that would
  // arm an event for now() may run its work at the end of its own instead, in
  // the same order (every event armed from now on comes after it anyway). May
  // be true for an event moved later (conservative). O(1).
  bool maybe_due_now() const {
    // Past the last entry lies the sentinel, never due.
    if (!root_vacant_) return static_cast<Time>(heap_[0].key >> 64) <= now_;
    return static_cast<Time>(heap_[1].key >> 64) <= now_ || static_cast<Time>(heap_[2].key >> 64) <= now_;
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
  void reserve(std::size_t n) {
    if (n + 1 > heap_.size()) heap_.resize(n + 1, sentinel());
  }

 private:
  struct Entry {
    detail::EventKey key;  // at most event->key_ (equal unless the event was moved later)
    Event* event;
  };
  static constexpr std::size_t kInitialSlots = 64;  // entries + the sentinel
  static Entry sentinel() { return Entry{~detail::EventKey{0}, nullptr}; }

  [[noreturn]] static void bad_time(Time at);

  void schedule_key(Event& event, Time at, std::uint64_t seq) {
    if (event.queue_ != this) [[unlikely]] throw std::logic_error("EventQueue::schedule: event bound to another queue");
    if (at < now_ || at == kNever) [[unlikely]] bad_time(at);
    const detail::EventKey key = detail::EventKey{at} << 64 | seq;
    event.key_ = key;
    if (event.armed()) {
      // Moved later: the entry stays, under a smaller key (see above).
      if (heap_[event.heap_index_].key < key) return;
      settle();
      sift_up(event.heap_index_, Entry{key, &event});
    } else if (root_vacant_) {
      root_vacant_ = false;
      sift_down(0, Entry{key, &event});
    } else {
      if (n_ + 1 == heap_.size()) [[unlikely]] grow();
      sift_up(n_++, Entry{key, &event});  // over a sentinel
    }
  }
  void grow() { heap_.resize(heap_.size() * 2, sentinel()); }

  // Settle the vacant root and re-key early entries until the root is the
  // earliest armed event; nullptr when none is armed.
  const Entry* surface() {
    settle();
    while (n_ > 0) {
      Entry& root = heap_[0];
      if (root.key == root.event->key_) [[likely]] return &root;
      sift_down(0, Entry{root.event->key_, root.event});
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
    event.fn_(event.context_);
  }

  // Place `moving` at slot i or above it (its key is at most the old one's).
  void sift_up(std::size_t i, Entry moving) {
    Entry* const h = heap_.data();
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (h[parent].key < moving.key) break;
      h[i] = h[parent];
      h[i].event->heap_index_ = i;
      i = parent;
    }
    h[i] = moving;
    moving.event->heap_index_ = i;
  }
  // Place `moving` at slot i or below it. Both children of any entry exist
  // (slots past the last entry hold the sentinel, which never wins).
  void sift_down(std::size_t i, Entry moving) {
    Entry* const h = heap_.data();
    const std::size_t n = n_;
    for (std::size_t c; (c = 2 * i + 1) < n; i = c) {
      c += h[c + 1].key < h[c].key;
      if (moving.key < h[c].key) break;
      h[i] = h[c];
      h[i].event->heap_index_ = i;
    }
    h[i] = moving;
    moving.event->heap_index_ = i;
  }
  // Remove the vacant root entry, if any (the event that ran last and armed nothing).
  void settle() {
    if (root_vacant_) {
      root_vacant_ = false;
      remove_root();
    }
  }
  void remove_root() {
    const Entry last = heap_[--n_];
    heap_[n_] = sentinel();
    if (n_ > 0) sift_down(0, last);
  }
  void remove_at(std::size_t i);

  friend class Event;
  // heap_[0, n_) is the heap; heap_[n_, size) hold the sentinel (at least one,
  // so that an entry's second child can be read without a bound check).
  std::vector<Entry> heap_;
  std::size_t n_ = 0;
  Time now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  bool root_vacant_ = false;  // heap_[0] is the entry of the event that ran last (disarmed)
};

inline Event::~Event() {
  if (armed()) queue_->cancel(*this);
}

}  // namespace ufq::sim
