// The real-time pacer: one fq scheduler owned by one pacer thread.
//
// Producers on any thread hand packets over with submit() (a bounded
// lock-free ring; a full ring refuses, the packet stays the producer's). The
// pacer thread loops: read CLOCK_MONOTONIC, enqueue what the ring holds, run
// the driver loop (QdiscRunner: dequeue what is due and pass it to the egress
// in bulks of up to 64, one sendmmsg each), and when nothing more is due,
// sleep until the scheduler's watchdog window [soft, hard] with the chosen
// strategy (Sleeper). A producer wakes the pacer only when its packet is due
// before the pacer's planned wake-up.
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
#include "ufq/rt/mpmc_ring.hpp"
#include "ufq/rt/sleeper.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/stats.hpp"

namespace ufq::rt {

enum class PacketFate : std::uint8_t {
  sent,
  drop_limit,       // scheduler: limit
  drop_flow_limit,  // scheduler: flow_limit
  drop_horizon,     // scheduler: beyond the horizon
  failed,           // egress: hard send error
  unsent,           // still queued when the pacer stopped
};
inline constexpr std::size_t kPacketFates = 6;
const char* to_string(PacketFate f);

using PacketDone = std::function<void(Packet&, PacketFate, Time when)>;

struct PacerConfig {
  FqConfig fq;
  SleeperOptions sleeper;
  RunnerConfig runner;                // quota and bulk of one qdisc run
  std::uint32_t ring_capacity = 1U << 16;
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
  std::uint64_t ring_rechecks = 0;      // idle runs that found a new packet in the ring
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
  void loop();
  void drain_ring(Time now);
  void enqueue_one(Packet& p, Time now);
  void wait_egress();
  void finish();
  void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  PacerConfig cfg_;
  Egress& egress_;
  PacketDone done_;
  FqScheduler fq_;
  EgressDevice device_;
  QdiscRunner<EgressDevice> runner_;
  Sleeper sleeper_;
  MpmcRing<Packet*> ring_;
  std::thread thread_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> exited_{false};
  std::atomic<Time> drain_until_{0};
  // kNever-1 style: the time the pacer plans to wake (0 = awake).
  std::atomic<Time> sleep_until_{0};

  std::atomic<std::uint64_t> wakeups_{0}, timer_wakeups_{0}, doorbell_wakeups_{0}, runs_{0},
      sent_{0}, dropped_{0}, failed_{0}, blocked_waits_{0}, thread_cpu_{0}, due_without_sleep_{0},
      quota_runs_{0}, ring_rechecks_{0};
  std::atomic<std::uint64_t> submitted_{0}, rings_{0}, ring_full_{0};  // producers: fetch_add
  std::array<std::uint64_t, kPacketFates> fates_{};      // pacer thread only
  ErrnoCounts failed_errno_;                             // pacer thread only
  PacerResult result_;
  bool finished_ = false;
};

}  // namespace ufq::rt
