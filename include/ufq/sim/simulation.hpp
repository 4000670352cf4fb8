// The timer-slack experiment as a deterministic discrete-event simulation:
// traffic sources, one fq scheduler per transmit queue (one CPU each), the
// shared driver loop, a Linux hrtimer model per CPU, a NIC model per queue,
// other interrupt sources, and a cost model that turns counted work into CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ufq/config.hpp"
#include "ufq/histogram.hpp"
#include "ufq/sim/guest.hpp"
#include "ufq/sim/nic_model.hpp"
#include "ufq/sim/traffic.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"

namespace ufq::sim {


// Per-event CPU costs (ns of one CPU). The small fixed costs are estimates;
// `interrupt` and `packet` are fitted so that the default workload gives the
// seed's sy of 22 % (timer_slack 0) and 20 % (10 us) on 32 CPUs. The fit and
// its limits are in docs/simulator.md.
struct CostModel {
  Time timer_interrupt = 570;   // clock-event interrupt: entry, hrtimer walk, exit (fitted)
  Time nic_interrupt = 570;     // NIC interrupt and NAPI poll set-up (as timer_interrupt)
  Time other_interrupt = 570;   // any other interrupt (as timer_interrupt)
  Time timer_callback = 100;    // one expired hrtimer callback (the watchdog raises NET_TX)
  Time reprogram = 100;         // one clock-event device write
  Time qdisc_run = 200;         // one qdisc run: softirq entry, qdisc lock, clock read
  Time completion = 200;        // reclaim one descriptor, free the skb, TSQ callback
  Time doorbell = 100;          // one MMIO doorbell write
  Time packet = 5'350;          // per packet: the sender's stack, fq enqueue+dequeue, driver (fitted)
};

// Which implementation of the scheduler runs: both decide identically
// (tests/core/test_differential.cpp); the fast one makes the simulator faster.
enum class SchedulerKind : std::uint8_t { fast, reference };

struct SimConfig {
  // Workload.
  std::string traffic = "edt";       // a registered model (traffic_models(), ufq/sim/traffic.hpp)
  TrafficSettings traffic_settings;  // its own settings (on, pcap, flow-lifetime, ...); defaults when absent
  std::uint32_t flows = 1000;
  double rate_pps = 1'000'000;       // total packets/s over all flows
  std::uint32_t packet_size = 1514;  // bytes charged by fq (Ethernet frame without FCS)
  Time duration = 20 * kNsecPerSec;
  Time interval = 2 * kNsecPerSec;   // vmstat-like sample period
  std::uint64_t seed = 1;
  std::uint32_t inflight = 2;        // packets a flow keeps queued (TCP small queues)

  // Scheduler: one fq per transmit queue.
  FqConfig fq = [] {
    FqConfig c;
    c.compat = Compat::linux_5_7;  // the seed's kernel
    return c;
  }();

  SchedulerKind scheduler = SchedulerKind::fast;

  // Machine.
  std::uint32_t queues = 8;          // transmit queues, one CPU and one fq each (mq root)
  std::uint32_t cpus = 32;           // CPUs of the machine (for sy/id percentages)
  Time irq_latency = 1'000;          // hrtimer interrupt: device event to handler
  std::uint32_t tick_hz = 250;       // scheduler tick per busy CPU (0 = none)
  double other_irq_per_s = 365'000;  // other interrupts (all CPUs), Poisson
  double base_sy_pct = 0.0;          // system CPU not modelled by events
  NicConfig nic;
  CostModel cost;
  GuestConfig guest;                 // the kernel-fq guest's sender and idle tick (opt-in)

  // How the run is carried out, not what it simulates: when the transmit
  // queues share nothing (a traffic model with flows_apart, no guest sender,
  // NOHZ tick or event trace), each queue's CPU runs its events on its own up
  // to the next sample, one CPU after another, which gives the same output
  // faster (docs/simulator.md, "Queues apart"). false: one event queue for
  // all CPUs, their events interleaved in time.
  bool queues_apart = true;
};

// Work counted during a period: what the cost model turns into CPU time.
struct EventCounts {
  std::uint64_t packets = 0;           // handed to the NIC
  std::uint64_t timer_interrupts = 0;  // hrtimer (clock-event) interrupts
  std::uint64_t timers_run = 0;        // hrtimer callbacks (watchdog and tick)
  std::uint64_t device_writes = 0;     // clock-event device programs and stops
  std::uint64_t nic_interrupts = 0;    // transmit-completion interrupts
  std::uint64_t completions = 0;       // descriptors reclaimed
  std::uint64_t other_interrupts = 0;
  std::uint64_t watchdog_fires = 0;    // qdisc wake-ups by the watchdog
  std::uint64_t qdisc_runs = 0;
  std::uint64_t doorbells = 0;
  std::uint64_t interrupts() const { return timer_interrupts + nic_interrupts + other_interrupts; }
  EventCounts& operator+=(const EventCounts& o);
};
EventCounts operator-(const EventCounts& a, const EventCounts& b);

// CPU time (ns, all CPUs) the counted work costs.
Time cpu_time(const EventCounts& n, const CostModel& m);

// The schedulers' flows and packet accounting at one instant, summed over the
// transmit queues: what a soak watches.
struct FlowCensus {
  std::uint64_t flows = 0;      // flows fq holds (alive or idle, not yet collected)
  std::uint64_t inactive = 0;   // of those, detached (idle)
  std::uint64_t throttled = 0;  // of those, waiting for their departure time
  std::uint64_t gc_flows = 0;   // collected so far
  std::uint64_t created = 0;    // flows the traffic has started so far
  std::uint64_t offered = 0, dequeued = 0, drops = 0, purged = 0, qlen = 0;  // fq's packets
  // fq's books balance: every packet offered has left, been dropped or purged, or is queued.
  bool reconciled() const { return offered == dequeued + drops + purged + qlen; }
};

// One vmstat-like line.
struct Sample {
  Time start = 0, end = 0;
  EventCounts n;
  Time busy = 0;  // cpu_time(n)
  FlowCensus census;        // at `end`
  std::uint64_t rss_kb = 0;  // the process's resident set at `end`, 0 = not measured (not deterministic)
};

// The lateness of one class of flows (TrafficSource::lateness_classes).
struct ClassLateness {
  std::string name;
  Time gap = 0;               // the class's packet gap, ns
  std::uint32_t flows = 0;
  Histogram lateness;         // departure - due, ns, over the class's packets
  // A quantile of the lateness as a fraction of the gap.
  double of_gap(double q) const {
    return gap ? static_cast<double>(lateness.quantile(q)) / static_cast<double>(gap) : 0;
  }
};

struct SimResult {
  SimConfig config;
  std::vector<Sample> samples;
  Sample total;
  std::uint64_t packets_offered = 0, packets_sent = 0, packets_dropped = 0, packets_queued = 0;
  double flow_rate_error_max = 0;   // max over flows of |achieved - target| / target
  double flow_rate_error_mean = 0;
  Histogram lateness;               // departure - due, ns
  std::vector<ClassLateness> classes;  // per class of flows, when the traffic model has classes
  Histogram batch;                  // packets per qdisc run that sent any
  std::uint64_t runs_sending = 0;
  FqStats qdisc;                    // summed over the transmit queues
  NicStats nic;                     // summed
  std::uint64_t reprograms = 0;
  // Simulation events run. With the queues apart a CPU's NET_TX may run at
  // an interrupt's end where one queue for all CPUs arms an event for it
  // (another CPU has an event at that instant): the count may be lower, the
  // run the same.
  std::uint64_t events = 0;
  bool queues_apart = false;        // the CPUs' events ran in queues of their own (SimConfig::queues_apart)
  std::uint64_t flows_created = 0;  // flows the traffic started (churn: initial + replacements)
  std::uint64_t peak_rss_kb = 0;    // set by a caller that measures memory; 0 = not measured
  // The guest model (SimConfig::guest): the counts over the sender's send
  // period (from the first departure time, or the start, to its last send),
  // as the harness snapshots them, and the model's own counters.
  struct Guest {
    Time window_start = 0, window_end = 0;
    EventCounts window;
    std::uint64_t tick_expiries = 0, tick_stops = 0;  // over the whole run
    std::uint64_t sender_wakeups = 0, sends = 0;
  } guest;

  double seconds() const { return static_cast<double>(total.end - total.start) / 1e9; }
  double per_s(std::uint64_t n) const { return static_cast<double>(n) / seconds(); }
  double cpu_sys_pct() const;
  double mean_batch() const;
};

// The accepted range of each numeric setting, named as in SimConfigError
// ("flows", "packet-size", "duration", ...): declared here once, checked by
// validate() only. `ufq sim` quotes them when a word is not even a number.
struct SettingRange {
  enum class Kind : std::uint8_t { count, number, time, rate };
  std::string_view setting;
  Kind kind;
  double min, max;  // time: ns; rate: bit/s
  std::string describe() const;  // "1..10000000", "a time from 1ns to 3600s", ...
};
// The range of `setting`; throws std::out_of_range for one without a range.
const SettingRange& setting_range(std::string_view setting);

// Checks `cfg` (its traffic model's settings included) and throws
// SimConfigError naming the first setting out of its range. Its `expected`
// may name other settings in braces ("at least {queues}"). simulate() does
// the same first; a caller may check before it allocates anything else.
void validate(const SimConfig& cfg);

// Runs the whole simulation; deterministic for a given config (incl. seed).
// Throws SimConfigError (a std::invalid_argument) for an impossible
// configuration or an input the traffic model cannot use.
// `progress`, when set, is called with the simulated fraction done (0..1)
// about fifty times per run. `on_sample`, when set, sees every sample as it
// is taken and may fill in what the simulation cannot know deterministically
// (the process's memory, Sample::rss_kb).
SimResult simulate(const SimConfig& cfg, const std::function<void(double)>& progress = {},
                   const std::function<void(Sample&)>& on_sample = {});

}  // namespace ufq::sim
