// Every counter `tc -s qdisc show` prints for fq, plus ufq's own accounting.
#pragma once

#include <array>
#include <cstdint>

#include "ufq/config.hpp"

namespace ufq {

struct FqStats {
  // Generic qdisc counters: " Sent B bytes P pkt (dropped D, overlimits O requeues R)".
  std::uint64_t bytes = 0;     // bytes dequeued
  std::uint64_t packets = 0;   // segments dequeued (tc's "pkt")
  std::uint64_t drops = 0;     // every drop, one per packet
  std::uint64_t overlimits = 0;  // fq never increments it
  std::uint64_t requeues = 0;    // driver refused a packet (counted by the caller's driver loop)
  std::uint64_t backlog = 0;     // bytes queued
  std::uint32_t qlen = 0;        // packets queued

  // struct tc_fq_qd_stats, in its order.
  std::uint64_t gc_flows = 0;
  std::uint64_t highprio_packets = 0;  // 5.7: internal queue; latest: 0
  std::uint64_t tcp_retrans = 0;       // obsolete, always 0
  std::uint64_t throttled = 0;         // times a flow entered the throttled set
  std::uint64_t flows_plimit = 0;
  std::uint64_t pkts_too_long = 0;
  std::uint64_t allocation_errors = 0;
  // time_next_delayed_flow + timer_slack - now; negative when nothing is throttled.
  std::int64_t time_next_delayed_flow = 0;
  std::uint32_t flows = 0;
  std::uint32_t inactive_flows = 0;
  std::uint32_t throttled_flows = 0;
  std::uint32_t unthrottle_latency_ns = 0;
  std::uint64_t ce_mark = 0;
  std::uint64_t horizon_drops = 0;
  std::uint64_t horizon_caps = 0;
  std::uint64_t fastpath_packets = 0;
  std::array<std::uint64_t, kBands> band_drops{};
  std::array<std::uint32_t, kBands> band_pkt_count{};

  // ufq's accounting, not printed by tc. Always: offered = dequeued + drops + purged + qlen.
  std::uint64_t offered = 0;   // packets passed to enqueue()
  std::uint64_t dequeued = 0;  // packets returned by dequeue(), change() trimming included
  std::uint64_t trimmed = 0;   // of those, removed by change() lowering the limit
  std::uint64_t purged = 0;    // handed back by reset() (the kernel frees them uncounted)

  bool operator==(const FqStats&) const = default;
};

}  // namespace ufq
