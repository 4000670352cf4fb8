// One `ufq pace` run: the workload generator, the pacer (one fq scheduler
// and a wake-up strategy; with --queues N, N of them, each with its own
// producer, pool and egress: MultiQueuePacer), UDP egress to a receiver on
// 127.0.0.1 (or across a veth pair between two namespaces), the /proc
// sampler every interval, and the accounting and measurements at the end.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/histogram.hpp"
#include "ufq/rt/multi_queue_pacer.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/rt/sleeper.hpp"
#include "pace/timer_probe.hpp"
#include "ufq/rt/datagram.hpp"
#include "ufq/rt/udp_egress.hpp"
#include "pace/vmstat.hpp"
#include "pace/workload.hpp"
#include "ufq/stats.hpp"

namespace ufq::rt {

enum class EgressKind : std::uint8_t { udp_shared, udp_per_flow, sink };
const char* to_string(EgressKind k);
std::optional<EgressKind> parse_egress_kind(std::string_view name);

// One interval line.
struct IntervalReport {
  double t_s = 0;           // seconds since the workload started
  ProcRates system;         // system-wide, from /proc/stat
  double wakeups_per_s = 0;
  double packets_per_wakeup = 0;
  double pps = 0;           // packets sent per second
  double pacer_cpu_pct = 0; // the pacer thread
  std::uint64_t ring_full = 0;   // the producer found the ring full (this interval)
  std::uint64_t pool_empty = 0;  // the producer found the pool empty (this interval)
};

struct PaceOptions {
  std::string label;                 // shown in reports (e.g. "timer_slack=10us")
  WorkloadConfig workload;
  FqConfig fq;
  SleeperOptions sleeper;
  EgressKind egress = EgressKind::udp_shared;
  bool gso = true;
  bool netns = false;
  // Send to this receiver (IPv4 or IPv6, not ufq's) instead of starting the
  // built-in one: only send-side figures are measured.
  std::optional<Address> dest;
  Time duration_ns = 10 * kNsecPerSec;
  Time interval_ns = 2 * kNsecPerSec;
  int pacer_cpu = -1;                // pin the pacer thread (-1: no)
  int helper_cpu = -1;               // pin producer and receiver threads
  int pacer_nice = 0;                // nice value of the pacer and receiver threads
  bool probe_timer = true;           // measure timer latency first
  std::uint32_t probe_samples = 200;
  Time drain_ns = 100 * kNsecPerMsec;       // after the last departure
  Time receive_wait_ns = 500 * kNsecPerMsec;
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM
  std::function<void(const TimerLatency&)> on_probe;
  std::function<void(const IntervalReport&)> on_interval;
  // Test seam: replaces the UDP egress's sendmmsg (failure injection).
  SendmmsgFn sendmmsg;
  // The producers -> pacer ring (a small one makes the producer outrun the pacer).
  std::uint32_t ring_capacity = 1U << 16;
  // No pacing: the same number of packets (rate x duration) sent as fast as
  // the socket takes them, without fq, producer thread or timer (blast.hpp);
  // `timer` reads "blast" in the report.
  bool blast = false;
  // Pacer queues (MultiQueuePacer): flows steered by the hash of their owner,
  // one producer, pool and egress (its own socket) per queue. With pinning
  // (pacer_cpu >= 0) and more than one queue, queue q's pacer and producer
  // run on CPU q mod the CPU count.
  std::uint32_t queues = 1;
};

// One queue's share of a run (`ufq pace --queues N`).
struct PaceQueueReport {
  std::uint32_t queue = 0;
  int cpu = -1;                  // pinned to (-1: not)
  std::uint32_t flows = 0;       // steered to this queue
  double pps = 0;
  double wakeups_per_s = 0;
  double pacer_cpu_pct = 0;
  double producer_cpu_pct = 0;
  double flow_rate_error_max = 0;
  std::uint64_t packets_generated = 0;
  PacketAccounting accounting;   // produced = this queue's producer's
  PacerResult pacer;
};

struct PaceReport {
  std::string label;
  std::string timer;            // the strategy in use
  std::string egress;           // what the egress is
  std::string path;             // "loopback 127.0.0.1", "veth ...", "to [::1]:9 ...", "none (sink)"
  // The built-in receiver ran: the received/lost/arrival figures are
  // measured (false for the sink and for --dest).
  bool receiver = false;
  FqConfig fq;
  FqStats fq_stats;
  WorkloadConfig workload;
  Time period_ns = 0;
  bool stopped_by_signal = false;

  double seconds = 0;           // measured span (the workload's departures)
  double pps = 0;
  double wakeups_per_s = 0;
  double packets_per_wakeup = 0;
  ProcRates system;             // over the measured span
  double cpu_pct = 0;           // sending side: pacer + producer threads (% of one CPU)
  double pacer_cpu_pct = 0;     // the pacer thread alone
  double producer_cpu_pct = 0;
  double receiver_cpu_pct = 0;
  double process_cpu_pct = 0;   // the whole process (receiver included)
  // CPU per packet sent (ns): the pacer thread; the sending side (pacer +
  // producer); and the sending side plus ksoftirqd, which runs the receive
  // side of loopback datagrams when it does not run inside the send call.
  double pacer_ns_per_packet = 0;
  double sender_ns_per_packet = 0;
  double sender_softirq_ns_per_packet = 0;

  std::uint64_t packets_generated = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_received = 0;
  std::uint64_t packets_lost = 0;   // sent and never received
  std::uint64_t packets_extra = 0;  // received beyond those sent (duplicates): an error
  std::array<std::uint64_t, kPacketFates> fates{};
  std::uint64_t unsent_at_exit = 0;
  std::uint64_t pool_empty = 0, ring_full = 0, late_handover = 0;
  // produced (by the workload) = sent + dropped + failed + unsent at exit,
  // every term (accounting.hpp); format_summary and format_json print it.
  PacketAccounting accounting;

  std::uint32_t flows_measured = 0;
  double flow_rate_error_max = 0;   // |achieved / intended - 1|, worst flow
  double flow_rate_error_mean = 0;
  Histogram lateness;               // send call return - intended departure
  Histogram transit;                // receive timestamp - intended departure
  Histogram gaps;                   // arrival gaps within a flow

  PacerResult pacer;               // with several queues: the totals
  std::uint32_t queues = 1;
  std::vector<PaceQueueReport> per_queue;  // one per queue (also with one queue)
  std::optional<TimerLatency> timer_latency;
  std::vector<IntervalReport> intervals;
};

// Runs the workload. Throws std::exception on set-up failure (sockets,
// namespaces, invalid configuration).
PaceReport run_pace(const PaceOptions& opt);

}  // namespace ufq::rt
