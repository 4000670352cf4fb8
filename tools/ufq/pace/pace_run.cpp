#include "pace/pace_run.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "ufq/rt/clock.hpp"
#include "pace/blast.hpp"
#include "pace/netns.hpp"
#include "pace/packet_pool.hpp"
#include "pace/receiver.hpp"
#include "ufq/rt/sink_egress.hpp"
#include "ufq/rt/udp_egress.hpp"
#include "pace/wire.hpp"

namespace ufq::rt {

const char* to_string(EgressKind k) {
  switch (k) {
    case EgressKind::udp_shared: return "shared";
    case EgressKind::udp_per_flow: return "per-flow";
    case EgressKind::sink: return "sink";
  }
  return "?";
}

std::optional<EgressKind> parse_egress_kind(std::string_view name) {
  for (EgressKind k : {EgressKind::udp_shared, EgressKind::udp_per_flow, EgressKind::sink})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

namespace {

void sleep_until(Time t) {
  const timespec ts = to_timespec(t);
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

struct Departures {
  std::uint64_t n = 0;
  Time first = 0, last = 0, first_intended = 0, last_intended = 0;
};

// |actual span / intended span - 1| over a flow's first and last packet.
double rate_error(Time first, Time last, Time first_intended, Time last_intended) {
  if (last_intended <= first_intended) return 0.0;
  const double actual = static_cast<double>(last) - static_cast<double>(first);
  const double intended = static_cast<double>(last_intended - first_intended);
  return std::fabs(actual / intended - 1.0);
}

// One connected socket per flow (--egress per-flow), closed at the end.
struct FlowSockets {
  std::vector<int> fds;
  FlowSockets() = default;
  FlowSockets(const FlowSockets&) = delete;
  FlowSockets& operator=(const FlowSockets&) = delete;
  ~FlowSockets() {
    for (int fd : fds) ::close(fd);
  }
  void open(const Address& dest, std::uint32_t flows) {
    fds.reserve(flows);
    for (std::uint32_t i = 0; i < flows; ++i) {
      const int fd = ::socket(dest.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
      if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
      fds.push_back(fd);
      int buf = 4 << 20;
      if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0)
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
      if (::connect(fd, dest.sockaddr_ptr(), dest.length()) != 0)
        throw std::system_error(errno, std::generic_category(), "connect " + dest.to_string());
    }
  }
};

// The blast run (PaceOptions::blast) once the receiver and egress exist:
// rate x duration packets, unpaced, then the same report fields as a paced
// run where they have a meaning (no lateness: nothing was meant to wait).
PaceReport finish_blast(const PaceOptions& opt, PaceReport& rep, PacketPool& pool, Egress& egress,
                        UdpReceiver* rx, const std::vector<int>& fds, const Address& dest) {
  rep.timer = "blast";
  WorkloadConfig wc = opt.workload;
  wc.dest = dest;
  wc.flow_fds = fds;
  const auto packets = static_cast<std::uint64_t>(
      opt.workload.rate_pps * static_cast<double>(opt.duration_ns) / 1e9);
  if (rx) rx->start();
  const auto before = read_proc_sample().value_or(ProcSample{});
  const BlastResult b = run_blast_packets(wc, pool, egress, packets, opt.pacer_cpu);
  const auto after = read_proc_sample().value_or(ProcSample{});
  if (rx) {
    const Time give_up = mono_now() + opt.receive_wait_ns;
    while (rx->packets_approx() < b.sent && mono_now() < give_up)
      sleep_until(mono_now() + 5 * kNsecPerMsec);
    rx->stop();
  }
  const ProcRates sys = rates_between(before, after);
  rep.system = sys;
  rep.seconds = sys.seconds;
  const double secs = sys.seconds > 0 ? sys.seconds : 1.0;
  const auto sent = static_cast<double>(b.sent);
  rep.pps = b.last > b.first ? sent / (static_cast<double>(b.last - b.first) / 1e9) : sent / secs;
  rep.pacer_cpu_pct = 100.0 * static_cast<double>(b.thread_cpu_ns) / 1e9 / secs;
  rep.cpu_pct = rep.pacer_cpu_pct;
  rep.receiver_cpu_pct = rx ? 100.0 * static_cast<double>(rx->thread_cpu_ns()) / 1e9 / secs : 0.0;
  rep.process_cpu_pct = sys.process_cpu_pct;
  if (b.sent > 0) {
    rep.pacer_ns_per_packet = static_cast<double>(b.thread_cpu_ns) / sent;
    rep.sender_ns_per_packet = rep.pacer_ns_per_packet;
    rep.sender_softirq_ns_per_packet =
        rep.sender_ns_per_packet + sys.ksoftirqd_cpu_pct / 100.0 * secs * 1e9 / sent;
  }
  rep.packets_generated = packets;
  rep.packets_sent = b.sent;
  rep.fates[static_cast<std::size_t>(PacketFate::sent)] = b.sent;
  rep.fates[static_cast<std::size_t>(PacketFate::failed)] = b.accounting.failed.total();
  rep.accounting = b.accounting;
  rep.pacer.egress = egress.stats();
  if (rx) {
    rep.packets_received = rx->totals().packets;
    rep.packets_lost = rep.packets_sent > rep.packets_received ? rep.packets_sent - rep.packets_received : 0;
    rep.packets_extra = rep.packets_received > rep.packets_sent ? rep.packets_received - rep.packets_sent : 0;
    rep.transit = rx->transit();
    rep.gaps = rx->gaps();
  }
  return rep;
}

}  // namespace

PaceReport run_pace(const PaceOptions& opt) {
  PaceReport rep;
  rep.label = opt.label;
  rep.fq = opt.fq;
  rep.workload = opt.workload;
  if (auto err = validate(opt.fq)) throw *err;
  if (opt.workload.payload < 1 || opt.workload.payload > 65000)
    throw std::invalid_argument("packet size must be 1..65000 bytes");
  const std::uint32_t flows = opt.workload.flows;

  std::unique_ptr<NetnsPair> ns;
  if (opt.netns && opt.egress != EgressKind::sink) ns = std::make_unique<NetnsPair>();

  if (opt.dest && opt.netns) throw std::invalid_argument("--dest and --netns exclude each other");
  if (opt.dest && opt.dest->empty()) throw std::invalid_argument("--dest: no address");

  // The receiver first: the egress needs its address. An external one
  // (--dest) is the user's: nothing is started.
  std::unique_ptr<UdpReceiver> rx;
  Address dest;
  if (opt.egress != EgressKind::sink && opt.dest) {
    dest = *opt.dest;
    rep.path = "to " + dest.to_string() + " (external receiver: send-side figures only)";
  } else if (opt.egress != EgressKind::sink) {
    ReceiverConfig rc;
    rc.bind.sin_family = AF_INET;
    rc.bind.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ns) rc.bind.sin_addr = ns->receiver_addr();
    rc.flows = flows;
    rc.cpu = opt.helper_cpu;
    rc.nice = opt.pacer_nice;  // the far end stands for another host: same priority
    if (ns)
      ns->in_receiver([&] { rx = std::make_unique<UdpReceiver>(rc); });
    else
      rx = std::make_unique<UdpReceiver>(rc);
    const sockaddr_in a = rx->local_address();
    dest = Address::from(reinterpret_cast<const sockaddr*>(&a), sizeof(a));
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof(buf));
    rep.path = (ns ? "veth " + ns->sender_ns() + " -> " + ns->receiver_ns() + " " : "loopback ") +
               buf + ":" + std::to_string(ntohs(a.sin_port));
  } else {
    rep.path = "none (sink)";
  }
  rep.receiver = rx != nullptr;

  const std::uint32_t nq = opt.queues;
  if (nq == 0 || nq > MultiQueuePacer::kMaxQueues)
    throw std::invalid_argument("queues must be 1.." + std::to_string(MultiQueuePacer::kMaxQueues));
  // Flows by queue: the default steering (the hash of the owner, whose id
  // is flow + 1).
  std::vector<std::vector<std::uint32_t>> flows_of(nq);
  std::vector<std::uint32_t> local(flows);  // flow -> index within its queue
  for (std::uint32_t f = 0; f < flows; ++f) {
    auto& v = flows_of[MultiQueuePacer::hash_queue(std::uint64_t{f} + 1, nq)];
    local[f] = static_cast<std::uint32_t>(v.size());
    v.push_back(f);
  }

  // Everything a queue owns, written by its producer and pacer threads only.
  struct QueueState {
    std::unique_ptr<PacketPool> pool;
    std::unique_ptr<Egress> egress;
    std::vector<Departures> dep;  // per flow of the queue
    Histogram lateness;
  };
  std::vector<QueueState> qs(nq);

  // Packets: enough for the lead time plus generous slack for stalls, per
  // queue in proportion to its flows.
  const double in_flight =
      opt.workload.rate_pps * (static_cast<double>(opt.workload.lead_ns) / 1e9 + 0.1);
  FlowSockets sockets;
  for (std::uint32_t q = 0; q < nq; ++q) {
    const double share = static_cast<double>(flows_of[q].size()) / static_cast<double>(flows);
    const auto pool_size = static_cast<std::uint32_t>(std::min(4e6, in_flight * share + 4096.0));
    // Each pooled datagram has its own payload buffer (the sink sends nothing).
    qs[q].pool = std::make_unique<PacketPool>(pool_size, opt.egress == EgressKind::sink ? 0 : opt.workload.payload);
    qs[q].dep.resize(flows_of[q].size());
  }

  // One egress per queue, each with its own socket(s).
  for (std::uint32_t q = 0; q < nq; ++q) {
    if (opt.egress == EgressKind::sink) {
      qs[q].egress = std::make_unique<SinkEgress>();
    } else {
      UdpEgressConfig ec;
      ec.gso = opt.gso;
      ec.send = opt.sendmmsg;
      auto open = [&] {
        qs[q].egress = std::make_unique<UdpEgress>(ec);
        if (q == 0 && opt.egress == EgressKind::udp_per_flow) sockets.open(dest, flows);
      };
      if (ns)
        ns->in_sender(open);
      else
        open();
    }
  }
  rep.egress = qs[0].egress->describe();
  if (opt.egress == EgressKind::udp_per_flow) rep.egress += ", per-flow connected sockets";
  if (nq > 1) rep.egress += ", one per queue";

  if (opt.blast) {
    if (nq != 1) throw std::invalid_argument("--timer blast sends from one thread: it excludes --queues above 1");
    return finish_blast(opt, rep, *qs[0].pool, *qs[0].egress, rx.get(), sockets.fds, dest);
  }

  // Timer latency of this machine with the chosen slack.
  if (opt.probe_timer) {
    const TimerKind probe_kind =
        opt.sleeper.kind == TimerKind::timerfd ? TimerKind::timerfd : TimerKind::nanosleep;
    rep.timer_latency = measure_timer_latency(probe_kind, opt.fq.timer_slack_ns, opt.probe_samples);
    if (opt.on_probe) opt.on_probe(*rep.timer_latency);
  }

  // What happens to each packet (the queue's pacer thread while running).
  MultiQueueDone done = [&](std::uint32_t q, Packet& p, PacketFate fate, Time when) {
    QueueState& st = qs[q];
    if (fate == PacketFate::sent) {
      const PacketMeta& m = st.pool->meta(p);
      st.lateness.add_signed(static_cast<std::int64_t>(when - m.intended));
      Departures& d = st.dep[local[m.flow]];
      if (d.n++ == 0) {
        d.first = when;
        d.first_intended = m.intended;
      }
      d.last = when;
      d.last_intended = m.intended;
    }
    st.pool->release(p);
  };

  const int ncpu = cpu_count();
  auto queue_cpu = [&](std::uint32_t q) {
    if (opt.pacer_cpu < 0) return -1;
    return nq == 1 ? opt.pacer_cpu : static_cast<int>(q % static_cast<std::uint32_t>(ncpu > 0 ? ncpu : 1));
  };
  MultiQueueConfig mc;
  mc.queues = nq;
  mc.pacer.fq = opt.fq;
  mc.pacer.sleeper = opt.sleeper;
  mc.pacer.nice = opt.pacer_nice;
  mc.pacer.ring_capacity = opt.ring_capacity;
  for (std::uint32_t q = 0; q < nq; ++q) mc.cpus.push_back(queue_cpu(q));
  std::vector<Egress*> egress_ptrs;
  for (auto& st : qs) egress_ptrs.push_back(st.egress.get());
  MultiQueuePacer mq(mc, egress_ptrs, done);
  rep.timer = to_string(mq.queue(0).timer());

  std::vector<std::unique_ptr<FlowGenerator>> gens(nq);
  for (std::uint32_t q = 0; q < nq; ++q) {
    WorkloadConfig wc = opt.workload;
    if (wc.cpu < 0) wc.cpu = nq == 1 ? opt.helper_cpu : queue_cpu(q);
    wc.dest = dest;
    wc.flow_fds = sockets.fds;
    wc.flows_of = flows_of[q];
    wc.queue = q;
    if (wc.flows_of.empty()) continue;  // no flow hashed to this queue
    gens[q] = std::make_unique<FlowGenerator>(wc, *qs[q].pool, mq);
    rep.period_ns = gens[q]->period_ns();
  }
  auto generators = [&](auto&& fn) {
    for (auto& g : gens)
      if (g) fn(*g);
  };
  auto workload_counters = [&] {
    WorkloadCounters t;
    generators([&](FlowGenerator& g) {
      const WorkloadCounters c = g.counters();
      t.generated += c.generated;
      t.pool_empty += c.pool_empty;
      t.ring_full += c.ring_full;
      t.late_handover += c.late_handover;
      t.held_at_exit += c.held_at_exit;
    });
    return t;
  };
  auto all_finished = [&] {
    bool all = true;
    generators([&](FlowGenerator& g) { all = all && g.finished(); });
    return all;
  };

  const Time t_start = mono_now() + 20 * kNsecPerMsec;
  const Time t_end = t_start + opt.duration_ns;
  if (rx) rx->start();
  mq.start();
  generators([&](FlowGenerator& g) { g.start(t_start, t_end); });

  auto sample = [&] {
    struct S {
      ProcSample proc;
      PacerCounters pacer;
      WorkloadCounters producer;
    };
    S s{read_proc_sample().value_or(ProcSample{}), mq.counters().total, workload_counters()};
    return s;
  };
  sleep_until(t_start);
  const MultiQueueCounters base_q = mq.counters();
  const auto base = sample();
  auto prev = base;
  Time next_tick = t_start + opt.interval_ns;
  for (;;) {
    if (opt.stop && opt.stop->load(std::memory_order_relaxed)) {
      rep.stopped_by_signal = true;
      break;
    }
    const Time now = mono_now();
    if (now >= t_end) break;
    if (now >= next_tick) {
      const auto cur = sample();
      IntervalReport ir;
      ir.t_s = static_cast<double>(cur.proc.at - t_start) / 1e9;
      ir.system = rates_between(prev.proc, cur.proc);
      const double secs = ir.system.seconds > 0 ? ir.system.seconds : 1.0;
      const auto dw = static_cast<double>(cur.pacer.wakeups - prev.pacer.wakeups);
      const auto ds = static_cast<double>(cur.pacer.sent - prev.pacer.sent);
      ir.wakeups_per_s = dw / secs;
      ir.pps = ds / secs;
      ir.packets_per_wakeup = dw > 0 ? ds / dw : 0.0;
      ir.pacer_cpu_pct =
          100.0 * static_cast<double>(cur.pacer.thread_cpu_ns - prev.pacer.thread_cpu_ns) / 1e9 / secs;
      ir.ring_full = cur.producer.ring_full - prev.producer.ring_full;
      ir.pool_empty = cur.producer.pool_empty - prev.producer.pool_empty;
      rep.intervals.push_back(ir);
      if (opt.on_interval) opt.on_interval(ir);
      prev = cur;
      next_tick += opt.interval_ns;
      continue;
    }
    sleep_until(std::min({now + 50 * kNsecPerMsec, next_tick, t_end}));
  }
  const auto fin = sample();
  const MultiQueueCounters fin_q = mq.counters();  // per queue, over the same span

  // Wind down: no more packets, send what is queued (bounded), let the
  // receiver read what is in flight.
  if (!rep.stopped_by_signal) {
    // Let a stalled producer hand over the last departures (bounded).
    const Time give_up = mono_now() + opt.drain_ns + kNsecPerSec;
    while (!all_finished() && mono_now() < give_up) sleep_until(mono_now() + kNsecPerMsec);
  }
  generators([](FlowGenerator& g) { g.stop(); });
  mq.stop(opt.drain_ns);
  const PacerResult& pr = mq.result().total;
  if (rx) {
    const Time give_up = mono_now() + opt.receive_wait_ns;
    while (rx->packets_approx() < pr.counters.sent && mono_now() < give_up)
      sleep_until(mono_now() + 5 * kNsecPerMsec);
    rx->stop();
  }

  // Rates over the measured span.
  const ProcRates sys = rates_between(base.proc, fin.proc);
  rep.system = sys;
  rep.seconds = sys.seconds;
  const double secs = sys.seconds > 0 ? sys.seconds : 1.0;
  const auto wake = static_cast<double>(fin.pacer.wakeups - base.pacer.wakeups);
  const auto sent = static_cast<double>(fin.pacer.sent - base.pacer.sent);
  rep.pps = sent / secs;
  rep.wakeups_per_s = wake / secs;
  rep.packets_per_wakeup = wake > 0 ? sent / wake : 0.0;
  rep.pacer_cpu_pct =
      100.0 * static_cast<double>(fin.pacer.thread_cpu_ns - base.pacer.thread_cpu_ns) / 1e9 / secs;
  const double life = static_cast<double>(opt.duration_ns) / 1e9;
  std::uint64_t producer_cpu = 0;
  generators([&](FlowGenerator& g) { producer_cpu += g.thread_cpu_ns(); });
  rep.producer_cpu_pct = 100.0 * static_cast<double>(producer_cpu) / 1e9 / life;
  rep.receiver_cpu_pct = rx ? 100.0 * static_cast<double>(rx->thread_cpu_ns()) / 1e9 / life : 0.0;
  rep.cpu_pct = rep.pacer_cpu_pct + rep.producer_cpu_pct;
  rep.process_cpu_pct = sys.process_cpu_pct;
  if (sent > 0) {
    const double pacer_ns = static_cast<double>(fin.pacer.thread_cpu_ns - base.pacer.thread_cpu_ns);
    rep.pacer_ns_per_packet = pacer_ns / sent;
    // The producer's CPU is known over its life only: scale it to the span.
    const double producer_ns = static_cast<double>(producer_cpu) * secs / life;
    rep.sender_ns_per_packet = (pacer_ns + producer_ns) / sent;
    rep.sender_softirq_ns_per_packet =
        rep.sender_ns_per_packet + sys.ksoftirqd_cpu_pct / 100.0 * secs * 1e9 / sent;
  }

  // Accounting.
  rep.pacer = pr;
  rep.fq_stats = pr.fq;
  rep.fates = pr.fates;
  const WorkloadCounters wcnt = workload_counters();
  rep.packets_generated = wcnt.generated;
  rep.pool_empty = wcnt.pool_empty;
  rep.ring_full = wcnt.ring_full;
  rep.late_handover = wcnt.late_handover;
  rep.packets_sent = pr.fates[static_cast<std::size_t>(PacketFate::sent)];
  rep.unsent_at_exit = pr.fates[static_cast<std::size_t>(PacketFate::unsent)];
  // The producer's count against the pacer's fates: a packet lost between
  // the two would unbalance it.
  rep.accounting = pr.accounting;
  rep.accounting.produced = wcnt.generated + wcnt.held_at_exit;
  rep.accounting.unsent_producer = wcnt.held_at_exit;
  for (const QueueState& st : qs) rep.lateness.merge(st.lateness);

  // Per-flow rates: from arrivals when there is a receiver, else departures.
  auto departures = [&](std::uint32_t f) -> const Departures& {
    return qs[MultiQueuePacer::hash_queue(std::uint64_t{f} + 1, nq)].dep[local[f]];
  };
  double err_sum = 0;
  std::uint32_t measured = 0;
  std::vector<double> queue_err(nq, 0.0);
  std::uint32_t flow_now = 0;  // the flow being accounted
  auto account = [&](double e) {
    rep.flow_rate_error_max = std::max(rep.flow_rate_error_max, e);
    double& qe = queue_err[MultiQueuePacer::hash_queue(std::uint64_t{flow_now} + 1, nq)];
    qe = std::max(qe, e);
    err_sum += e;
    ++measured;
  };
  if (rx) {
    rep.packets_received = rx->totals().packets;
    // Both ways: fewer received is loss, more is an error (a datagram twice).
    rep.packets_lost = rep.packets_sent > rep.packets_received ? rep.packets_sent - rep.packets_received : 0;
    rep.packets_extra = rep.packets_received > rep.packets_sent ? rep.packets_received - rep.packets_sent : 0;
    rep.transit = rx->transit();
    rep.gaps = rx->gaps();
    for (std::uint32_t f = 0; f < flows; ++f) {
      flow_now = f;
      const FlowArrivals& a = rx->flows()[f];
      if (a.packets >= 2)
        account(rate_error(a.first, a.last, a.first_intended, a.last_intended));
      else if (departures(f).n >= 2)
        account(1.0);  // sent but (almost) nothing arrived
    }
  } else {
    // No receiver (the sink, or --dest): nothing received is measured;
    // rates from departures.
    for (std::uint32_t f = 0; f < flows; ++f)
      if (const Departures& d = departures(flow_now = f); d.n >= 2)
        account(rate_error(d.first, d.last, d.first_intended, d.last_intended));
  }
  rep.flows_measured = measured;
  rep.flow_rate_error_mean = measured ? err_sum / measured : 0.0;

  // Per queue: its producer's packets against its pacer's fates.
  rep.queues = nq;
  for (std::uint32_t q = 0; q < nq; ++q) {
    PaceQueueReport qr;
    qr.queue = q;
    qr.cpu = queue_cpu(q);
    qr.flows = static_cast<std::uint32_t>(flows_of[q].size());
    qr.pacer = mq.result().queues[q];
    const PacerCounters& b = base_q.queues[q];
    const PacerCounters& e = fin_q.queues[q];
    qr.pps = static_cast<double>(e.sent - b.sent) / secs;
    qr.wakeups_per_s = static_cast<double>(e.wakeups - b.wakeups) / secs;
    qr.pacer_cpu_pct = 100.0 * static_cast<double>(e.thread_cpu_ns - b.thread_cpu_ns) / 1e9 / secs;
    qr.flow_rate_error_max = queue_err[q];
    qr.accounting = qr.pacer.accounting;
    if (gens[q]) {
      const WorkloadCounters c = gens[q]->counters();
      qr.packets_generated = c.generated;
      qr.producer_cpu_pct = 100.0 * static_cast<double>(gens[q]->thread_cpu_ns()) / 1e9 / life;
      qr.accounting.produced = c.generated + c.held_at_exit;
      qr.accounting.unsent_producer = c.held_at_exit;
    }
    rep.per_queue.push_back(std::move(qr));
  }
  return rep;
}

}  // namespace ufq::rt
