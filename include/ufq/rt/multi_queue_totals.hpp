// Totals over the queues of a MultiQueuePacer (multi_queue_pacer.hpp): what
// `tc -s qdisc show` prints for `mq` is the sum of its children's counters;
// these sum every counter the runtime keeps, so that the per-queue figures
// and the total reconcile term by term.
#pragma once

#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/stats.hpp"

namespace ufq::rt {

// Every counter summed. Two are not counters: time_next_delayed_flow is the
// earliest among queues with a throttled flow (0 while none has one; start
// from a zero total), and unthrottle_latency_ns (an EWMA) the largest.
void add_to(FqStats& total, const FqStats& queue);
void add_to(PacerCounters& total, const PacerCounters& queue);
void add_to(PacketAccounting& total, const PacketAccounting& queue);
void add_to(EgressStats& total, const EgressStats& queue);  // last_errno: the latest non-zero
void add_to(RunnerStats& total, const RunnerStats& queue);
void add_to(EventLoopStats& total, const EventLoopStats& queue);
void add_to(PacerStats& total, const PacerStats& queue);    // config: kept from the first
void add_to(PacerResult& total, const PacerResult& queue);

}  // namespace ufq::rt
