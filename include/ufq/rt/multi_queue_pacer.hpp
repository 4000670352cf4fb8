// One pacer per core: N Pacers (pacer.hpp), each with its own fq scheduler,
// watchdog, sleeper, ring, egress and sockets on its own thread (pinned to a
// core when asked), as the kernel runs `mq` with one fq per transmit queue.
//
// Flows are steered to a queue by their owner and never split: by default a
// hash of FlowOwner::id (stable for the owner's life; packets without an
// owner by their packet hash, as fq classifies them), or the application's
// own choice (MultiQueueConfig::steer: e.g. the queue of the core its
// connection runs on, as XPS and SO_REUSEPORT CPU steering do). submit(),
// set_rate() and notify() go to the owner's queue; change(), stats() and the
// results are per queue and in total (multi_queue_totals.hpp), printed as
// `tc -s qdisc show` prints `mq` with fq children (ufq/tc/qdisc_print.hpp).
//
// Nothing the hot path writes is shared between queues: the router reads
// only its own immutable state (the queue table and the steering function),
// each queue's producers write that queue's ring, and each pacer thread
// writes only its queue's memory (docs/multi-queue.md: what crosses cores and
// how it scales; tests/rt/test_multi_queue_isolation.cpp proves it with page
// protection).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ufq/packet.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/rt/packet_fate.hpp"

namespace ufq::rt {

// The queue a flow goes to, in [0, queues). Must depend only on the owner
// (or, for packets without one, the packet hash) and return the same queue
// for an owner for as long as it lives: that is what keeps a flow on one
// queue. Called on producer threads, concurrently: it must not write shared
// state.
using SteerFn = std::function<std::uint32_t(const FlowOwner* owner, std::uint32_t packet_hash)>;

// Builds one queue's objects: called on the constructing thread once per
// queue with that queue's index and a function that allocates and
// constructs the queue (its Pacer, scheduler tables, ring). The default
// calls build(). A NUMA-aware application binds memory to the queue's node
// around build(); the isolation test points the allocator at the queue's own
// page-aligned arena.
using QueuePlacement = std::function<void(std::uint32_t queue, const std::function<void()>& build)>;

// PacketDone with the queue that reports the packet. Called on that queue's
// pacer thread (or in stop()), so calls for different queues run
// concurrently: keep what it writes per queue.
using MultiQueueDone = std::function<void(std::uint32_t queue, Packet&, PacketFate, Time when)>;

struct MultiQueueConfig {
  std::uint32_t queues = 1;    // 1..kMaxQueues
  PacerConfig pacer;           // every queue's configuration (fq, sleeper, ring, ...)
  // The core each queue's pacer thread is pinned to (queue q: cpus[q]);
  // empty: pacer.cpu for every queue (-1: not pinned). Otherwise one per queue.
  std::vector<int> cpus;
  SteerFn steer;               // empty: steer_by_owner_hash
  QueuePlacement place;        // empty: build in place
};

struct MultiQueueCounters {
  std::vector<PacerCounters> queues;
  PacerCounters total;
};

// A snapshot while running: each queue's taken on its own pacer thread (one
// doorbell round trip each, one after the other: the queues are not
// stopped together, so the total is a sum of snapshots a few microseconds
// apart).
struct MultiQueueStats {
  std::vector<PacerStats> queues;
  PacerStats total;  // config: queue 0's
};

// After stop(). total.accounting: produced = sum of the queues' submitted,
// every term summed; balanced iff every queue is.
struct MultiQueueResult {
  std::vector<PacerResult> queues;
  PacerResult total;
};

class MultiQueuePacer {
 public:
  static constexpr std::uint32_t kMaxQueues = 1024;

  // One egress per queue (egress[q] serves queue q only; each must outlive
  // this object). Throws std::invalid_argument when queues is 0 or above
  // kMaxQueues, egress.size() != queues, an egress is null or repeated, or
  // cpus has neither 0 nor `queues` entries; ConfigError when pacer.fq is
  // invalid.
  MultiQueuePacer(MultiQueueConfig cfg, std::span<Egress* const> egress, MultiQueueDone done);
  ~MultiQueuePacer();  // stop()
  MultiQueuePacer(const MultiQueuePacer&) = delete;
  MultiQueuePacer& operator=(const MultiQueuePacer&) = delete;

  // Starts every queue's pacer thread.
  void start();
  std::uint32_t queues() const { return static_cast<std::uint32_t>(queues_.size()); }

  // The default steering: a 64-bit mix of the key (FlowOwner::id, or the
  // packet hash without an owner) reduced to [0, queues) by multiply-shift.
  static std::uint32_t hash_queue(std::uint64_t key, std::uint32_t queues);
  static std::uint32_t steer_by_owner_hash(const FlowOwner* owner, std::uint32_t packet_hash,
                                           std::uint32_t queues);

  // The queue of an owner's packets (any thread). Throws std::out_of_range,
  // naming the value and the range, when the steering function returns a
  // queue that does not exist.
  std::uint32_t queue_of(const FlowOwner* owner, std::uint32_t packet_hash) const;
  std::uint32_t queue_of(const Packet& p) const { return queue_of(p.owner, p.hash); }

  // Pacer::submit on the packet's queue (any thread); false when that
  // queue's ring is full (the packet stays the caller's).
  bool submit(Packet& p, bool notify = true);
  // Pacer::notify on one queue: a producer that submitted a burst with
  // notify = false calls it once per queue it submitted to.
  void notify(std::uint32_t queue, Time earliest_due);
  // Pacer::set_rate on the owner's queue (owner packets' hash is not used:
  // an owner's queue depends on the owner alone).
  bool set_rate(FlowOwner& owner, Rate pacing_rate, Rate max_pacing_rate = kUnlimitedRate);
  // `tc qdisc change` on every queue's fq: validated once first, so an
  // invalid configuration throws ConfigError and changes no queue. Returns
  // the packets trimmed in all. Not from a PacketDone callback.
  std::size_t change(const FqConfig& cfg);
  // On one queue only (as `tc qdisc change dev D parent 1:q+1 fq ...`).
  std::size_t change(std::uint32_t queue, const FqConfig& cfg);
  // Any thread but a pacer's. Not concurrently with stop().
  MultiQueueStats stats();
  // Any thread while running, not concurrently with stop().
  MultiQueueCounters counters() const;
  // Stops every queue (in parallel when draining: each drains up to drain_ns).
  void stop(Time drain_ns = 0);
  // Valid after stop().
  const MultiQueueResult& result() const { return result_; }

  Pacer& queue(std::uint32_t q) { return queues_.at(q)->pacer; }
  const Pacer& queue(std::uint32_t q) const { return queues_.at(q)->pacer; }
  const MultiQueueConfig& config() const { return cfg_; }

 private:
  // One queue, on its own cache lines (what sits next to it in the heap is
  // the placement's business).
  struct alignas(128) Queue {
    Queue(PacerConfig cfg, Egress& egress, PacketDone done) : pacer(std::move(cfg), egress, std::move(done)) {}
    Pacer pacer;
  };

  // Read-only after construction: every producer and pacer thread reads it.
  MultiQueueConfig cfg_;
  MultiQueueDone done_;
  std::vector<std::unique_ptr<Queue>> queues_;
  MultiQueueResult result_;
  bool finished_ = false;
};

}  // namespace ufq::rt
