// The fq packet scheduler: Linux's sch_fq rebuilt for user space.
//
// Decisions are the kernel's (docs/features.md lists where they differ); the
// structures underneath are flat and cache-friendly (docs/architecture.md).
// A kernel-shaped reference implementation, ufq::reference::FqScheduler, makes
// the same decisions; tests/core/test_differential.cpp and
// fuzz/fuzz_scheduler_diff.cpp drive both with the same input and compare
// every dequeued packet, verdict and counter. Both satisfy ufq::Scheduler
// (ufq/scheduler_concept.hpp).
//
// Threads: one instance is used by one thread at a time (the kernel's qdisc
// lock); nothing inside takes a lock. Time never goes backwards between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "ufq/config.hpp"
#include "ufq/flow_info.hpp"
#include "ufq/packet.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

namespace ufq {

class FqScheduler {
 public:
  // Throws ConfigError (naming the field, the value and the valid range) when
  // `cfg` is invalid.
  explicit FqScheduler(const FqConfig& cfg = FqConfig{});
  // Forgets any packet still queued without touching it (reset() first to get
  // them back), so packets may be freed before the scheduler.
  ~FqScheduler();
  FqScheduler(const FqScheduler&) = delete;
  FqScheduler& operator=(const FqScheduler&) = delete;

  // Offer a packet at time `now`. On `queued` the scheduler holds it until
  // dequeue() returns it; otherwise it is refused, counted, and stays the
  // caller's. Never allocates once the flow pool has grown to the number of
  // flows in use.
  // Pre: `pkt` is not held by any scheduler; its owner (if any) outlives it here.
  Verdict enqueue(Packet& pkt, Time now);

  // The next packet to send at `now`, or nullptr when none may leave yet. In
  // that case, if some flow is throttled, the watchdog holds a wake-up request
  // for [earliest due time, + timer_slack] (with the adaptive slack, a ufq
  // extension: up to the earliest allowance of the flows due in it,
  // docs/fq-rules.md#adaptive-slack).
  // Pre: `now` is not earlier than the previous call's.
  // Post: the returned packet is the caller's again; `due` and `ce` are set.
  Packet* dequeue(Time now);

  // Batched calls (docs/architecture.md#batched-calls): the same decisions,
  // counters, watchdog requests and packet fields as the single calls they
  // stand for, so they may be mixed freely with them. With many flows they
  // are faster: while one packet is decided, the owners, flow records,
  // flow-table groups and packets of the next few are already being fetched
  // from memory.
  //
  // enqueue(*packets[i], now) for every i in order, verdicts[i] its verdict.
  // Returns how many were queued. Throws std::invalid_argument (naming both
  // sizes), before touching any packet, when `verdicts` is shorter than
  // `packets`.
  // Pre: as enqueue() for each packet; no packet appears twice.
  std::size_t enqueue_burst(std::span<Packet* const> packets, Time now, std::span<Verdict> verdicts);

  // dequeue(now) up to out.size() times, stopping at the first nullptr: the
  // packets go to out[0..n) in order and n is returned. When n < out.size()
  // nothing more may leave at `now`, and the watchdog holds the wake-up
  // request as after a dequeue() that returned nullptr; when n == out.size()
  // no such dequeue was made (call again for more).
  // Pre: as dequeue().
  std::size_t dequeue_burst(Time now, std::span<Packet*> out);

  // Apply a new configuration, as `tc qdisc change` does, but all or nothing:
  // an invalid configuration throws ConfigError and changes nothing (the
  // kernel would apply the valid attributes). `compat`, `hz` and `max_flows`
  // cannot change. Then, while more packets are queued than the new limit,
  // removes the packet dequeue() would send and hands it to `trimmed` (counted
  // as sent, as on a root qdisc, and in `trimmed`). Returns how many.
  std::size_t change(const FqConfig& cfg, Time now, const PacketSink& trimmed = {});

  // Drop every queued packet and flow (handed to `purged`), as on device reset.
  // Statistics are kept.
  void reset(const PacketSink& purged = {});

  // Every counter of `tc -s qdisc show` for fq, at `now`.
  FqStats stats(Time now) const;
  const FqConfig& config() const;
  Watchdog& watchdog();
  const Watchdog& watchdog() const;
  std::uint32_t qlen() const;
  // Earliest time_next_packet among throttled flows, kNever when none (may be
  // stale after reset(), as in the kernel).
  Time time_next_delayed_flow() const;

  // Visit every allocated flow (not the internal queue).
  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const;
  // Packets in the internal queue (5.7: high priority; latest: fast path).
  std::uint32_t internal_qlen() const;

  // Bytes the scheduler holds for its flows (flow array, flow table, throttled
  // set, out-of-order trees), for the memory benchmark.
  std::size_t memory_bytes() const;
  static std::size_t flow_bytes();  // sizeof one flow record

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ufq
