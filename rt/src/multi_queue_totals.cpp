#include "ufq/rt/multi_queue_totals.hpp"

#include <algorithm>

namespace ufq::rt {

void add_to(FqStats& t, const FqStats& q) {
  t.bytes += q.bytes;
  t.packets += q.packets;
  t.drops += q.drops;
  t.overlimits += q.overlimits;
  t.requeues += q.requeues;
  t.backlog += q.backlog;
  t.qlen += q.qlen;
  t.gc_flows += q.gc_flows;
  t.highprio_packets += q.highprio_packets;
  t.tcp_retrans += q.tcp_retrans;
  t.throttled += q.throttled;
  t.flows_plimit += q.flows_plimit;
  t.pkts_too_long += q.pkts_too_long;
  t.allocation_errors += q.allocation_errors;
  // The earliest throttled flow over the queues (0 while none has one).
  if (q.throttled_flows > 0 && (t.throttled_flows == 0 || q.time_next_delayed_flow < t.time_next_delayed_flow))
    t.time_next_delayed_flow = q.time_next_delayed_flow;
  t.flows += q.flows;
  t.inactive_flows += q.inactive_flows;
  t.throttled_flows += q.throttled_flows;
  t.unthrottle_latency_ns = std::max(t.unthrottle_latency_ns, q.unthrottle_latency_ns);
  t.ce_mark += q.ce_mark;
  t.horizon_drops += q.horizon_drops;
  t.horizon_caps += q.horizon_caps;
  t.fastpath_packets += q.fastpath_packets;
  for (std::size_t b = 0; b < kBands; ++b) {
    t.band_drops[b] += q.band_drops[b];
    t.band_pkt_count[b] += q.band_pkt_count[b];
  }
  t.offered += q.offered;
  t.dequeued += q.dequeued;
  t.trimmed += q.trimmed;
  t.purged += q.purged;
}

void add_to(PacerCounters& t, const PacerCounters& q) {
  t.wakeups += q.wakeups;
  t.timer_wakeups += q.timer_wakeups;
  t.doorbell_wakeups += q.doorbell_wakeups;
  t.runs += q.runs;
  t.submitted += q.submitted;
  t.ring_full += q.ring_full;
  t.sent += q.sent;
  t.dropped += q.dropped;
  t.failed += q.failed;
  t.blocked_waits += q.blocked_waits;
  t.rings += q.rings;
  t.due_without_sleep += q.due_without_sleep;
  t.quota_runs += q.quota_runs;
  t.ring_rechecks += q.ring_rechecks;
  t.rate_changes += q.rate_changes;
  t.config_changes += q.config_changes;
  t.thread_cpu_ns += q.thread_cpu_ns;
}

void add_to(PacketAccounting& t, const PacketAccounting& q) {
  t.produced += q.produced;
  t.sent += q.sent;
  t.drop_limit += q.drop_limit;
  t.drop_flow_limit += q.drop_flow_limit;
  t.drop_horizon += q.drop_horizon;
  for (std::size_t e = 0; e < ErrnoCounts::kSlots; ++e) {
    const std::uint64_t n = q.failed[static_cast<int>(e)];
    if (n) t.failed.add(static_cast<int>(e), n);
  }
  t.unsent_producer += q.unsent_producer;
  t.unsent_ring += q.unsent_ring;
  t.unsent_scheduler += q.unsent_scheduler;
  t.unsent_egress += q.unsent_egress;
}

void add_to(EgressStats& t, const EgressStats& q) {
  t.packets += q.packets;
  t.send_calls += q.send_calls;
  t.messages += q.messages;
  t.gso_messages += q.gso_messages;
  t.gso_packets += q.gso_packets;
  t.gso_segments += q.gso_segments;
  t.gso_fallbacks += q.gso_fallbacks;
  t.blocked += q.blocked;
  t.eagain += q.eagain;
  t.enobufs += q.enobufs;
  t.retries += q.retries;
  t.eintr += q.eintr;
  t.econnrefused_retries += q.econnrefused_retries;
  t.failed += q.failed;
  t.refused += q.refused;
  t.ce_marked += q.ce_marked;
  if (q.last_errno != 0) t.last_errno = q.last_errno;
}

void add_to(RunnerStats& t, const RunnerStats& q) {
  t.runs += q.runs;
  t.runs_sending += q.runs_sending;
  t.packets += q.packets;
  t.requeues += q.requeues;
  for (std::size_t i = 0; i < t.batch.size(); ++i) t.batch[i] += q.batch[i];
}

void add_to(EventLoopStats& t, const EventLoopStats& q) {
  t.counters.enqueued += q.counters.enqueued;
  t.counters.runs += q.counters.runs;
  t.counters.quota_runs += q.counters.quota_runs;
  t.counters.egress_waits += q.counters.egress_waits;
  t.counters.sent += q.counters.sent;
  t.counters.dropped += q.counters.dropped;
  t.counters.failed += q.counters.failed;
  for (std::size_t f = 0; f < kPacketFates; ++f) t.fates[f] += q.fates[f];
  t.queued += q.queued;
  add_to(t.fq, q.fq);
  add_to(t.runner, q.runner);
  add_to(t.egress, q.egress);
  t.watchdog_arms += q.watchdog_arms;
}

void add_to(PacerStats& t, const PacerStats& q) {
  add_to(t.counters, q.counters);
  add_to(t.loop, q.loop);
}

void add_to(PacerResult& t, const PacerResult& q) {
  add_to(t.counters, q.counters);
  for (std::size_t f = 0; f < kPacketFates; ++f) t.fates[f] += q.fates[f];
  t.unsent_ring += q.unsent_ring;
  t.unsent_scheduler += q.unsent_scheduler;
  t.unsent_egress += q.unsent_egress;
  add_to(t.accounting, q.accounting);
  add_to(t.fq, q.fq);
  add_to(t.runner, q.runner);
  add_to(t.egress, q.egress);
  t.watchdog_arms += q.watchdog_arms;
  t.slack_changes += q.slack_changes;
}

}  // namespace ufq::rt
