// The real-time pacer: the EventLoop (event_loop.hpp) driven by a thread of
// ours, fed by producers on any thread through a bounded lock-free ring.
//
// The pacer thread loops: read CLOCK_MONOTONIC, take what the ring holds
// (packets into EventLoop::enqueue, control messages applied), EventLoop::run
// (dequeue what is due and pass it to the egress in bulks of up to 64, one
// sendmmsg each), and sleep until the returned wake-up with the chosen
// strategy (Sleeper), or wait for POLLOUT after a refused send. A producer
// wakes the pacer when its packet is due before the pacer's planned wake-up,
// under every strategy (sleeper.hpp).
//
// Control messages go through the same ring, so they are ordered with the
// packets and the scheduler stays single-threaded: set_rate() (an owner's
// pacing rates), change() (the fq configuration) and stats() (a snapshot);
// the last two wait for the pacer thread's answer.
//
// Every packet submitted comes back exactly once through the PacketDone
// callback (on the pacer thread, or in stop() for what is left): sent (with
// the time the send call returned), dropped by the scheduler (the verdict
// says why), failed in the egress (hard error, counted by errno), or unsent
// at stop (still queued in the ring, the scheduler or the egress).
// PacerResult::accounting proves it: submitted = sent + dropped + failed +
// unsent (accounting.hpp). Producers must have stopped submitting before
// stop(): a packet pushed after the final sweep of the ring would be missed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "ufq/config.hpp"
#include "ufq/driver/qdisc_runner.hpp"
#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/event_loop.hpp"
#include "ufq/rt/mpmc_ring.hpp"
#include "ufq/rt/packet_fate.hpp"
#include "ufq/rt/sleeper.hpp"
#include "ufq/stats.hpp"

namespace ufq::rt {

struct PacerConfig {
  FqConfig fq;
  SleeperOptions sleeper;
  RunnerConfig runner;                // quota and bulk of one qdisc run
  std::uint32_t ring_capacity = 1U << 16;
  std::uint32_t rate_messages = 1024;  // set_rate() changes in flight at once
  int cpu = -1;                       // pin the pacer thread (-1: no)
  int nice = 0;                       // the pacer thread's nice value (0: unchanged)
  Time idle_ns = 10 * kNsecPerMsec;   // longest wait with nothing queued
};

// Live counters, readable from any thread while the pacer runs.
struct PacerCounters {
  std::uint64_t wakeups = 0;         // returns from a sleep (the strategy's wait)
  std::uint64_t timer_wakeups = 0;   // of those, at the window
  std::uint64_t doorbell_wakeups = 0;
  std::uint64_t runs = 0;            // qdisc runs
  std::uint64_t submitted = 0;       // accepted by submit()
  std::uint64_t ring_full = 0;       // refused by submit() (the ring was full; still the caller's)
  std::uint64_t sent = 0;            // handed to the kernel
  std::uint64_t dropped = 0;         // refused by the scheduler
  std::uint64_t failed = 0;          // hard egress errors
  std::uint64_t blocked_waits = 0;   // waits for the egress after EAGAIN/ENOBUFS
  std::uint64_t rings = 0;           // producer doorbells
  std::uint64_t due_without_sleep = 0;  // idle runs whose window had already begun: no sleep
  std::uint64_t quota_runs = 0;         // runs that used up the quota (run again at once)
  std::uint64_t ring_rechecks = 0;      // idle runs that found something new in the ring
  std::uint64_t rate_changes = 0;       // set_rate() messages applied
  std::uint64_t config_changes = 0;     // change() requests applied (valid ones)
  std::uint64_t thread_cpu_ns = 0;   // the pacer thread's CPU time (user + system)
};

// Final numbers after stop().
struct PacerResult {
  PacerCounters counters;
  std::array<std::uint64_t, kPacketFates> fates{};  // packets per fate
  std::uint64_t unsent_ring = 0, unsent_scheduler = 0, unsent_egress = 0;
  // submitted = sent + dropped + failed (by errno) + unsent (ring, scheduler,
  // egress); produced = submitted, unsent_producer = 0 at this level.
  PacketAccounting accounting;
  FqStats fq;                 // the scheduler's statistics at stop (before purging)
  RunnerStats runner;
  EgressStats egress;
  std::uint64_t watchdog_arms = 0;
  std::uint64_t slack_changes = 0;
};

// A snapshot while running (stats()): the pacer's counters and the loop's
// statistics, taken on the pacer thread. loop.counters.enqueued (packets
// the pacer thread has taken from the ring) = sent + dropped + failed +
// loop.queued.
struct PacerStats {
  PacerCounters counters;
  EventLoopStats loop;
  FqConfig config;  // the scheduler's configuration in force
};

class Pacer {
 public:
  Pacer(PacerConfig cfg, Egress& egress, PacketDone done);
  ~Pacer();
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  void start();
  // Any thread. False when the ring is full (the packet stays the caller's).
  // Wakes the pacer if it sleeps past the packet's departure time, unless
  // `notify` is false: a producer handing over a burst then calls notify()
  // once with the burst's earliest departure (one doorbell per burst instead
  // of a doorbell/wake-up ping-pong per packet when packets arrive late).
  bool submit(Packet& p, bool notify = true);
  // Wake the pacer if it plans to sleep past `earliest_due` (0 = now).
  void notify(Time earliest_due);

  // Any thread: set the owner's pacing_rate and max_pacing_rate (what
  // SO_MAX_PACING_RATE does to a socket) on the pacer thread, in ring order
  // with the packets submitted before and after; packets dequeued after that
  // use them. Once an owner's packets are submitted, its fields are the pacer
  // thread's: change them only this way. The owner must outlive the message
  // (until a packet submitted after this call comes back, or stop()). False
  // when the ring or the message pool (PacerConfig::rate_messages) is full:
  // nothing changed, try again. Changes still in the ring at stop() are
  // discarded.
  bool set_rate(FlowOwner& owner, Rate pacing_rate, Rate max_pacing_rate = kUnlimitedRate);
  // Any thread but the pacer's (not from PacketDone: it would wait for
  // itself; that aborts with a message): `tc qdisc change` on the running
  // scheduler, all or nothing. Waits for the pacer thread; an invalid
  // configuration throws ConfigError here and changes nothing. Packets
  // above a lowered limit come back as drop_limit. Returns how many. Before
  // start() or after stop() it is applied on the calling thread.
  std::size_t change(const FqConfig& cfg);
  // Any thread but the pacer's: a snapshot of the counters and the loop's
  // statistics (FqStats, runner, egress), taken on the pacer thread (one
  // doorbell wake-up). Not concurrently with stop().
  PacerStats stats();
  // Stop the pacer thread. With drain_ns > 0 it first keeps running until
  // nothing is queued or drain_ns has passed. Then every packet still held is
  // reported as `unsent`. Idempotent; also called by the destructor.
  void stop(Time drain_ns = 0);
  bool running() const { return thread_.joinable(); }
  // stop() has been called (the pacer may still be draining).
  bool stopping() const { return stop_.load(std::memory_order_acquire); }

  // Any thread while running, but not concurrently with stop().
  PacerCounters counters() const;
  // Valid after stop().
  const PacerResult& result() const { return result_; }
  const PacerConfig& config() const { return cfg_; }
  TimerKind timer() const { return sleeper_.kind(); }
  std::thread::native_handle_type native_handle() { return thread_.native_handle(); }

 private:
  // A request answered by the pacer thread (change, stats), on the caller's stack.
  struct Request;
  struct RateMessage {
    FlowOwner* owner = nullptr;
    Rate pacing_rate = kUnlimitedRate;
    Rate max_pacing_rate = kUnlimitedRate;
  };
  // Ring entries: a Packet* (8-aligned), a rate message index << 3 | 1, or a
  // Request* | 2.
  using Slot = std::uintptr_t;
  static constexpr Slot kTagMask = 7, kTagRate = 1, kTagRequest = 2;
  // Packets per EventLoop::enqueue_burst when the ring is drained.
  static constexpr std::size_t kDrainBurst = 32;

  void loop();
  void drain_ring(Time now);
  void take(Slot s, Time now);
  void answer(Request& rq, Time now);
  void wait_egress(const Wakeup& w);
  void call(Request& rq);
  PacerStats snapshot(Time now) const;
  void finish();
  void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  PacerConfig cfg_;
  PacketDone done_;
  EventLoop loop_;
  Sleeper sleeper_;
  MpmcRing<Slot> ring_;
  std::unique_ptr<RateMessage[]> rates_;
  MpmcRing<std::uint32_t> free_rates_;  // indices into rates_ (producers take, the pacer returns)
  std::thread thread_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> exited_{false};
  std::atomic<Time> drain_until_{0};
  // The time the pacer plans to wake (0 = awake, kNever = no timer).
  std::atomic<Time> sleep_until_{0};

  std::atomic<std::uint64_t> wakeups_{0}, timer_wakeups_{0}, doorbell_wakeups_{0},
      thread_cpu_{0}, due_without_sleep_{0}, ring_rechecks_{0}, rate_changes_{0},
      config_changes_{0};
  // Producers' fetch_add, on a line of their own: the pacer thread's
  // counters above are not invalidated by every submit (docs/multi-queue.md).
  alignas(64) std::atomic<std::uint64_t> submitted_{0};
  std::atomic<std::uint64_t> rings_{0}, ring_full_{0};
  PacerResult result_;
  bool finished_ = false;
};

}  // namespace ufq::rt
