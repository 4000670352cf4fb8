// The simulator's virtual clock and its pending events.
//
// An Event is a callback owned by whoever needs it (a NIC, a traffic source,
// the clock-event device of an HrtimerModel) and bound to one EventQueue.
// Arming, moving and cancelling an event never allocate once the queue has
// grown to the largest number of simultaneously armed events.
//
// Order is total and deterministic: by time, then by the sequence number the
// event got when it was last armed (so events armed for the same instant run
// in the order they were armed). Nothing depends on addresses or on wall-clock
// time, so the same inputs always give the same run. Because no two keys are
// equal, the run order does not depend on how the entries are stored either.
//
// Storage (docs/simulator.md, "Speed"): the simulator keeps about 17 events
// armed, half of each arm's keys landing among the first four, half among
// the last four. So the earliest (up to kNearMax) entries lie in a sorted
// array with room on both sides, where the earliest is taken in O(1) and an
// entry goes in by shifting the nearer end of the array (about two moves, no
// index to update); the rest, all later than every near entry, lie in a
// binary heap (far), which a run with thousands of armed events needs. Each
// trick keeps the order exactly:
//  * the key is one 128-bit number, time above sequence, so a far entry
//    compares in two instructions; a near entry holds only the time and its
//    event (16 bytes, cheaper to shift), the event's filed key breaking ties;
//  * when the near array runs empty, the earliest far entries move into it;
//  * an armed event moved later (a clock-event device reprogrammed for a later
//    timer, several times between firings) keeps its entry where it is, under
//    its old, smaller key (Event::filed_); the event holds its true key. Such
//    an entry only surfaces earlier than its event is due, and is then filed
//    again under its true key, however many moves it had. Every entry's key
//    is at most its event's, so a front entry whose key is true is the
//    earliest event.
//
// A relay (schedule_relay) is an event with two stages, as a device's
// interrupt and its handler a latency later: when its first stage comes due,
// nothing is called and the event is armed again, `delay` later, with the
// sequence number a schedule() made at that instant would take; the second
// stage runs the callback. The order is that of two events, the first arming
// the second (each stage counts as an event run), without the first's call.
// The first stage takes no entry of its own (docs/simulator.md, "Speed"): the
// second is filed at once, under a sequence number not known yet (the
// kSeqUnknown bit, above every known number: it comes after every entry of
// its time so far and before any armed until the first stage is due), and
// the event waits in a short list (relays_) by its first stage's key. When
// the run passes that key (an event after it runs, or a run's limit is
// reached) the relay takes the number its first stage would have taken, and
// an entry that is its key keeps its place. A fresh arm for the same time
// goes in front of an unknown entry (settle_fresh). Two unknown second
// stages of one time would need their first stages compared, so a relay
// whose second stage's time is taken (or with the list full) files its
// first stage as an entry instead, as an event that arms its own callback
// (the explicit form: Event::relay_), as does an event whose owner asks for
// that form (Event::set_explicit_relay). The order is the same either way.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ufq/time.hpp"

namespace ufq::sim {

class EventQueue;

namespace detail {
__extension__ typedef unsigned __int128 EventKey;  // time << 64 | sequence
// The sequence bit of a relay's second stage whose first has not come due.
inline constexpr std::uint64_t kSeqUnknown = std::uint64_t{1} << 63;
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
  bool armed() const { return filed_ != kNotFiled; }
  // Armed for the first stage of a relay (EventQueue::schedule_relay with a
  // delay above 0), which has not come due yet.
  bool relay_pending() const { return armed() && (relay_ != 0 || seq_unknown()); }

  // The time of the event's next stage: when its callback runs, or while a
  // relay is pending, its first stage's. Precondition: armed().
  Time when() const { return seq_unknown() ? first_at_ : static_cast<Time>(key_ >> 64); }

  // Replace the callback. Allowed at any time except from inside the callback
  // being replaced.
  void set_callback(Callback callback) {
    callback_ = std::move(callback);
    fn_ = &call_callback;
    context_ = this;
  }

  EventQueue& queue() const { return *queue_; }
  // Whether this event's relays always take the explicit form (their first
  // stage as an entry of its own, see the top of this file) instead of the
  // relay list: the same order either way, so only the cost differs. For a
  // relay that is moved often (the hrtimer's clock-event device, reprogrammed
  // between firings), whose every move would take it out of the list and
  // place it again (docs/simulator.md, "Speed"). Off by default.
  void set_explicit_relay(bool on) { explicit_relay_ = on; }

 private:
  friend class EventQueue;
  // No key has it: the time kNever cannot be armed.
  static constexpr detail::EventKey kNotFiled = ~detail::EventKey{0};
  static void call_callback(void* self) { static_cast<Event*>(self)->callback_(); }
  // A relay's second stage armed, its first stage not due yet (in the
  // queue's relays_; only then does key_ carry the bit).
  bool seq_unknown() const { return (static_cast<std::uint64_t>(key_) & detail::kSeqUnknown) != 0; }

  detail::EventKey key_ = 0;          // while armed: its true key
  detail::EventKey filed_ = kNotFiled;  // its entry's key (<= key_), kNotFiled when not armed
  Time relay_ = 0;  // while armed for an explicit relay's first stage: the delay to its second, else 0
  Time first_at_ = 0;  // while seq_unknown(): the first stage's time
  bool explicit_relay_ = false;  // set_explicit_relay()
  bool stale_unknown_ = false;  // its entry is under an unknown number and not its key (EventQueue::leave_stale)
  EventQueue* queue_;
  std::size_t heap_index_ = 0;  // its entry's position in EventQueue::far_, while there
  Fn fn_;
  void* context_;
  Callback callback_;  // the std::function form's callback (fn_ calls it)
};

class EventQueue {
 public:
  // Virtual time starts at `start`.
  explicit EventQueue(Time start = 0);
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
  // queue (also std::logic_error). No allocation once the queue has reached
  // its high-water mark.
  void schedule(Event& event, Time at) { schedule_key<true>(event, at, next_seq_++, 0); }

  // Arm (or move) `event` as a relay (see above): at `at` its first stage
  // comes due and arms the second for `at + delay` as schedule() would there
  // and then; the callback runs at the second. While the first is armed,
  // relay_pending() is true; the event may be moved or cancelled as any
  // other. A delay of 0 is schedule(event, at). Preconditions: those of
  // schedule(), and at + delay < kNever (std::logic_error).
  void schedule_relay(Event& event, Time at, Time delay) {
    if (delay >= kNever - at) [[unlikely]] bad_relay();
    relay_key<true>(event, at, delay, next_seq_++);
  }

  // Take the sequence number schedule() would give next, for an arm decided
  // now but made later with schedule_reserved(): the event then runs where it
  // would have had it been armed now (a clock-event device written several
  // times in one interrupt is armed once, at the interrupt's end).
  std::uint64_t reserve_seq() { return next_seq_++; }
  // schedule(event, at) with the sequence number `seq` from reserve_seq()
  // (not used for another arm). Same preconditions as schedule().
  void schedule_reserved(Event& event, Time at, std::uint64_t seq) { schedule_key<false>(event, at, seq, 0); }
  // schedule_relay() with a sequence number from reserve_seq().
  void schedule_relay_reserved(Event& event, Time at, Time delay, std::uint64_t seq) {
    if (delay >= kNever - at) [[unlikely]] bad_relay();
    // No arm since the reservation: `seq` is the newest, as a fresh arm's.
    if (seq + 1 == next_seq_)
      relay_key<true>(event, at, delay, seq);
    else
      relay_key<false>(event, at, delay, seq);
  }

  // Disarm `event`. Returns whether it was armed (false, doing nothing, for an
  // event bound to another queue). Never allocates.
  bool cancel(Event& event);

  // Number of armed events.
  std::size_t size() const { return hi_ - lo_ + n_far_; }
  bool empty() const { return size() == 0; }

  // Time of the earliest armed event, kNever when none.
  Time next_time() const;

  // False only if no armed event is due at now(): then a callback that would
  // arm an event for now() may run its work at the end of its own instead, in
  // the same order (every event armed from now on comes after it anyway). May
  // be true for an event moved later (conservative). O(1).
  bool maybe_due_now() const {
    // run_before(t, ...) runs at t: an event outside this queue may be due.
    if (now_ == stop_at_) [[unlikely]] return true;
    if (relay_at_ <= now_) return true;  // a relay's first stage
    // The earliest entry's key is at most every armed event's.
    if (lo_ != hi_) [[likely]] return near_[lo_].at <= now_;
    return n_far_ && time_of(far_[0].key) <= now_;
  }

  // Run the earliest event: advance now() to its time, disarm it, call its
  // callback (the relays' first stages due before it come due on the way:
  // each arms its second stage). Returns false (doing nothing) when no event
  // is armed.
  bool run_next() { return run_first(kNever); }

  // Run every event due at or before `limit`, including those that callbacks
  // arm within the limit, then advance now() to `limit`. Returns how many ran.
  // Precondition: now() <= limit < kNever (throws std::logic_error).
  std::uint64_t run_until(Time limit) {
    if (limit < now_ || limit == kNever) throw std::logic_error("EventQueue::run_until: bad limit");
    const std::uint64_t before = events_run_;
    while (run_first(limit)) {
    }
    if (relay_at_ <= limit) pass_relays(limit, ~std::uint64_t{0});
    now_ = limit;
    return events_run_ - before;
  }

  // Run every event whose key is below (t, seq): those due before `t`, and
  // those due at `t` armed with a sequence number below `seq` (next_seq() read
  // earlier), including those that callbacks arm below it. now() is left at
  // the last event's time. While it runs, maybe_due_now() is true at `t`: an
  // event of another queue is due there, after the ones that run here (a queue
  // run in stretches beside others: docs/simulator.md, "Queues apart").
  // Returns how many ran. Precondition: now() <= t < kNever (throws
  // std::logic_error).
  std::uint64_t run_before(Time t, std::uint64_t seq) {
    if (t < now_ || t == kNever) throw std::logic_error("EventQueue::run_before: bad limit");
    stop_at_ = t;
    const std::uint64_t before = events_run_;
    while (run_first<true>(t, seq)) {
    }
    if (relay_at_ <= t) now_ = std::max(now_, pass_relays(t, seq));  // as if the last had run
    stop_at_ = kNever;
    return events_run_ - before;
  }

  // The sequence number the next arm takes: every event armed before this
  // call has a lower one (run_before()).
  std::uint64_t next_seq() const { return next_seq_; }

  // Run events until none is armed. Returns how many ran. Does not return if
  // callbacks keep re-arming events forever.
  std::uint64_t run();

  // Events run since construction.
  std::uint64_t events_run() const { return events_run_; }

  // Pre-size the queue for `n` simultaneously armed events.
  void reserve(std::size_t n) {
    if (n + 1 > far_.size()) far_.resize(n + 1, sentinel());
  }

 private:
  // A far heap entry.
  struct Entry {
    detail::EventKey key;  // the event's filed_
    Event* event;
  };
  // A near entry: 16 bytes, not 32 (a 128-bit key aligns Entry to 16), so a
  // shift moves half as much. Its key is its event's filed_; ties in time,
  // rare, are broken by reading it there.
  struct Near {
    Time at;  // time_of(event->filed_)
    Event* event;
  };
  // The near array: at most kNearMax entries, in kNearSlots slots so that
  // entries can go in at either end; recentred when an end is reached.
  static constexpr std::uint32_t kNearMax = 32;
  static constexpr std::uint32_t kNearSlots = 256;
  static constexpr std::size_t kInitialFarSlots = 64;  // entries + the sentinel
  static Entry sentinel() { return Entry{~detail::EventKey{0}, nullptr}; }

  [[noreturn]] static void bad_time(Time at);
  [[noreturn]] static void bad_relay();
  [[noreturn]] static void bad_queue();  // out of line: no exception set-up in the callers

  // kFresh: `seq` is the newest sequence number (schedule()), so the entry
  // comes after every entry of its time and comparing times is enough.
  template <bool kFresh>
  void schedule_key(Event& event, Time at, std::uint64_t seq, Time relay) {
    if (event.queue_ != this) [[unlikely]] bad_queue();
    if (at < now_ || at == kNever) [[unlikely]] bad_time(at);
    if (event.seq_unknown()) [[unlikely]] forget_relay(event);
    const detail::EventKey key = detail::EventKey{at} << 64 | seq;
    event.key_ = key;
    event.relay_ = relay;
    // Armed and moved later (or to the same time): the entry stays, under a
    // smaller key (see above). Not armed: filed_ is above every key.
    if (event.filed_ < key) {
      leave_stale(event);
      return;
    }
    if (event.filed_ != Event::kNotFiled) unfile(event);  // moved earlier
    event.filed_ = key;
    file<kFresh>(key, &event);
  }

  // A relay with `seq` (kFresh: the newest): its second stage filed under an
  // unknown sequence number, or the explicit form when another relay's second
  // stage waits for the same time (see above). Preconditions: those of
  // schedule_relay().
  template <bool kFresh>
  void relay_key(Event& event, Time at, Time delay, std::uint64_t seq) {
    if (event.queue_ != this) [[unlikely]] bad_queue();
    if (at < now_) [[unlikely]] bad_time(at);
    if (event.seq_unknown()) forget_relay(event);
    const std::uint32_t place = delay == 0 || event.explicit_relay_ ? kNoPlace : relay_place(at, seq, at + delay);
    if (place == kNoPlace) [[unlikely]]
      return schedule_key<kFresh>(event, at, seq, delay);
    const detail::EventKey key = arm_second(event, at, delay, seq);
    // Moved later: the entry stays (see above).
    if (event.filed_ > key) {
      if (event.filed_ != Event::kNotFiled) unfile(event);
      event.filed_ = key;
      // After every entry of its time: no other one is its event's key under
      // an unknown number, and an early one has an older number.
      file<true>(key, &event);
    } else {
      leave_stale(event);
    }
    note_relay(event, place);
  }
  // relay_key() for an event that is not armed (`fresh`: seq is the newest).
  [[gnu::always_inline]] void unarmed_relay_key(Event& event, Time at, Time delay, std::uint64_t seq, bool fresh) {
    const std::uint32_t place = delay == 0 || event.explicit_relay_ ? kNoPlace : relay_place(at, seq, at + delay);
    if (place != kNoPlace) [[likely]] {
      const detail::EventKey key = arm_second(event, at, delay, seq);
      event.filed_ = key;
      file<true>(key, &event);
      note_relay(event, place);
      return;
    }
    const detail::EventKey key = detail::EventKey{at} << 64 | seq;
    event.key_ = key;
    event.filed_ = key;
    event.relay_ = delay;
    if (fresh)
      file<true>(key, &event);
    else
      file<false>(key, &event);
  }
  // The key of a relay's second stage under an unknown number, made the
  // event's (its first stage at `at`); returned for filing.
  detail::EventKey arm_second(Event& event, Time at, Time delay, std::uint64_t seq) {
    const detail::EventKey key = detail::EventKey{at + delay} << 64 | (detail::kSeqUnknown | seq);
    event.key_ = key;
    event.relay_ = 0;
    event.first_at_ = at;
    return key;
  }
  // Some entry may be under an unknown number: a fresh arm then settles in
  // front of one of its time (settle_fresh).
  bool maybe_unknown() const { return relay_at_ != kNever || n_stale_unknown_ != 0; }
  // Where in relays_ a relay whose first stage is (t1, seq) goes, or kNoPlace
  // when relays_ is full or another relay's second stage waits for `t2`.
  static constexpr std::uint32_t kNoPlace = ~std::uint32_t{0};
  std::uint32_t relay_place(Time t1, std::uint64_t seq, Time t2) const {
    static_assert(kRelaysMax == 2, "relay_place(), note_relay() and forget_relay() are written for two");
    if (n_relays_ == 0) return 0;
    if (n_relays_ == kRelaysMax) [[unlikely]] return kNoPlace;
    const Event& r = *relays_[0];
    if (time_of(r.key_) == t2) [[unlikely]] return kNoPlace;
    // r's first stage comes first: `e` goes below it.
    return r.first_at_ < t1 || (r.first_at_ == t1 && relay_seq(r) < seq) ? 0 : 1;
  }
  static std::uint64_t relay_seq(const Event& e) { return static_cast<std::uint64_t>(e.key_) & ~detail::kSeqUnknown; }
  // Add `e` (seq_unknown(), not listed) to relays_ at `place` (relay_place()).
  // Two stores, no loop: at place 0 the one listed (if any) moves up; at
  // place 1 the second store overwrites the first.
  void note_relay(Event& e, std::uint32_t place) {
    relays_[1] = relays_[0];
    relays_[place] = &e;
    ++n_relays_;
    relay_at_ = std::min(relay_at_, e.first_at_);  // the earliest first stage
  }
  // Take `e` out of relays_ (its arm is replaced or cancelled): the one above
  // it, if any, moves down.
  void forget_relay(Event& e) {
    if (relays_[0] == &e) relays_[0] = relays_[1];  // listed: seq_unknown()
    --n_relays_;
    relay_at_ = n_relays_ ? relays_[n_relays_ - 1]->first_at_ : kNever;
    e.key_ &= ~detail::EventKey{detail::kSeqUnknown};
  }
  // `e`'s entry stays where it is, no longer its event's key (moved later):
  // one under an unknown number is counted (pass_relays).
  void leave_stale(Event& e) {
    if ((static_cast<std::uint64_t>(e.filed_) & detail::kSeqUnknown) && !e.stale_unknown_) {
      e.stale_unknown_ = true;
      ++n_stale_unknown_;
    }
  }
  // `e`'s entry is taken out.
  void entry_gone(Event& e) {
    if (e.stale_unknown_) [[unlikely]] {
      e.stale_unknown_ = false;
      --n_stale_unknown_;
    }
  }
  // Every relay whose first stage's key is below (at, seq) comes due, in
  // first-stage order: it takes the sequence number its first stage would
  // have (an event run), and its entry keeps its place, since that number is
  // above every one known and below any to come, as the unknown one it
  // replaces was, and no other entry of its time is unknown (a stale one may
  // be: then it is filed again). Returns the last one's first stage's time
  // (0: none came due).
  Time pass_relays(Time at, std::uint64_t seq) { return at >= relay_at_ ? pass_due(at, seq) : 0; }
  // pass_relays() once `at` >= relay_at_ (inline in run_first()): the
  // earliest relay is due unless it ties at `at` with the higher number.
  [[gnu::always_inline]] Time pass_due(Time at, std::uint64_t seq) {
    Time last = 0;
    do {
      Event& e = *relays_[n_relays_ - 1];
      if (relay_at_ == at && relay_seq(e) >= seq) [[unlikely]] break;
      --n_relays_;
      ++events_run_;
      last = relay_at_;
      pass_one(e);
      relay_at_ = n_relays_ ? relays_[n_relays_ - 1]->first_at_ : kNever;
    } while (at >= relay_at_);
    return last;
  }
  // A relay whose first stage has come due (out of relays_): its number.
  // Its entry stays in place unless filed under an earlier arm's key, or
  // another entry under an unknown number is left early (maybe at this time,
  // before this one: the smaller key would go behind it).
  void pass_one(Event& e) {
    const std::uint64_t unknown = static_cast<std::uint64_t>(e.key_);
    const detail::EventKey key = (e.key_ >> 64 << 64) | next_seq_++;
    e.key_ = key;
    if (static_cast<std::uint64_t>(e.filed_) == unknown && n_stale_unknown_ == 0) [[likely]] {
      if (n_far_ != 0 && !in_near(e)) [[unlikely]] far_[e.heap_index_].key = key;
      e.filed_ = key;
    } else {
      refile_early(e);
    }
  }
  // An armed event's entry is in the near array (unfile()).
  bool in_near(const Event& e) const { return lo_ != hi_ && e.filed_ <= near_[hi_ - 1].event->filed_; }
  void refile_early(Event& e);  // unfile and file under its true key

  static Time time_of(detail::EventKey key) { return static_cast<Time>(key >> 64); }
  // Whether an entry keyed `k` comes before the far entry keyed `f` (see kFresh).
  template <bool kFresh>
  static bool before(detail::EventKey k, detail::EventKey f) {
    if constexpr (kFresh) return time_of(k) < time_of(f);
    return k < f;
  }
  // ... before the near entry `n`.
  template <bool kFresh>
  static bool before(detail::EventKey k, const Near& n) {
    if constexpr (kFresh) return time_of(k) < n.at;
    return time_of(k) != n.at ? time_of(k) < n.at : k < n.event->filed_;
  }

  // Run the earliest callback if it is due at or before `limit` (the relays'
  // first stages before it on the way); false otherwise
  // or when none is armed. An entry of an event moved later is filed again
  // first: its key is not the event's, which shows in the sequence number
  // alone (every arm takes its own, so equal numbers mean the same arm).
  // kBefore: run_before()'s, which also stops at an entry of time `limit`
  // whose sequence number is `seq` or more.
  template <bool kBefore = false>
  bool run_first(Time limit, [[maybe_unused]] std::uint64_t seq = 0) {
    for (;;) {
      if (lo_ == hi_) [[unlikely]] {
        if (n_far_ == 0) return false;
        refill();
      }
      const Near* const f = &near_[lo_];
      const Time at = f->at;
      if (at > limit) return false;
      Event& event = *f->event;
      if constexpr (kBefore)
        if (at == limit && static_cast<std::uint64_t>(event.filed_) >= seq) return false;
      if (static_cast<std::uint64_t>(event.filed_) != static_cast<std::uint64_t>(event.key_)) [[unlikely]] {
        ++lo_;
        entry_gone(event);
        event.filed_ = event.key_;
        file<false>(event.key_, &event);
        continue;
      }
      // The relays whose first stage comes before this event (the front
      // entry stays the front: the others keep their places or go later).
      if (at >= relay_at_) pass_due(at, static_cast<std::uint64_t>(event.filed_));
      assert(near_[lo_].event == &event);
      ++lo_;
      now_ = at;
      ++events_run_;
      if (event.relay_ != 0) [[unlikely]] {
        // An explicit relay's first stage: arm the second as schedule(event,
        // now_ + relay_) would here (a fresh arm: the entry was just taken out).
        const detail::EventKey key = detail::EventKey{now_ + event.relay_} << 64 | next_seq_++;
        event.relay_ = 0;
        event.key_ = key;
        event.filed_ = key;
        refile_front(key, &event);
        continue;  // no callback ran
      }
      event.filed_ = Event::kNotFiled;
      event.fn_(event.context_);
      return true;
    }
  }
  // The near array is empty: move the earliest far entries into it, so that
  // the entries armed next go to the near array again.
  void refill();

  // Add `e` (its event not filed elsewhere): to the near array when it comes
  // before every far entry, else (or when it would be the near array's
  // latest with the array full) to the far heap; a full near array hands its
  // latest entry to the far heap.
  template <bool kFresh>
  void file(detail::EventKey key, Event* event) {
    if (n_far_ != 0 && !before<kFresh>(key, far_[0].key)) [[unlikely]] {
      far_push(key, event);
      return;
    }
    if (hi_ - lo_ == kNearMax) [[unlikely]] {
      if (!before<false>(key, near_[hi_ - 1])) {  // exact: the last may be unknown
        far_push(key, event);
        return;
      }
      --hi_, far_push(near_[hi_].event->filed_, near_[hi_].event);
    }
    near_insert<kFresh>(key, event);
  }

  // file<true>(e) just after the front entry was taken out (its slot,
  // near_[lo_ - 1], is free, and the near array has room): the entries due
  // up to e's time move one slot towards the front, scanned from the front,
  // since e (a relay's second stage) is due soon.
  void refile_front(detail::EventKey key, Event* event) {
    if (n_far_ != 0 && !before<true>(key, far_[0].key)) [[unlikely]] {
      far_push(key, event);
      return;
    }
    Near* p = near_.get() + lo_ - 1;
    Near* const end = near_.get() + hi_;
    --lo_;
    if (p + 1 != end && before<true>(key, end[-1])) {
      // The last entry bounds the scan: no end test per entry.
      for (; !before<true>(key, p[1]); ++p) p[0] = p[1];
    } else {
      for (; p + 1 != end; ++p) p[0] = p[1];  // e goes last
    }
    *p = Near{time_of(key), event};
    if (maybe_unknown()) [[unlikely]] settle_fresh(p);
  }
  // A fresh arm at `p`, placed after every entry of its time: in front of an
  // unknown one there (a relay's second stage whose first is not due yet).
  void settle_fresh(Near* p) {
    while (p != near_.get() + lo_ && p[-1].at == p->at &&
           (static_cast<std::uint64_t>(p[-1].event->filed_) & detail::kSeqUnknown) &&
           !(static_cast<std::uint64_t>(p->event->filed_) & detail::kSeqUnknown)) {
      std::swap(p[-1], p[0]);
      --p;
    }
  }

  // Insert into the near array (not full), shifting its nearer half.
  template <bool kFresh>
  void near_insert(detail::EventKey key, Event* event) {
    Near* const a = near_.get();
    std::uint32_t lo = lo_, hi = hi_;
    const Near e{time_of(key), event};
    if (lo == hi) {
      lo_ = kNearSlots / 2;
      hi_ = lo_ + 1;
      a[lo_] = e;
      return;
    }
    // The middle entry bounds both loops (keys are unique).
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (before<kFresh>(key, a[mid])) {
      if (lo == 0) [[unlikely]] recenter(), lo = lo_;  // the same entries: the same side
      Near* p = a + lo - 1;
      lo_ = lo - 1;
      for (; !before<kFresh>(key, p[1]); ++p) p[0] = p[1];
      *p = e;
      if (kFresh && maybe_unknown()) [[unlikely]] settle_fresh(p);
    } else {
      if (hi == kNearSlots) [[unlikely]] recenter(), hi = hi_;
      Near* p = a + hi;
      hi_ = hi + 1;
      for (; before<kFresh>(key, p[-1]); --p) p[0] = p[-1];
      *p = e;
      if (kFresh && maybe_unknown()) [[unlikely]] settle_fresh(p);
    }
  }
  void recenter();
  void unfile(Event& event);  // remove its entry (near or far)

  // Out of line (rare), with the entry in registers (no copy to the stack
  // on the callers' usual paths).
  [[gnu::noinline]] void far_push(detail::EventKey key, Event* event) {
    if (n_far_ + 1 == far_.size()) [[unlikely]] far_.resize(far_.size() * 2, sentinel());
    sift_up(n_far_++, Entry{key, event});  // over a sentinel
  }
  // Place `moving` at slot i of the far heap or above it (its key is at most the old one's).
  void sift_up(std::size_t i, Entry moving) {
    Entry* const h = far_.data();
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
    Entry* const h = far_.data();
    const std::size_t n = n_far_;
    for (std::size_t c; (c = 2 * i + 1) < n; i = c) {
      c += h[c + 1].key < h[c].key;
      if (moving.key < h[c].key) break;
      h[i] = h[c];
      h[i].event->heap_index_ = i;
    }
    h[i] = moving;
    moving.event->heap_index_ = i;
  }
  void remove_far_root() { remove_far_at(0); }
  void remove_far_at(std::size_t i);

  friend class Event;
  // near_[lo_, hi_) holds the near entries in key order; far_[0, n_far_) is
  // the far heap, far_[n_far_, size) hold the sentinel (at least one, so that
  // an entry's second child can be read without a bound check). Every near
  // key is below every far key.
  std::unique_ptr<Near[]> near_;
  std::uint32_t lo_ = kNearSlots / 2, hi_ = kNearSlots / 2;
  std::vector<Entry> far_;
  std::size_t n_far_ = 0;
  Time now_;
  std::uint64_t next_seq_ = 0;
  Time stop_at_ = kNever;  // run_before()'s t while it runs
  // Not beside next_seq_: GCC would add to both with one 16-byte load and
  // store, and a 16-byte load of two fields just written one by one waits
  // for both stores (docs/simulator.md, "Speed").
  std::uint64_t events_run_ = 0;
  // The relays whose second stage is filed and whose first has not come due:
  // up to kRelaysMax (a device's interrupt each: the simulator's CPU lists
  // its NIC's, its hrtimer device asking for the explicit form; more take
  // the explicit form too), the earliest first stage last; relay_at_ is its
  // time (kNever when none).
  static constexpr std::uint32_t kRelaysMax = 2;
  Event* relays_[kRelaysMax] = {};
  std::uint32_t n_relays_ = 0;
  std::uint32_t n_stale_unknown_ = 0;  // entries under an unknown number that are not their events' keys
  Time relay_at_ = kNever;

 public:
  // schedule(event, at) for an event its owner knows is not armed (the NIC's
  // interrupt and handler, docs/simulator.md "Speed"): the same key and the
  // same place, without the tests for a move. Preconditions: !event.armed(),
  // `event` bound to this queue, now() <= at < kNever (checked in debug
  // builds only: the caller computes `at` from now()).
  void schedule_unarmed(Event& event, Time at) {
    assert(!event.armed() && event.queue_ == this && at >= now_ && at != kNever);
    const detail::EventKey key = detail::EventKey{at} << 64 | next_seq_++;
    event.key_ = key;
    event.filed_ = key;
    file<true>(key, &event);
  }
  // schedule_relay() for an event its owner knows is not armed (the NIC's
  // interrupt, relayed to its handler): the same key and place, without the
  // tests for a move. Preconditions: those of schedule_unarmed(), and at +
  // delay < kNever (checked in debug builds only).
  void schedule_unarmed_relay(Event& event, Time at, Time delay) {
    assert(!event.armed() && event.queue_ == this && at >= now_ && at != kNever && delay < kNever - at);
    unarmed_relay_key(event, at, delay, next_seq_++, true);
  }
  // schedule_relay_reserved() for an event its owner knows is not armed (the
  // hrtimer's device, armed at its handler's end): the same key and place,
  // without the tests for a move. Preconditions: those of
  // schedule_unarmed(), at + delay < kNever (std::logic_error), and `seq`
  // from reserve_seq() (not used for another arm).
  void schedule_relay_reserved_unarmed(Event& event, Time at, Time delay, std::uint64_t seq) {
    assert(!event.armed() && event.queue_ == this && at >= now_ && at != kNever);
    if (delay >= kNever - at) [[unlikely]] bad_relay();
    // No arm since the reservation: `seq` is the newest, as a fresh arm's.
    unarmed_relay_key(event, at, delay, seq, seq + 1 == next_seq_);
  }
};

inline Event::~Event() {
  if (armed()) queue_->cancel(*this);
}

}  // namespace ufq::sim
