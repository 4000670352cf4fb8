// The fq packet scheduler: Linux's sch_fq rebuilt for user space.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

namespace ufq {

// Where a flow is, for inspection.
enum class FlowState : std::uint8_t {
  detached,   // on no list: idle (a GC candidate after 3 s)
  new_list,   // on a band's new_flows list
  old_list,   // on a band's old_flows list
  throttled,  // in the throttled set until time_next_packet
};

const char* to_string(FlowState s);

struct FlowInfo {
  std::uint64_t key;       // owner id << 1, or (hash & orphan_mask) << 1 | 1
  std::uint32_t qlen;
  std::int32_t credit;
  Time time_next_packet;   // 0 = never paced
  FlowState state;
  std::uint8_t band;       // band of the flow's last packet (latest), 0 in 5.7
};

// Called with each packet the scheduler hands back outside dequeue(): packets
// removed by change() lowering the limit, and by reset().
using PacketSink = std::function<void(Packet&)>;

class FqScheduler {
 public:
  // Throws ConfigError when `cfg` is invalid.
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
  Verdict enqueue(Packet& pkt, Time now);

  // The next packet to send at `now`, or nullptr when none may leave yet. In
  // that case, if some flow is throttled, the watchdog holds a wake-up request
  // for [earliest due time, + timer_slack]. `now` must not go backwards.
  Packet* dequeue(Time now);

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

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ufq
