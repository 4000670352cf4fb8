// The runtime driven by the application's own event loop: one fq scheduler,
// the driver loop (QdiscRunner) over an Egress, and the fate of every packet,
// with no thread of ours.
//
//   loop.enqueue(pkt, now);            // from the application's loop
//   Wakeup w = loop.run(now);          // send what is due at `now`
//   arm a timer for [w.soft, w.hard]   // e.g. epoll_pwait2 with timer slack
//   (and POLLOUT on w.fd when the egress refused a send)
//
// The Pacer (pacer.hpp) is this loop plus a ring from producer threads and a
// sleeper: the same code sends in both modes. docs/embedding.md has the
// threads, who owns which memory when, what the callback may do and the
// error policy.
//
// Threads: one thread at a time drives a loop (every method but counters(),
// which any thread may read). Nothing inside takes a lock or reads a clock:
// `now` is an argument (CLOCK_MONOTONIC ns, the clock the packets' tstamp
// uses); a `now` earlier than a previous call's is taken as that one, so time
// never goes backwards for the scheduler.
//
// Every packet enqueued comes back exactly once through PacketDone: dropped
// by the scheduler (inside enqueue() or change()), sent or failed in the
// egress (inside run()), or unsent (give_back(), or the destructor). The
// callback must not call back into the same loop (enqueue, run, change,
// give_back): that would reenter the scheduler in the middle of a run, so it
// is refused with a message and abort().
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>

#include "ufq/config.hpp"
#include "ufq/driver/qdisc_runner.hpp"
#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/packet_fate.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/stats.hpp"
#include "ufq/verdict.hpp"

namespace ufq::rt {

struct EventLoopConfig {
  FqConfig fq;
  RunnerConfig runner;  // quota and bulk of one qdisc run
  // After a refused send (EAGAIN/ENOBUFS) run() asks to be called again on
  // POLLOUT of Wakeup::fd or after egress_wait_ns at the latest (ENOBUFS
  // raises no POLLOUT); egress_retry_ns when the egress has no descriptor.
  Time egress_wait_ns = 200 * kNsecPerUsec;
  Time egress_retry_ns = 50 * kNsecPerUsec;
};

// Why run() returned, i.e. what the caller's loop waits for before the next run().
enum class WakeFor : std::uint8_t {
  window,  // flows are throttled: run at some moment of [soft, hard] (a timer with slack)
  packet,  // nothing is throttled: run after the next enqueue (soft = hard = kNever)
  quota,   // the run's quota was used up: run again soon (soft = hard = the run's now)
  egress,  // the egress refused a send: run on POLLOUT of fd (if >= 0), at soft (= hard) at the latest
};
const char* to_string(WakeFor w);

// The next wake-up: run() again at some moment of [soft, hard] (kNever: no
// timer), or earlier when fd (>= 0) is writable. Running earlier than soft is
// always allowed (it sends what is due and returns a new wake-up); running
// later than hard makes packets late.
struct Wakeup {
  WakeFor why = WakeFor::packet;
  Time soft = kNever;
  Time hard = kNever;
  int fd = -1;  // WakeFor::egress: poll it for POLLOUT (-1: none; wait for soft)
  bool timed() const { return soft != kNever; }
  Time slack() const { return timed() ? hard - soft : 0; }
};

// Live counters: written by the driving thread, readable from any thread.
struct EventLoopCounters {
  std::uint64_t enqueued = 0;      // packets given to enqueue()
  std::uint64_t runs = 0;          // qdisc runs
  std::uint64_t quota_runs = 0;    // runs that used up the quota
  std::uint64_t egress_waits = 0;  // run() calls that returned WakeFor::egress
  std::uint64_t sent = 0;          // handed to the kernel (or the sink)
  std::uint64_t dropped = 0;       // refused by the scheduler (and trimmed by change())
  std::uint64_t failed = 0;        // hard egress errors
};

// A snapshot, taken on the driving thread.
struct EventLoopStats {
  EventLoopCounters counters;
  std::array<std::uint64_t, kPacketFates> fates{};  // packets per fate so far
  // Held now: queued in the scheduler, held by the driver loop after a
  // refusal, staged in the egress. counters.enqueued = sent + dropped +
  // failed + unsent (given back) + queued.
  std::uint32_t queued = 0;
  FqStats fq;
  RunnerStats runner;
  EgressStats egress;
  std::uint64_t watchdog_arms = 0;
};

class EventLoop {
 public:
  // Throws ConfigError when cfg.fq is invalid. Takes the egress's completion
  // callback for itself: the egress must outlive the loop and serve no other.
  EventLoop(EventLoopConfig cfg, Egress& egress, PacketDone done);
  // Gives back what is still held (PacketDone: unsent), then lets go of the egress.
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Offer a packet at `now`. Queued: the loop holds it until it comes back
  // through PacketDone. Refused: PacketDone (drop_limit, drop_flow_limit or
  // drop_horizon) is called before this returns, and the verdict says so.
  // Nothing is sent here: call run() (once per batch of enqueues).
  // Pre: `p` is not held by the runtime; its owner outlives it there.
  Verdict enqueue(Packet& p, Time now);

  // enqueue() for every packet of `packets` in order, through the scheduler's
  // batched call (FqScheduler::enqueue_burst: the same verdicts, faster with
  // many flows: docs/architecture.md#batched-calls). The refused packets are
  // reported through PacketDone in order, after each group of up to 64 has
  // been offered (enqueue() reports each before returning). Returns how many
  // were queued. Never allocates.
  // Pre: as enqueue() for each packet; no packet appears twice.
  std::size_t enqueue_burst(std::span<Packet* const> packets, Time now);

  // Send what is due at `now` (the watchdog's timer fired if now >= its
  // soft expiry), retrying what the egress refused first. Completions
  // (sent, failed) are reported through PacketDone inside this call. Returns
  // when to run again. Never allocates.
  Wakeup run(Time now);

  // `tc qdisc change`, all or nothing: throws ConfigError (naming the field,
  // value and range) and changes nothing when `cfg` is invalid. Packets above
  // a lowered limit come back as drop_limit (FqStats counts them in
  // `trimmed`). Returns how many; call run() afterwards (the wake-up may move).
  std::size_t change(const FqConfig& cfg, Time now);

  // Hand every packet still held back through PacketDone as `unsent`: staged
  // in the egress, held by the driver loop, queued in the scheduler (in that
  // order). The loop stays usable. Returns how many.
  std::size_t give_back(Time now);

  // Nothing held (scheduler, driver loop, egress).
  bool idle() const { return queued() == 0; }
  std::uint32_t queued() const {
    return fq_.qlen() + runner_.held() + egress_.pending();
  }
  // Any thread.
  EventLoopCounters counters() const;
  // On the driving thread.
  EventLoopStats stats(Time now) const;
  // produced = enqueued; balanced when nothing is held (after give_back()).
  PacketAccounting accounting() const;
  const FqConfig& config() const { return fq_.config(); }
  const FqScheduler& scheduler() const { return fq_; }
  Egress& egress() { return egress_; }
  // The latest `now` seen.
  Time now() const { return now_; }

 private:
  // One writer (the driving thread), any number of readers.
  struct Counter {
    std::atomic<std::uint64_t> v{0};
    void bump(std::uint64_t n = 1) {
      v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::uint64_t get() const { return v.load(std::memory_order_relaxed); }
  };
  // Reentry from the callback is refused; `entered_` marks a call in progress.
  class Entry;

  Time advance(Time now) { return now_ = now > now_ ? now : now_; }
  void report(Packet& p, PacketFate f, Time when);
  Wakeup egress_wait(Time now);

  EventLoopConfig cfg_;
  Egress& egress_;
  PacketDone done_;
  FqScheduler fq_;
  EgressDevice device_;
  QdiscRunner<EgressDevice> runner_;
  Time now_ = 0;
  bool entered_ = false;

  Counter enqueued_, runs_, quota_runs_, egress_waits_, sent_, dropped_, failed_;
  std::array<std::uint64_t, kPacketFates> fates_{};
  ErrnoCounts failed_errno_;
  std::uint64_t unsent_scheduler_ = 0, unsent_egress_ = 0;
};

}  // namespace ufq::rt
