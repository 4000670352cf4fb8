// A model of Linux high-resolution timers on one CPU, in virtual time.
//
// What is modelled (docs/fq-rules.md#hrtimer-expiry, edge case E22):
//  * A timer has a soft expiry (the earliest time it may run) and a hard expiry
//    (soft + slack, the latest). Queued timers are ordered by hard expiry; equal
//    hard expiries keep the order in which the timers were (re)started.
//  * One clock-event device, represented by one Event in the EventQueue, is
//    programmed for the earliest hard expiry. Outside the interrupt handler:
//    starting a timer writes the device only when its hard expiry is earlier
//    than the programmed one; cancelling or restarting the timer the device was
//    programmed for re-evaluates the earliest hard expiry and writes the device
//    if that changed (so the event can move later, or the device is stopped).
//  * When the device fires, the interrupt handler runs `entry_latency` later.
//    It reads `now` once, then repeatedly takes the queued timer with the
//    earliest hard expiry and runs it if its soft expiry <= now; it stops at the
//    first timer whose soft expiry is in the future, even if timers behind it
//    are soft-expired. Timers that callbacks start while the handler runs are
//    queued at once (one due before the blocking timer is run in the same
//    walk), but the device is written only once, at the end of the handler,
//    for the earliest remaining hard expiry (or stopped when none remains).
//  * Only this clock-event interrupt runs timers. Other simulated events (a NIC
//    completion, a packet arrival) never do, even inside a timer's slack window.
//
// Not modelled: several clock bases, remote CPUs, low-resolution (tick) mode,
// the handler's retry/hang logic (callbacks take no virtual time here, so the
// next event is always in the future), device minimum deltas. A periodic tick
// can be modelled as an ordinary Hrtimer that restarts itself.
//
// Costs do not consume virtual time; they turn the counters into CPU time for
// a cost model (stats() + overhead()).
#pragma once

#include <cstddef>
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <functional>

#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hook.hpp"
#include "ufq/time.hpp"

namespace ufq::sim {

class HrtimerModel;

namespace detail {
// A link of HrtimerModel's timer list: circular, through the model's own
// link (the list's ends), so that unlinking needs no test. A CPU queues a
// handful of timers; a plain two-pointer list pays none of a checked
// intrusive hook's tests.
struct TimerLink {
  TimerLink* prev = nullptr;
  TimerLink* next = nullptr;  // nullptr while not queued (a timer's link)
};
}  // namespace detail

// One timer, owned by its user and bound to one HrtimerModel (one CPU). Not
// copyable or movable; destroying a queued timer cancels it.
class Hrtimer : private detail::TimerLink {
 public:
  // A lambda, or (function, context) for the cheaper direct call.
  using Callback = Hook<>;

  // `cpu` must outlive the timer, or be destroyed first (which dequeues it).
  Hrtimer(HrtimerModel& cpu, Callback callback);
  ~Hrtimer();
  Hrtimer(const Hrtimer&) = delete;
  Hrtimer& operator=(const Hrtimer&) = delete;

  // True from start() until the timer runs or is cancelled. While its
  // callback runs the timer is not queued, so the callback may restart it.
  bool queued() const { return next != nullptr; }
  // Expiries of the last start(); meaningful while queued().
  Time soft_expiry() const { return soft_; }
  Time hard_expiry() const { return hard_; }

  HrtimerModel& cpu() const { return *cpu_; }

 private:
  friend class HrtimerModel;
  HrtimerModel* cpu_;
  Callback callback_;
  Time soft_ = 0;
  Time hard_ = 0;
  std::uint64_t seq_ = 0;  // (re)start order: breaks ties between equal hard expiries
};

struct HrtimerConfig {
  // From the device firing to the handler reading `now` (delivery + entry).
  Time entry_latency = 0;
  // CPU cost of taking one clock-event interrupt, for the cost model.
  Time interrupt_cost = 0;
  // CPU cost of one write to the clock-event device (program or stop).
  Time reprogram_cost = 0;
};

struct HrtimerStats {
  std::uint64_t interrupts = 0;    // clock-event interrupts handled
  std::uint64_t timers_run = 0;    // callbacks run by those interrupts
  std::uint64_t reprograms = 0;    // device writes with a finite expiry
  std::uint64_t device_stops = 0;  // device writes that stop it (no timer left)
};

class HrtimerModel {
 public:
  // The device's event lives in `queue`, which must outlive the model.
  explicit HrtimerModel(EventQueue& queue, HrtimerConfig config = {});
  // Dequeues every timer still queued (without running it).
  ~HrtimerModel();
  HrtimerModel(const HrtimerModel&) = delete;
  HrtimerModel& operator=(const HrtimerModel&) = delete;

  // Queue `timer` (bound to this model) to run in [soft, hard]; a queued timer
  // is moved. Expiries may lie in the past (the device then fires at once).
  // Writes the device as described above, except from inside the handler.
  // Preconditions: soft <= hard, `timer` bound to this model (both throw
  // std::logic_error). Never allocates.
  void start(Hrtimer& timer, Time soft, Time hard);

  // start() for a caller that knows `timer` is bound to this model and soft
  // <= hard (WatchdogHrtimer: its timer is bound by construction, and the
  // Watchdog's hard expiry is soft + delta, saturating). Preconditions:
  // those of start(), checked in debug builds only.
  void start_bound(Hrtimer& timer, Time soft, Time hard);

  // start(timer, soft, soft + slack), the addition saturating at kNever.
  void start_range(Hrtimer& timer, Time soft, Time slack);

  // Dequeue `timer` without running it. Returns whether it was queued (false,
  // doing nothing, for a timer bound to another model). Re-evaluates the
  // device if the device was programmed for this timer. Never allocates.
  bool cancel(Hrtimer& timer);

  // Called at the end of every interrupt handler, once the device is written:
  // where the kernel runs the softirqs the interrupt raised (irq_exit).
  void set_irq_exit(sim::Hook<> fn) { irq_exit_ = std::move(fn); }

  // The expiry the device was last programmed for (the kernel's
  // expires_next): the earliest hard expiry outside the handler, kNever while
  // the device is stopped and while the handler runs.
  Time programmed() const { return expires_next_; }

  // The device has fired and the handler has not run yet (entry_latency > 0).
  bool interrupt_pending() const { return config_.entry_latency != 0 && event_.armed() && !event_.relay_pending(); }
  // A timer callback is running (called from inside the handler).
  bool in_interrupt() const { return in_irq_; }

  std::size_t queued_count() const { return count_; }
  // Earliest queued hard expiry, kNever when none. Inline: read at every
  // interrupt's end and every re-evaluation.
  Time earliest_hard_expiry() const { return empty() ? kNever : front().hard_; }

  const HrtimerStats& stats() const { return stats_; }
  const HrtimerConfig& config() const { return config_; }
  // CPU time the counters stand for under the configured costs.
  Time overhead() const;

  EventQueue& queue() const { return *queue_; }

 private:
  struct ByHardExpiry {
    bool operator()(const Hrtimer& a, const Hrtimer& b) const {
      return a.hard_ != b.hard_ ? a.hard_ < b.hard_ : a.seq_ < b.seq_;
    }
  };
  // A CPU queues a handful of timers (the simulation: fq's watchdog and the
  // tick), so a list kept in order, searched from its end (a restarted timer
  // usually expires after the others), is cheaper than a balanced tree.
  static Hrtimer& timer_of(detail::TimerLink* link) { return *static_cast<Hrtimer*>(link); }
  bool empty() const { return ends_.next == &ends_; }
  Hrtimer& front() const { return timer_of(ends_.next); }
  void enqueue(Hrtimer& timer);  // in ByHardExpiry order
  void unlink(Hrtimer& timer) {
    timer.prev->next = timer.next;
    timer.next->prev = timer.prev;
    timer.next = nullptr;
    --count_;
  }
  // start()'s precondition failures (std::logic_error), out of line.
  [[noreturn]] void bad_start(const Hrtimer& timer) const;

  void handle_interrupt();
  void force_reprogram();   // re-evaluate the earliest hard expiry, write if changed
  // One device write. Always inline: left to GCC it went out of line into a
  // call per start (about 2 M instructions more in the simulator's run).
  [[gnu::always_inline]] void program(Time expiry);

  EventQueue* queue_;
  HrtimerConfig config_;
  // The timer list's ends: ends_.next is the earliest, ends_.prev the latest.
  detail::TimerLink ends_{&ends_, &ends_};
  std::size_t count_ = 0;
  // The clock-event device's next firing and the handler entry_latency
  // later, as one relay (EventQueue::schedule_relay): its first stage is the
  // device, which only arms the second, the handler, as an event of its own
  // would (the same sequence number, so the same order), without the call.
  // With entry_latency 0 it is the device's event, which runs the handler.
  Event event_;
  Time expires_next_ = kNever;
  const Hrtimer* next_timer_ = nullptr;  // the timer expires_next_ was taken from
  std::uint64_t next_seq_ = 0;
  bool in_irq_ = false;
  // While the handler's irq_exit runs, device writes only record the last
  // one (program); it is made on the queue once irq_exit returns.
  bool defer_writes_ = false;
  bool deferred_arm_ = false;
  Time deferred_at_ = 0;
  std::uint64_t deferred_seq_ = 0;
  HrtimerStats stats_;
  sim::Hook<> irq_exit_;
};

// Inline: the simulator starts a timer after most qdisc runs.
inline void HrtimerModel::start(Hrtimer& timer, Time soft, Time hard) {
  if (timer.cpu_ != this || soft > hard) [[unlikely]] bad_start(timer);
  start_bound(timer, soft, hard);
}

inline void HrtimerModel::start_bound(Hrtimer& timer, Time soft, Time hard) {
  assert(timer.cpu_ == this && soft <= hard);
  const std::uint64_t seq = next_seq_++;
  if (timer.queued()) {
    // Its new key (hard, seq), seq the newest, still lies between its
    // neighbours' (after the one before it when hard >= that one's, before
    // the one after it when hard < that one's): the erase and insert would
    // put it back where it is, so it stays (the watchdog's restarts,
    // usually later, with the tick queued further on).
    if ((timer.prev == &ends_ || timer_of(timer.prev).hard_ <= hard) &&
        (timer.next == &ends_ || hard < timer_of(timer.next).hard_)) {
      timer.soft_ = soft;
      timer.hard_ = hard;
      timer.seq_ = seq;
      if (in_irq_) return;  // the handler programs the device when it finishes
      // The device's timer is still the earliest: the re-evaluation would
      // take its own new hard expiry. Any other stays behind the earliest.
      if (&timer == next_timer_ && hard != expires_next_) program(hard);
      return;
    }
    // Restarting the timer the device is programmed for: dequeue it quietly
    // and re-evaluate once it is queued again, rather than writing the
    // device twice.
    const bool was_next = &timer == next_timer_;
    unlink(timer);
    timer.soft_ = soft;
    timer.hard_ = hard;
    timer.seq_ = seq;
    enqueue(timer);
    if (in_irq_) return;
    if (was_next) {
      force_reprogram();
      return;
    }
  } else {
    timer.soft_ = soft;
    timer.hard_ = hard;
    timer.seq_ = seq;
    enqueue(timer);
    if (in_irq_) return;
  }
  if (hard < expires_next_) {
    next_timer_ = &timer;
    program(hard);
  }
}

inline void HrtimerModel::enqueue(Hrtimer& timer) {
  detail::TimerLink* after = ends_.prev;
  while (after != &ends_ && ByHardExpiry{}(timer, timer_of(after))) after = after->prev;
  timer.prev = after;
  timer.next = after->next;
  after->next->prev = &timer;
  after->next = &timer;
  ++count_;
}

inline void HrtimerModel::program(Time expiry) {
  expires_next_ = expiry;
  if (expiry == kNever)
    ++stats_.device_stops;
  else
    ++stats_.reprograms;
  if (defer_writes_) {
    // From the handler's end to its irq_exit's: the last write wins, armed
    // with the sequence number it would have had (handle_interrupt). The
    // handler's event is running, so no interrupt is pending.
    deferred_arm_ = expiry != kNever;
    if (deferred_arm_) {
      deferred_at_ = std::max(expiry, queue_->now());
      deferred_seq_ = queue_->reserve_seq();
    }
    return;
  }
  // An interrupt already pending (the relay's second stage armed): a firing
  // now would merge with it, and the handler writes the device again when it
  // finishes.
  if (interrupt_pending()) return;
  if (expiry != kNever)
    queue_->schedule_relay(event_, std::max(expiry, queue_->now()), config_.entry_latency);
  else
    queue_->cancel(event_);  // stop the device
}

}  // namespace ufq::sim
