// The seed's experiment, simulated. A packet's way: a traffic source enqueues
// it into the fq of its flow's transmit queue; that queue's CPU runs the qdisc
// (QdiscRunner) after enqueues, on NIC completion interrupts and on the fq
// watchdog's hrtimer; the runner hands packets to the NIC model; the NIC's
// completion interrupt gives them back to their source, which enqueues the
// next one (TCP small queues). Counters at every step feed the vmstat-like
// samples and the cost model.
//
// The simulation as a template over the scheduler implementation, so that the
// library instantiates it for ufq::FqScheduler (simulation.cpp) and ufq_sim_reference
// for the kernel-shaped reference (simulation_reference.cpp). Private to sim/src.
#pragma once

#include "ufq/sim/simulation.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>

#include "ufq/driver/qdisc_runner.hpp"
#include "guest_sender.hpp"
#include "nohz_tick.hpp"
#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hrtimer_model.hpp"
#include "ufq/sim/traffic.hpp"
#include "ufq/sim/watchdog_hrtimer.hpp"
#include "ufq/scheduler_concept.hpp"

namespace ufq::sim::detail {


template <class Sched>
class Simulation;

// One transmit queue and the CPU that serves it.
template <class Sched>
struct Cpu;

// The device the runner sees: the NIC, plus the departure measurement.
template <class Sched>
struct TxPort {
  NicModel* nic;
  Simulation<Sched>* sim;
  EventQueue* q;  // the CPU's (the NIC's) event queue
  std::uint32_t tx_room() const { return nic->tx_room(); }
  bool xmit(Packet& p, bool more);
};

using Flow = TrafficFlow;

// A packet's cookie: the flow's slot and that slot's generation.
inline std::uint64_t cookie_of(std::uint32_t slot, std::uint32_t generation) {
  return static_cast<std::uint64_t>(generation) << 32 | slot;
}
inline std::uint32_t slot_of(std::uint64_t cookie) { return static_cast<std::uint32_t>(cookie); }
inline std::uint32_t generation_of(std::uint64_t cookie) { return static_cast<std::uint32_t>(cookie >> 32); }

// churn: every flow's start or end, in a heap of their own behind one event,
// so that the event queue stays a few entries deep (a million flow events in
// it would make every packet's events walk a twenty-level heap).
class FlowTimers {
 public:
  template <class Fire>
  FlowTimers(EventQueue& q, Fire fire)
      : event_(q, [this, fire = std::move(fire)] {
          const Time now = event_.queue().now();
          while (!heap_.empty() && heap_.front().at <= now) {
            std::pop_heap(heap_.begin(), heap_.end(), later);
            const std::uint32_t slot = heap_.back().slot;
            heap_.pop_back();
            fire(slot);
          }
          if (!heap_.empty()) event_.queue().schedule(event_, heap_.front().at);
        }) {}

  void reserve(std::size_t n) { heap_.reserve(n); }

  void schedule(std::uint32_t slot, Time at) {
    heap_.push_back({at, seq_++, slot});
    std::push_heap(heap_.begin(), heap_.end(), later);
    if (!event_.armed() || at < event_.when()) event_.queue().schedule(event_, at);
  }

 private:
  struct Entry {
    Time at;
    std::uint64_t seq;  // ties run in the order they were scheduled
    std::uint32_t slot;
  };
  static bool later(const Entry& a, const Entry& b) { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }

  std::vector<Entry> heap_;
  std::uint64_t seq_ = 0;
  Event event_;
};

template <class Sched>
struct Cpu {
  Cpu(Simulation<Sched>& sim, EventQueue& queue, const SimConfig& cfg, std::uint32_t index);

  std::uint32_t index;
  // The queue this CPU's events run in: the simulation's, or one of its own
  // when the queues run apart (SimConfig::queues_apart).
  EventQueue& q;
  Sched fq;
  HrtimerModel hr;
  NicModel nic;
  TxPort<Sched> port;
  QdiscRunner<TxPort<Sched>, Sched> runner;
  WatchdogHrtimer wd;
  Event softirq;  // NET_TX: a qdisc run requested by the watchdog or a used-up quota
  // NET_TX raised by the watchdog when nothing else was due at that instant:
  // the run happens at the interrupt's exit instead of as an event of its own
  // (the same order, one event fewer; event_queue.hpp, maybe_due_now).
  bool softirq_at_irq_exit = false;
  Hrtimer tick;
  Time tick_period = 0;
  std::unique_ptr<NohzTick> nohz;  // the guest's idle tick (cfg.guest.nohz_idle), instead of `tick`
  Time busy_until = 0;             // the guest model: the CPU's softirq work runs until then
  Event softirq_more;              // the guest model: the same qdisc run, once that work is done
  // Qdisc runs: every one is a runner.run() call (run_qdisc), which the
  // runner counts.
  std::uint64_t qdisc_runs() const { return runner.stats().runs; }

  // The models' callbacks, as plain functions of the Cpu (Hook, Event::Fn):
  // no std::function call per packet or interrupt.
  static Cpu& of(void* self) { return *static_cast<Cpu*>(self); }
  static void completed(void* self, Packet& p) { of(self).port.sim->on_complete(of(self), p); }
  // The one out-of-line qdisc run, called by the hooks and events directly.
  [[gnu::noinline]] static void run_qdisc(void* self) { of(self).port.sim->run_qdisc_here(of(self)); }
  // Its fires are the adapter's count (WatchdogHrtimer::fires). No call
  // on the usual path, so no frame: the trace line's call is out of line.
  static void watchdog_fired(void* self) {
    Cpu& c = of(self);
    if (c.port.sim->tracing()) [[unlikely]]
      return watchdog_fired_traced(c);
    raise_net_tx(c);
  }
  [[gnu::noinline]] static void watchdog_fired_traced(Cpu& c) {
    c.port.sim->write_watchdog_line(c);
    raise_net_tx(c);
  }
  static void raise_net_tx(Cpu& c) {
    if (c.softirq.armed() || c.softirq_at_irq_exit) return;
    EventQueue& q = c.softirq.queue();
    if (q.maybe_due_now())
      q.schedule(c.softirq, q.now());
    else
      c.softirq_at_irq_exit = true;
  }
  static void ticked(void* self) {
    Cpu& c = of(self);
    c.hr.start(c.tick, c.tick.soft_expiry() + c.tick_period, c.tick.soft_expiry() + c.tick_period);
  }
  static void irq_exit(void* self) {
    Cpu& c = of(self);
    if (!c.softirq_at_irq_exit) return;
    c.softirq_at_irq_exit = false;
    c.port.sim->run_qdisc(c);
  }
};

template <class Sched>
class Simulation final : TrafficHost, GuestSender::Host {
 public:
  Simulation(const SimConfig& cfg, std::function<void(double)> progress,
             std::function<void(Sample&)> on_sample)
      : cfg_(cfg),
        rng_(cfg.seed),
        other_draws_(cfg.seed ^ 0x5DEECE66DULL, 1e9 / cfg.other_irq_per_s),
        sampler_(q_, [this] { catch_up(sampler_marks_), sample(); }),
        progress_(std::move(progress)),
        progress_event_(q_, [this] { catch_up(progress_marks_), report_progress(); }),
        on_sample_(std::move(on_sample)) {
    validate(cfg_);
    model_ = find_traffic_model(cfg_.traffic);
    if (model_->adjust) model_->adjust(cfg_);
    // The queues share nothing when the traffic's flows keep to their own and
    // nothing spans CPUs (the guest's one sender, the trace's one file, the
    // NOHZ tick's draws from the run's generator): docs/simulator.md,
    // "Queues apart".
    const bool apart = cfg_.queues_apart && cfg_.queues > 1 && model_->flows_apart && !model_->shared_wakes &&
                       !cfg_.guest.sender && !cfg_.guest.nohz_idle && cfg_.guest.event_trace.empty();
    for (std::uint32_t i = 0; i < cfg_.queues; ++i) {
      EventQueue* q = &q_;
      if (apart) q = cpu_queues_.emplace_back(std::make_unique<EventQueue>()).get();
      cpus_.push_back(std::make_unique<Cpu<Sched>>(*this, *q, cfg_, i));
    }
    make_flows();
    if (!cfg_.guest.event_trace.empty()) {
      trace_ = std::make_unique<std::ofstream>(cfg_.guest.event_trace);
      if (!*trace_) throw SimConfigError("event-trace", cfg_.guest.event_trace, "a file that can be written");
      for (auto& c : cpus_)
        if (c->nohz) c->nohz->set_on_expiry([this] { *trace_ << q_.now() << " tick\n"; });
    }
    if (cfg_.guest.sender) {
      GuestSender::Host& host = *this;
      sender_ = std::make_unique<GuestSender>(q_, cfg_.guest, rng_, host, cfg_.flows);
    }
    departure_extras_ = trace_ || sender_ || !classes_.empty() ? 1 : 0;
    for (auto& c : cpus_) guest_cpu_ = guest_cpu_ || c->nohz || sender_;
    plain_refill_ = !sender_ && !source_->own_packets();
  }

  SimResult run() {
    SimResult r;
    r.config = cfg_;
    if (cfg_.other_irq_per_s > 0) next_other_irq_ = other_draws_.next();
    schedule_global(sampler_, sampler_marks_, std::min(cfg_.interval, cfg_.duration));
    if (progress_) schedule_global(progress_event_, progress_marks_, std::max<Time>(cfg_.duration / 50, 1));
    last_sample_at_ = 0;
    if (sender_) start_guest();
    q_.run_until(cfg_.duration);
    for (auto& q : cpu_queues_) {  // the queues apart: their last stretch
      running_ = q.get();
      q->run_until(cfg_.duration);
    }
    running_ = &q_;
    if (last_sample_at_ < cfg_.duration) sample();  // a last, shorter period

    r.samples = samples_;
    r.total = Sample{};
    r.total.start = 0;
    r.total.end = cfg_.duration;
    for (const Sample& s : samples_) {
      r.total.n += s.n;
      r.total.busy += s.busy;
    }
    r.lateness = lateness_;
    r.classes = classes_;
    r.packets_offered = offered_;
    r.packets_dropped = dropped_;
    r.packets_sent = packets_sent();
    for (auto& c : cpus_) {
      const FqStats s = c->fq.stats(q_.now());
      add(r.qdisc, s);
      r.packets_queued += s.qlen + c->runner.held();
      r.reprograms += c->hr.stats().reprograms;
      const NicStats& n = c->nic.stats();
      r.nic.packets += n.packets;
      r.nic.bytes += n.bytes;
      r.nic.doorbells += n.doorbells;
      r.nic.interrupts += n.interrupts;
      r.nic.completions += n.completions;
      r.nic.ring_full += n.ring_full;
      const RunnerStats& rs = c->runner.stats();
      r.qdisc.requeues += rs.requeues;
      r.runs_sending += rs.runs_sending;
      for (std::size_t i = 1; i < rs.batch.size(); ++i) r.batch.add(i, rs.batch[i]);
    }
    r.qdisc.unthrottle_latency_ns = static_cast<std::uint32_t>(latency_sum_ / std::max<std::size_t>(cpus_.size(), 1));
    // Rate error over flows with a target and at least two departures.
    double max_err = 0, sum_err = 0;
    std::size_t measured = 0;
    for (const Flow& f : flows_) {
      if (f.target_pps <= 0 || f.sent < 2 || f.last <= f.first) continue;
      const double achieved = static_cast<double>(f.sent - 1) * 1e9 / static_cast<double>(f.last - f.first);
      const double err = std::fabs(achieved - f.target_pps) / f.target_pps;
      max_err = std::max(max_err, err);
      sum_err += err;
      ++measured;
    }
    r.flow_rate_error_max = max_err;
    r.flow_rate_error_mean = measured ? sum_err / static_cast<double>(measured) : 0;
    r.events = q_.events_run();
    for (const auto& q : cpu_queues_) r.events += q->events_run();
    r.queues_apart = !cpu_queues_.empty();
    r.flows_created = flows_created_;
    if (sender_ && !sender_->finished()) guest_window_end();  // still sending at the end
    r.guest = guest_;
    for (auto& c : cpus_)
      if (c->nohz) {
        r.guest.tick_expiries += c->nohz->expiries();
        r.guest.tick_stops += c->nohz->stops();
      }
    if (sender_) {
      r.guest.sender_wakeups = sender_->wakeups();
      r.guest.sends = sender_->sends();
    }
    return r;
  }

  // ------------------------------------------------------------ the guest model
  // A qdisc run that sent `sent` packets keeps the CPU busy for their cost;
  // with the guest's sender, the run goes on dequeuing at the time that cost
  // has taken, so flows that fell due meanwhile leave in the same run (and
  // the watchdog is re-armed later instead of firing).
  void guest_busy(Cpu<Sched>& c, std::uint32_t sent) {
    c.busy_until = std::max(c.busy_until, c.q.now()) + sent * cfg_.guest.softirq_cost;
    if (sender_ && cfg_.guest.softirq_cost && (!c.softirq_more.armed() || c.softirq_more.when() > c.busy_until))
      c.q.schedule(c.softirq_more, c.busy_until);
  }

  // The CPU is idle: no task runs and no softirq work is left.
  bool cpu_idle(const Cpu<Sched>& c) const {
    return !(sender_ && sender_->running()) && c.q.now() >= c.busy_until;
  }

  void start_guest() {
    const Time t0 = model_first_stamp() ? cfg_.guest.lead : 0;
    guest_.window_start = t0;
    if (t0 == 0) guest_window_start_ = snapshot();
    else q_.schedule(guest_window_event_, t0);
    // Rate-paced sockets stop at the end of the send period; EDT flows when
    // their next departure time is past it (send()).
    sender_->start(0, !model_first_stamp() && cfg_.guest.send_for ? cfg_.guest.send_for : kNever);
  }
  bool model_first_stamp() const { return !flows_.empty() && flows_[0].gap != 0; }

  void guest_window_end() {
    count_other_irqs(q_.now());
    guest_.window_end = q_.now();
    guest_.window = snapshot() - guest_window_start_;
  }

  // GuestSender::Host
  GuestSender::Send send(std::uint32_t slot) override {
    Flow& f = flows_[slot];
    if (f.gap && cfg_.guest.send_for && f.next_stamp >= cfg_.guest.lead + cfg_.guest.send_for)
      return GuestSender::Send::done;
    if (f.inflight >= cfg_.guest.sndbuf) return GuestSender::Send::full;
    Cpu<Sched>& c = *cpus_[f.queue];
    if (!enqueue_one(f, c)) return GuestSender::Send::sent;  // dropped: the send still counts (ENOBUFS)
    in_send_ = true;  // the qdisc runs in the sender's own send
    run_qdisc(c);
    in_send_ = false;
    return GuestSender::Send::sent;
  }
  // The event trace's watchdog line (cfg.guest.event_trace): the watchdog is
  // asked for only when tracing (an out-of-line call).
  bool tracing() const { return trace_ != nullptr; }
  [[gnu::noinline]] void write_watchdog_line(Cpu<Sched>& c) {
    const Watchdog& w = c.fq.watchdog();
    *trace_ << q_.now() << " wd " << w.soft_expiry() << ' ' << w.hard_expiry() << '\n';
  }
  void woke() override {
    if (trace_) *trace_ << q_.now() << " wake\n";
    for (auto& c : cpus_)
      if (c->nohz) c->nohz->task_runs();
  }
  void stopped() override { guest_window_end(); }

  // ------------------------------------------------------------ qdisc runs
  // One function for every caller (Cpu::run_qdisc), with the whole run
  // inlined (one frame).
  void run_qdisc(Cpu<Sched>& c) { Cpu<Sched>::run_qdisc(&c); }
  [[gnu::always_inline]] void run_qdisc_here(Cpu<Sched>& c) {
    const RunResult res = c.runner.run(c.q.now());
    if (guest_cpu_ && res.sent && (c.nohz || sender_)) [[unlikely]] guest_busy(c, res.sent);
    c.wd.sync();
    // A used-up quota re-raises NET_TX; a full ring waits for completions.
    if (res.end == RunEnd::quota && !c.softirq.armed()) c.q.schedule(c.softirq, c.q.now());
  }

  // A departure at `now` (the queue's now()).
  void on_departure(Packet& p, Time now) {
    Flow& f = flows_[slot_of(p.cookie)];
    if (f.sent == 0) f.first = now;
    f.last = now;
    ++f.sent;
    lateness_.add(now >= p.due ? now - p.due : 0);
    // One test per packet for the lateness classes and the guest model's two
    // (the flow's class is read only then: the record's second line).
    if (departure_extras_ != 0) [[unlikely]]
      departure_more(f, p, now);
  }
  [[gnu::noinline]] void departure_more(Flow& f, const Packet& p, Time now) {
    if (f.lateness_class) classes_[f.lateness_class - 1].lateness.add(now >= p.due ? now - p.due : 0);
    if (trace_) *trace_ << now << (in_send_ ? " xmit task\n" : " xmit softirq\n");
    // The guest's dummy device frees the datagram as it transmits it: the
    // socket's room comes back here, not at the completion.
    if (sender_ && --f.inflight <= cfg_.guest.wake_at) sender_->writable(f.slot);
  }

  // ------------------------------------------------------------ traffic
  void on_complete(Cpu<Sched>& c, Packet& p) {
    Flow& f = flows_[slot_of(p.cookie)];
    if (!plain_refill_ || generation_of(p.cookie) != f.generation || !f.on) [[unlikely]]
      return complete_other(c, f, p);
    // refill()'s first round, in p (the packet take_packet() would give back
    // first): the flow had at most its allowance in flight (refill), so with p
    // reclaimed it is below it, and a flow that is on sends its next packet
    // (enqueue_one() with a source that stamps: TrafficSource::stamp). In
    // flight -1 for p and +1 for its successor cancel out. p was set up for
    // this flow in this generation (its cookie says so) with this run's
    // packet size, and neither the scheduler, the runner nor the NIC writes a
    // caller field but the stamp (horizon_cap) and CE: only those are set.
    assert(p.len == cfg_.packet_size && p.segments == 1 && p.priority == 0 && !p.ect && p.owner == &f.owner &&
           p.hash == static_cast<std::uint32_t>(f.owner.id * 0x9E3779B1u));
    p.tstamp = TrafficSource::stamp(f, 0);
    p.ce = false;
    ++offered_;
    if (c.fq.enqueue(p, c.q.now()) != Verdict::queued) [[unlikely]]
      return refused(f, p);
    // The flow was below its allowance before p left (after a drop: none
    // before the run's first, so the in-flight count, in the record's second
    // line, is read only after one): top up.
    if (dropped_ != 0 && f.inflight < cfg_.inflight) [[unlikely]] refill_more(f);
  }
  // The general completion (out of line, as those below, so that on_complete
  // keeps fewer registers across its enqueue call): the guest's sender keeps
  // its own books (on_departure); an ended flow's packet goes back to the
  // pool; else the flow is topped up from the source (a trace's own packets,
  // a flow that is off).
  [[gnu::noinline]] void complete_other(Cpu<Sched>& c, Flow& f, Packet& p) {
    if (sender_ || generation_of(p.cookie) != f.generation) {
      free_[c.index].push_back(&p);
      return;
    }
    --f.inflight;
    refill(f, c, &p);  // p is the packet take_packet() would give back first
  }
  // `c` found again rather than kept across the call.
  [[gnu::noinline]] void refill_more(Flow& f) { refill(f, *cpus_[f.queue]); }
  // A packet fq refused: back to the pool.
  [[gnu::noinline]] void refused(Flow& f, Packet& p) {
    ++dropped_;
    --f.inflight;
    free_[f.queue].push_back(&p);
  }

  // A free packet for transmit queue `queue`. Each queue has its own free
  // list, first filled from one stretch of the pool per queue (make_flows()),
  // so that a queue's packets share cache lines with each other rather than
  // with other queues' (docs/simulator.md, "Speed"). The pool grows only when
  // churn leaves ended flows' packets in flight beside their successors'; a
  // deque keeps the packets fq holds in place.
  Packet* take_packet(std::uint32_t queue) {
    std::vector<Packet*>& free = free_[queue];
    if (free.empty()) return &packets_.emplace_back();
    Packet* p = free.back();
    free.pop_back();
    return p;
  }

  // Top the flow up to its in-flight allowance (TCP small queues: the next
  // packet is enqueued when an earlier one has left the NIC). `spare`: a free
  // packet to use first (else returned to the pool), as if taken from it.
  [[gnu::always_inline]] void refill(Flow& f, Cpu<Sched>& c, Packet* spare = nullptr) {
    while (f.on && f.inflight < cfg_.inflight)
      if (!enqueue_one(f, c, spare)) break;  // a source backs off after a drop
    if (spare) free_[c.index].push_back(spare);
  }

  // The flow's next packet into fq (`spare`, when set, is used and cleared
  // instead of a packet from the pool); false when the source has none or fq
  // refused it.
  [[gnu::always_inline]] bool enqueue_one(Flow& f, Cpu<Sched>& c, Packet*& spare) {
    Time tstamp = 0;
    std::uint32_t len = cfg_.packet_size;
    if (!source_->next(f, tstamp, len)) return false;
    Packet* p = spare ? spare : take_packet(c.index);
    spare = nullptr;
    set_up(*p, f, tstamp, len);
    ++offered_;
    if (c.fq.enqueue(*p, c.q.now()) != Verdict::queued) {
      ++dropped_;
      free_[c.index].push_back(p);
      return false;
    }
    ++f.inflight;
    return true;
  }
  // A packet of `f` for fq: only the caller's fields, since the scheduler sets
  // its own (and `due`) when it takes and releases the packet, so clearing all
  // 80 bytes is not needed.
  [[gnu::always_inline]] static void set_up(Packet& p, Flow& f, Time tstamp, std::uint32_t len) {
    static_assert(sizeof(Packet) == 80, "Packet changed: set any new caller field below");
    p.len = len;
    p.segments = 1;
    p.priority = 0;
    p.ect = false;
    p.hash = static_cast<std::uint32_t>(f.owner.id * 0x9E3779B1u);
    p.tstamp = tstamp;
    p.owner = &f.owner;
    p.cookie = cookie_of(f.slot, f.generation);
    p.ce = false;
  }
  bool enqueue_one(Flow& f, Cpu<Sched>& c) {
    Packet* none = nullptr;
    return enqueue_one(f, c, none);
  }

  // ------------------------------------------------------------ TrafficHost
  // The time of the queue whose event runs (the queues apart: that CPU's).
  Time now() const override { return running_->now(); }
  Rng& rng() override { return rng_; }
  const SimConfig& config() const override { return cfg_; }

  void wake_at(Flow& f, Time at) override {
    if (model_->shared_wakes)
      flow_timers_.schedule(f.slot, at);
    else
      wakes_[f.slot]->queue().schedule(*wakes_[f.slot], at);
  }

  void start(Flow& f) override {
    ++flows_created_;
    Cpu<Sched>& c = *cpus_[f.queue];
    refill(f, c);
    run_qdisc(c);
    source_->started(f, *this);
  }

  void resume(Flow& f) override {
    Cpu<Sched>& c = *cpus_[f.queue];
    refill(f, c);
    run_qdisc(c);
  }

  void renew(Flow& f) override {
    ++f.generation;
    f.owner.id = next_flow_id_++;
    f.inflight = 0;
    f.queue = static_cast<std::uint32_t>(rng_.below(cfg_.queues));
  }

  // A flow's wake: the first starts it, every later one is the model's.
  void woken(Flow& f) {
    if (!started(f)) {
      mark_started(f);
      start(f);
    } else {
      source_->wake(f, *this);
    }
  }

  // ------------------------------------------------------------ queues apart
  // The sampler and the progress report are the simulation's own events: a
  // CPU's event at the same time runs before one of them exactly when it was
  // armed first, that is with a sequence number below the one its CPU's queue
  // would have given at that moment (`marks`, one per CPU queue). No CPU's
  // event arms them, and they arm none of a CPU's, so each CPU can run on its
  // own up to them.
  void schedule_global(Event& e, std::vector<std::uint64_t>& marks, Time at) {
    marks.resize(cpu_queues_.size());
    for (std::size_t i = 0; i < cpu_queues_.size(); ++i) marks[i] = cpu_queues_[i]->next_seq();
    q_.schedule(e, at);
  }
  // Before a global event at now(): every CPU's events that come before it.
  void catch_up(const std::vector<std::uint64_t>& marks) {
    for (std::size_t i = 0; i < cpu_queues_.size(); ++i) {
      running_ = cpu_queues_[i].get();
      cpu_queues_[i]->run_before(q_.now(), marks[i]);
    }
    running_ = &q_;
  }

  void report_progress() {
    progress_(static_cast<double>(q_.now()) / static_cast<double>(cfg_.duration));
    const Time next = q_.now() + std::max<Time>(cfg_.duration / 50, 1);
    if (next < cfg_.duration) schedule_global(progress_event_, progress_marks_, next);
  }

  // Other interrupts interact with nothing modelled, so instead of an event
  // each, their Poisson arrivals up to `now` are counted when sampling.
  void count_other_irqs(Time now) {
    if (!(cfg_.other_irq_per_s > 0)) return;
    other_irqs_ += other_draws_.arrivals_until(next_other_irq_, now);
  }

  // ------------------------------------------------------------ sampling
  // Departures: every one is an xmit the NIC accepted (TxPort::xmit), which
  // the NIC counts (completions + descriptors in the ring), so none is
  // counted per packet.
  std::uint64_t packets_sent() const {
    std::uint64_t n = 0;
    for (const auto& cpu : cpus_) n += cpu->nic.stats().packets;
    return n;
  }
  EventCounts snapshot() const {
    EventCounts c;
    c.other_interrupts = other_irqs_;
    for (const auto& cpu : cpus_) {
      c.packets += cpu->nic.stats().packets;
      const HrtimerStats& h = cpu->hr.stats();
      c.timer_interrupts += h.interrupts;
      c.timers_run += h.timers_run;
      c.device_writes += h.reprograms + h.device_stops;
      c.nic_interrupts += cpu->nic.stats().interrupts;
      c.completions += cpu->nic.stats().completions;
      c.doorbells += cpu->nic.stats().doorbells;
      c.watchdog_fires += cpu->wd.fires();
      c.qdisc_runs += cpu->qdisc_runs();
    }
    return c;
  }

  void sample() {
    const Time now = q_.now();
    count_other_irqs(now);
    const EventCounts cur = snapshot();
    Sample s;
    s.start = last_sample_at_;
    s.end = now;
    s.n = cur - prev_;
    s.busy = cpu_time(s.n, cfg_.cost);
    latency_sum_ = 0;
    FlowCensus& k = s.census;
    for (const auto& c : cpus_) {
      const FqStats st = c->fq.stats(now);
      latency_sum_ += st.unthrottle_latency_ns;
      k.flows += st.flows;
      k.inactive += st.inactive_flows;
      k.throttled += st.throttled_flows;
      k.gc_flows += st.gc_flows;
      k.offered += st.offered;
      k.dequeued += st.dequeued;
      k.drops += st.drops;
      k.purged += st.purged;
      k.qlen += st.qlen;
    }
    k.created = flows_created_;
    if (on_sample_) on_sample_(s);
    samples_.push_back(s);
    prev_ = cur;
    last_sample_at_ = now;
    const Time next = now + cfg_.interval;
    if (next <= cfg_.duration && now < cfg_.duration) schedule_global(sampler_, sampler_marks_, next);
  }

  static void add(FqStats& a, const FqStats& b) {
    a.bytes += b.bytes;
    a.packets += b.packets;
    a.drops += b.drops;
    a.overlimits += b.overlimits;
    a.requeues += b.requeues;
    a.backlog += b.backlog;
    a.qlen += b.qlen;
    a.gc_flows += b.gc_flows;
    a.highprio_packets += b.highprio_packets;
    a.tcp_retrans += b.tcp_retrans;
    a.throttled += b.throttled;
    a.flows_plimit += b.flows_plimit;
    a.pkts_too_long += b.pkts_too_long;
    a.allocation_errors += b.allocation_errors;
    a.flows += b.flows;
    a.inactive_flows += b.inactive_flows;
    a.throttled_flows += b.throttled_flows;
    a.ce_mark += b.ce_mark;
    a.horizon_drops += b.horizon_drops;
    a.horizon_caps += b.horizon_caps;
    a.fastpath_packets += b.fastpath_packets;
    for (std::size_t i = 0; i < kBands; ++i) {
      a.band_drops[i] += b.band_drops[i];
      a.band_pkt_count[i] += b.band_pkt_count[i];
    }
    a.offered += b.offered;
    a.dequeued += b.dequeued;
    a.trimmed += b.trimmed;
    a.purged += b.purged;
    // The earliest next wake-up over the queues (negative when none is throttled).
    if (b.time_next_delayed_flow > 0 &&
        (a.time_next_delayed_flow <= 0 || b.time_next_delayed_flow < a.time_next_delayed_flow))
      a.time_next_delayed_flow = b.time_next_delayed_flow;
    else if (a.time_next_delayed_flow == 0)
      a.time_next_delayed_flow = b.time_next_delayed_flow;
  }


 private:
  void make_flows() {
    source_ = model_->make(cfg_, cfg_.traffic_settings);
    cfg_.flows = source_->flows(cfg_);
    flows_.resize(cfg_.flows);
    if (model_->shared_wakes)
      flow_timers_.reserve(cfg_.flows);
    else
      wakes_.reserve(cfg_.flows);
    for (std::uint32_t i = 0; i < cfg_.flows; ++i) {
      Flow& f = flows_[i];
      f.slot = i;
      f.owner.id = i + 1;
      f.owner.kind = FlowOwner::Kind::connected;
      f.queue = static_cast<std::uint32_t>(rng_.below(cfg_.queues));
      const Time start_at = source_->init(f, *this);
      if (cfg_.guest.sender) {
        // The harness's sender: EDT phases spread evenly over one gap from
        // the first departure time; it starts every flow itself.
        if (f.gap) f.next_stamp = cfg_.guest.lead + f.gap * i / cfg_.flows + 1;
        continue;
      }
      if (model_->shared_wakes) {
        if (start_at != kNever) flow_timers_.schedule(i, start_at);
        continue;
      }
      wakes_.push_back(std::make_unique<Event>(cpus_[f.queue]->q, [this, &f] { woken(f); }));
      if (start_at != kNever) wakes_.back()->queue().schedule(*wakes_.back(), start_at);
    }
    for (const LatenessClass& k : source_->lateness_classes()) classes_.push_back(ClassLateness{k.name, k.gap, 0, {}});
    for (const Flow& f : flows_)
      if (f.lateness_class && f.lateness_class <= classes_.size()) ++classes_[f.lateness_class - 1].flows;
    // The pool: each queue's flows' allowance, queue after queue, each free
    // list giving its packets in address order.
    const std::size_t per_flow = cfg_.guest.sender ? cfg_.guest.sndbuf : cfg_.inflight;
    std::vector<std::size_t> per_queue(cfg_.queues, 0);
    for (const Flow& f : flows_) per_queue[f.queue] += per_flow;
    pool_ = std::vector<Packet>(static_cast<std::size_t>(cfg_.flows) * per_flow);
    free_.resize(cfg_.queues);
    Packet* next = pool_.data();
    for (std::uint32_t q = 0; q < cfg_.queues; ++q) {
      free_[q].reserve(per_queue[q]);
      next += per_queue[q];
      for (std::size_t k = 0; k < per_queue[q]; ++k) free_[q].push_back(next - 1 - k);
    }
    started_.assign(cfg_.flows, false);
    next_flow_id_ = static_cast<std::uint64_t>(cfg_.flows) + 1;
  }

  bool started(const Flow& f) const { return started_[static_cast<std::size_t>(&f - flows_.data())]; }
  void mark_started(const Flow& f) { started_[static_cast<std::size_t>(&f - flows_.data())] = true; }

  SimConfig cfg_;
  EventQueue q_;
  // The CPUs' own queues when they run apart (empty otherwise), before every
  // event that lives in them (the CPUs, the flows' wakes).
  std::vector<std::unique_ptr<EventQueue>> cpu_queues_;
  EventQueue* running_ = &q_;  // the queue whose event runs (now())
  std::vector<std::uint64_t> sampler_marks_, progress_marks_;  // schedule_global()
  Rng rng_;
  std::vector<std::unique_ptr<Cpu<Sched>>> cpus_;
  const TrafficModelInfo* model_ = nullptr;
  std::unique_ptr<TrafficSource> source_;
  std::vector<Flow> flows_;
  std::vector<std::unique_ptr<Event>> wakes_;  // per flow, unless the model's wakes are shared
  std::vector<bool> started_;
  std::vector<Packet> pool_;      // the packets the flows' allowance needs (make_flows())
  std::deque<Packet> packets_;    // more, when churn needs them (take_packet())
  std::vector<std::vector<Packet*>> free_;  // per transmit queue
  ExponentialDraws other_draws_;  // the other interrupts' gaps: Rng(seed).exponential(1e9 / rate)
  Time next_other_irq_ = kNever;
  Event sampler_;
  // The flows' wakes when the model shares them (churn).
  FlowTimers flow_timers_{q_, [this](std::uint32_t slot) { woken(flows_[slot]); }};
  std::uint64_t other_irqs_ = 0;
  std::uint64_t offered_ = 0, dropped_ = 0;
  Histogram lateness_;
  std::vector<ClassLateness> classes_;  // the traffic model's lateness classes
  EventCounts prev_;
  Time last_sample_at_ = 0;
  std::uint64_t latency_sum_ = 0;
  std::vector<Sample> samples_;
  std::function<void(double)> progress_;
  Event progress_event_;
  std::function<void(Sample&)> on_sample_;
  std::uint64_t flows_created_ = 0;
  std::uint64_t next_flow_id_ = 1;  // churn: the next never-used flow key
  std::unique_ptr<GuestSender> sender_;  // cfg.guest.sender
  std::unique_ptr<std::ofstream> trace_;  // cfg.guest.event_trace
  bool in_send_ = false;                  // a qdisc run inside the guest sender's send
  std::uint32_t departure_extras_ = 0;    // trace_, sender_ or lateness classes (1): on_departure has more to do
  bool guest_cpu_ = false;               // a CPU with the guest's idle tick, or sender_: run_qdisc's guest_busy
  bool plain_refill_ = false;             // no sender_, a source that stamps: on_complete's own refill
  SimResult::Guest guest_;
  EventCounts guest_window_start_;
  Event guest_window_event_{q_, [this] { guest_window_start_ = (count_other_irqs(q_.now()), snapshot()); }};
};

template <class Sched>
bool TxPort<Sched>::xmit(Packet& p, bool more) {
  const Time now = q->now();  // the NIC's
  if (!nic->xmit(p, more, now)) return false;
  sim->on_departure(p, now);
  return true;
}

template <class Sched>
Cpu<Sched>::Cpu(Simulation<Sched>& sim, EventQueue& queue, const SimConfig& cfg, std::uint32_t i)
    : index(i),
      q(queue),
      fq(cfg.fq),
      hr(queue, HrtimerConfig{cfg.irq_latency, cfg.cost.timer_interrupt, cfg.cost.reprogram}),
      nic(queue, cfg.nic, NicModel::CompleteFn(&Cpu::completed, this), NicModel::PollDoneFn(&Cpu::run_qdisc, this)),
      port{&nic, &sim, &queue},
      runner(fq, port),
      wd(fq.watchdog(), hr, WatchdogHrtimer::FireCallback(&Cpu::watchdog_fired, this)),
      softirq(queue, &Cpu::run_qdisc, this),
      tick(hr, Hrtimer::Callback(&Cpu::ticked, this)),
      softirq_more(queue, &Cpu::run_qdisc, this) {
  if (cfg.tick_hz) {
    tick_period = kNsecPerSec / cfg.tick_hz;
    // Ticks of different CPUs are staggered across the period.
    const Time first = tick_period * (i + 1) / (cfg.queues + 1);
    if (cfg.guest.nohz_idle)
      nohz = std::make_unique<NohzTick>(hr, tick_period, first, cfg.guest.wheel_timers_per_s, sim.rng(),
                                        [&sim, this] { return sim.cpu_idle(*this); });
    else
      hr.start(tick, first, first);
  }
  hr.set_irq_exit(Hook<>(&Cpu::irq_exit, this));
}

}  // namespace ufq::sim::detail
