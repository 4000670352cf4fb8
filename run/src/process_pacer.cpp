#include "process_pacer.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "handler_watch.hpp"
#include "notices.hpp"
#include "readiness.hpp"
#include "real_calls.hpp"
#include "run_config.hpp"
#include "stats_report.hpp"
#include "stop_signals.hpp"
#include "ufq/rt/clock.hpp"

namespace ufq::run {
namespace {

std::atomic<ProcessPacer*> g_pacer{nullptr};
thread_local bool t_burst = false;
thread_local ProcessPacer* t_burst_pacer = nullptr;  // handed something over during the burst
std::mutex g_create_mu;
std::atomic<bool> g_create_failed{false};
bool g_hooks = false;  // atfork and atexit registered (once per process image)

void at_exit() {
  if (ProcessPacer* p = ProcessPacer::current()) p->finish("exit");
}

void fork_prepare() { g_create_mu.lock(); }
void fork_parent() { g_create_mu.unlock(); }
void fork_child() {
  new (&g_create_mu) std::mutex();
  // The parent's pacer (its thread is not here) is left behind, unused.
  g_pacer.store(nullptr, std::memory_order_release);
  g_create_failed.store(false);
  stop_signals_after_fork();
  reset_notices();
  socket_table_after_fork();
  readiness_after_fork();
}

std::string program_name() {
  std::ifstream f("/proc/self/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    say("--stats " + path + ": " + std::strerror(errno));
    return;
  }
  const std::string text = line + "\n";
  [[maybe_unused]] const ssize_t n = real().write(fd, text.data(), text.size());  // O_APPEND: one write
  real().close(fd);
}

// Keeps send() from racing with stop(): finish() waits until no producer is
// inside, and producers that come after it find `stopping` set.
class Gate {
 public:
  explicit Gate(std::atomic<int>& active, const std::atomic<bool>& stopping) : active_(active) {
    active_.fetch_add(1, std::memory_order_seq_cst);
    open_ = !stopping.load(std::memory_order_seq_cst);
  }
  ~Gate() { active_.fetch_sub(1, std::memory_order_release); }
  explicit operator bool() const { return open_; }

 private:
  std::atomic<int>& active_;
  bool open_;
};

}  // namespace

ProcessPacer* ProcessPacer::current() { return g_pacer.load(std::memory_order_acquire); }

ProcessPacer* ProcessPacer::get() {
  ProcessPacer* p = g_pacer.load(std::memory_order_acquire);
  if (p || g_create_failed.load(std::memory_order_relaxed)) return p;
  std::lock_guard lk(g_create_mu);
  p = g_pacer.load(std::memory_order_acquire);
  if (p) return p;
  try {
    p = new ProcessPacer();
  } catch (const std::exception& e) {
    say(std::string("cannot start the pacer (") + e.what() + "): this process's datagrams are not paced");
    g_create_failed.store(true);
    return nullptr;
  }
  if (!g_hooks) {
    g_hooks = true;
    ::pthread_atfork(fork_prepare, fork_parent, fork_child);
    std::atexit(at_exit);
  }
  g_pacer.store(p, std::memory_order_release);
  start_stop_signals();
  return p;
}

namespace {
rt::PacerConfig pacer_config(std::uint32_t records) {
  rt::PacerConfig pc;
  pc.fq = run_config().fq;
  pc.nice = run_config().nice;
  std::uint32_t ring = 1024;
  while (ring < records + 4096) ring <<= 1;
  pc.ring_capacity = ring;
  return pc;
}
std::uint32_t record_count(const FqConfig& cfg) {
  const std::uint64_t bands = cfg.compat == Compat::linux_5_7 ? 1 : 3;
  const std::uint64_t n = std::uint64_t{cfg.limit} * bands;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(n, 1), 1U << 18));
}
rt::UdpEgressConfig egress_config() {
  rt::UdpEgressConfig c;
  c.open_ipv4 = c.open_ipv6 = false;  // every datagram names its socket's duplicate
  // The real sendmmsg: ours would take the pacer's own sends for the program's.
  c.send = [](int fd, mmsghdr* m, unsigned n, int flags) { return real().sendmmsg(fd, m, n, flags); };
  return c;
}
}  // namespace

ProcessPacer::ProcessPacer()
    : pid_(::getpid()),
      bp_(run_config().fq),
      records_(record_count(run_config().fq)),
      recs_(std::make_unique<Record[]>(records_)),
      free_(records_),
      egress_(egress_config()),
      pacer_(pacer_config(records_), egress_, [this](Packet& p, rt::PacketFate f, Time) { done(p, f); }) {
  void* m = ::mmap(nullptr, std::size_t{records_} * kSlot, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) throw std::runtime_error("mmap of the payload slots failed");
  slab_ = static_cast<std::uint8_t*>(m);
  for (std::uint32_t i = 0; i < records_; ++i) {
    recs_[i].d.user = i;
    free_.try_push(i);
  }
  // The pacer thread takes no signal of the program's.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pacer_.start();
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

bool ProcessPacer::take(std::uint32_t& rec, std::uint8_t band, std::atomic<std::uint32_t>* flow,
                        std::uint32_t hash, Room& room) {
  if (!free_.try_pop(rec)) return false;
  if (bp_.try_take(band, flow, hash, room)) return true;
  free_.try_push(rec);
  return false;
}

ssize_t ProcessPacer::send(SocketEntry& e, int dupfd, const SendPlan& plan, const iovec* iov, std::size_t n,
                           const SocketOptions& o) {
  std::optional<Gate> gate(std::in_place, active_, stopping_);
  if (!*gate) {
    gate.reset();
    return hold_at_stop(e, o.nonblock || plan.dontwait);
  }
  std::atomic<std::uint32_t>* flow = plan.connected_flow ? &e.inflight_flow : nullptr;
  const std::uint8_t band = bp_.band_of(plan.priority);
  std::uint32_t rec = 0;
  Room room;
  if (!take(rec, band, flow, plan.hash, room)) {
    auto refuse = [&](int err, std::atomic<std::uint64_t>& c) -> ssize_t {
      c.fetch_add(1, std::memory_order_relaxed);
      socket_datagram_done(e, false);
      errno = err;
      return -1;
    };
    if (o.nonblock || plan.dontwait) {
      readiness_refused(e);
      return refuse(EAGAIN, counts_.eagain);
    }
    counts_.waits.fetch_add(1, std::memory_order_relaxed);
    if (t_burst_pacer == this) {  // what this burst handed over must leave for room to come back
      t_burst_pacer = nullptr;
      pacer_.notify(0);
    }
    const Time deadline = o.sndtimeo_ns ? rt::mono_now() + o.sndtimeo_ns : 0;
    // A handler without SA_RESTART that runs while we wait ends the wait with
    // EINTR, one with SA_RESTART does not (the kernel restarts a blocked
    // send), as the wrapped handlers' count since the call began tells
    // (handler_watch.hpp, SendPlan::handlers_at_entry): looked at after every
    // futex return, and every 100 ms at least.
    const std::uint64_t handlers = plan.handlers_at_entry;
    bp_.add_waiter();
    for (;;) {
      const std::uint32_t seen = bp_.sequence();
      if (take(rec, band, flow, plan.hash, room)) break;
      if (stopping_.load(std::memory_order_acquire)) {
        bp_.remove_waiter();
        gate.reset();
        return hold_at_stop(e, false);
      }
      if (interrupting_handlers() != handlers) {
        bp_.remove_waiter();
        return refuse(EINTR, counts_.interrupted);
      }
      Time left = 100 * kNsecPerMsec;
      if (deadline) {
        const Time now = rt::mono_now();
        if (now >= deadline) {
          bp_.remove_waiter();
          return refuse(EAGAIN, counts_.timed_out);
        }
        left = std::min(left, deadline - now);
      }
      // A timed FUTEX_WAIT ends with EINTR for any handler, SA_RESTART or
      // not: the count tells which it was. With SO_SNDTIMEO the kernel's
      // send fails with EINTR for either, so do we.
      if (bp_.wait(seen, left) == EINTR && (o.sndtimeo_ns || interrupting_handlers() != handlers)) {
        bp_.remove_waiter();
        return refuse(EINTR, counts_.interrupted);
      }
    }
    bp_.remove_waiter();
  }
  Record& r = recs_[rec];
  rt::Datagram& d = r.d;
  const std::uint64_t index = d.user;
  d = rt::Datagram{};
  d.user = index;
  d.fd = dupfd;
  d.dest = plan.dest;
  d.source = plan.source;
  d.source_ifindex = plan.source_ifindex;
  d.ecn = plan.ecn;
  d.gso_size = plan.gso_size;
  d.packet.owner = plan.connected_flow ? &e.owner_connected : &e.owner_unconnected;
  d.packet.hash = plan.hash;
  d.packet.priority = plan.priority;
  d.packet.tstamp = plan.tstamp;
  std::uint8_t* dst = slab_ + std::size_t{rec} * kSlot;
  if (plan.size > kSlot) {
    dst = static_cast<std::uint8_t*>(std::malloc(plan.size));
    if (!dst) {
      free_.try_push(rec);
      bp_.give_back(room, flow);
      socket_datagram_done(e, false);
      count_pass(PassReason::no_room);
      return kPassThrough;
    }
    r.heap = dst;
    counts_.large_payloads.fetch_add(1, std::memory_order_relaxed);
  }
  std::size_t off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (iov[i].iov_len) std::memcpy(dst + off, iov[i].iov_base, iov[i].iov_len);
    off += iov[i].iov_len;
  }
  d.data = dst;
  d.size = static_cast<std::uint32_t>(plan.size);
  d.charge();
  r.entry = &e;
  r.room = room;
  counts_.handed_over.fetch_add(1, std::memory_order_relaxed);
  counts_.bytes.fetch_add(plan.size, std::memory_order_relaxed);
  while (!pacer_.submit(d.packet, false)) std::this_thread::yield();  // the ring holds every record: rare
  if (t_burst)
    t_burst_pacer = this;
  else
    pacer_.notify(plan.tstamp ? plan.tstamp : plan.due_hint);
  return static_cast<ssize_t>(plan.size);
}

ssize_t ProcessPacer::hold_at_stop(SocketEntry& e, bool nonblock) {
  counts_.held_at_stop.fetch_add(1, std::memory_order_relaxed);
  socket_datagram_done(e, false);
  if (nonblock) {
    errno = EAGAIN;
    return -1;
  }
  // Until this process ends, execs, or (a failed exec) has a new pacer.
  while (current() == this) bp_.wait(bp_.sequence(), 100 * kNsecPerMsec);
  return kRetry;
}

void ProcessPacer::done(Packet& p, rt::PacketFate) {
  Record& r = *reinterpret_cast<Record*>(&rt::Datagram::of(p));
  SocketEntry* e = r.entry;
  r.entry = nullptr;
  if (r.heap) {
    std::free(r.heap);
    r.heap = nullptr;
  }
  const Room room = r.room;
  free_.try_push(static_cast<std::uint32_t>(r.d.user));  // before the wake-up: a waiter may need the record
  bp_.give_back(room, room.slot == Room::kNoSlot ? &e->inflight_flow : nullptr);
  readiness_room_back();
  if (e) socket_datagram_done(*e, false);
}

Time ProcessPacer::due_hint(SocketEntry& e, const SendPlan& plan, const SocketOptions& o) const {
  const FqConfig& cfg = run_config().fq;
  if (!plan.connected_flow || plan.tstamp || !cfg.pacing) return 0;
  const Rate rate = std::min(o.max_pacing_rate, cfg.maxrate);
  if (rate == kUnlimitedRate || rate == 0) return 0;
  const std::uint64_t segs = plan.gso_size ? (plan.size + plan.gso_size - 1) / plan.gso_size : 1;
  const std::uint64_t len = plan.size + segs * rt::frame_overhead(e.family);
  const auto ns = [rate](std::uint64_t bytes) {
    return static_cast<Time>(static_cast<double>(bytes) * 1e9 / static_cast<double>(rate));
  };
  // In flight but perhaps already released by fq (a whole bulk staged in the
  // egress, completions not yet seen) or about to complete: not counted.
  const std::uint64_t in_flight = e.inflight_flow.load(std::memory_order_relaxed);
  constexpr std::uint64_t kMaybeReleased = kMaxBulk + 1;
  if (in_flight <= kMaybeReleased) return 0;
  const std::uint64_t ahead = in_flight - kMaybeReleased;
  const std::uint64_t credit = 2ULL * std::max(cfg.quantum, cfg.initial_quantum);
  if (ahead * len <= credit) return 0;
  const Time wait = ns(ahead * len - credit);
  if (wait <= kNsecPerMsec) return 0;
  return rt::mono_now() + wait - kNsecPerMsec;
}

void ProcessPacer::begin_burst() {
  t_burst = true;
  t_burst_pacer = nullptr;
}

void ProcessPacer::end_burst() {
  const int saved = errno;
  t_burst = false;
  if (ProcessPacer* p = t_burst_pacer) {
    t_burst_pacer = nullptr;
    if (p == current()) p->pacer_.notify(0);
  }
  errno = saved;
}

void ProcessPacer::set_rate(SocketEntry& e, Rate rate) {
  if (stopping()) return;
  for (FlowOwner* o : {&e.owner_connected, &e.owner_unconnected})
    while (!pacer_.set_rate(*o, kUnlimitedRate, rate)) std::this_thread::yield();
}

void ProcessPacer::finish(const std::string& why) {
  if (::getpid() != pid_) return;  // a vfork child: the parent's pacer is not ours
  std::lock_guard lk(finish_mu_);
  if (finished_) return;
  finished_ = true;
  stopping_.store(true, std::memory_order_seq_cst);
  bp_.wake_all();
  for (int i = 0; active_.load(std::memory_order_seq_cst) > 0 && i < 100000; ++i) std::this_thread::yield();
  pacer_.stop(run_config().drain_ns);
  write_report(true, why, nullptr);
}

void ProcessPacer::report_now() {
  std::lock_guard lk(finish_mu_);
  if (finished_) return;
  const rt::PacerStats s = pacer_.stats();
  write_report(false, "signal", &s);
}

void ProcessPacer::write_report(bool final, const std::string& why, const rt::PacerStats* live) {
  const RunConfig& rc = run_config();
  Report r;
  r.pid = ::getpid();
  r.ppid = ::getppid();
  r.program = program_name();
  r.why = why;
  r.final = final;
  r.cfg = rc.fq;
  if (final) {
    const rt::PacerResult& res = pacer_.result();
    r.fq = res.fq;
    r.pacer = res.counters;
    r.egress = res.egress;
    r.account = res.accounting;
  } else {
    r.cfg = live->config;
    r.fq = live->loop.fq;
    r.pacer = live->counters;
    r.egress = live->loop.egress;
    r.account.produced = live->counters.submitted;
    r.account.sent = live->loop.fates[static_cast<std::size_t>(rt::PacketFate::sent)];
    r.account.drop_limit = live->loop.fates[static_cast<std::size_t>(rt::PacketFate::drop_limit)];
    r.account.drop_flow_limit = live->loop.fates[static_cast<std::size_t>(rt::PacketFate::drop_flow_limit)];
    r.account.drop_horizon = live->loop.fates[static_cast<std::size_t>(rt::PacketFate::drop_horizon)];
    r.account.failed.add(0, live->loop.fates[static_cast<std::size_t>(rt::PacketFate::failed)]);
    const std::uint64_t done = r.account.sent + r.account.dropped() + r.account.failed.total();
    r.in_flight = r.account.produced > done ? r.account.produced - done : 0;
  }
  r.eagain = counts_.eagain.load();
  r.timed_out = counts_.timed_out.load();
  r.interrupted = counts_.interrupted.load();
  r.waits = counts_.waits.load();
  r.large_payloads = counts_.large_payloads.load();
  r.held_at_stop = counts_.held_at_stop.load();
  for (std::size_t i = 0; i < r.passed.size(); ++i) r.passed[i] = counts_.passed[i].load();
  if (!rc.quiet || !final) say_raw(report_text(r));
  if (!rc.stats_path.empty()) append_line(rc.stats_path, report_json(r));
}

void ProcessPacer::before_exec() {
  ProcessPacer* p = current();
  if (!p || ::getpid() != p->pid_) return;
  p->finish("exec");
}

void ProcessPacer::after_exec_failed() {
  // The program goes on: a new pacer on its next datagram (the stopped one
  // is left behind).
  ProcessPacer* p = current();
  if (p && p->stopping() && ::getpid() == p->pid_) {
    g_pacer.store(nullptr, std::memory_order_release);
    p->bp_.wake_all();  // calls held at the stop try again with the next pacer
  }
}

}  // namespace ufq::run
