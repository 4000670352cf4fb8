#include "ufq/rt/pacer.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <span>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {
namespace {

EventLoopConfig loop_config(const PacerConfig& c) {
  EventLoopConfig l;
  l.fq = c.fq;
  l.runner = c.runner;
  return l;
}

}  // namespace

struct Pacer::Request {
  enum class Kind : std::uint8_t { change, stats };
  Kind kind = Kind::stats;
  const FqConfig* cfg = nullptr;  // change
  std::size_t trimmed = 0;        // change: the answer
  PacerStats stats;               // stats: the answer
  // Set by the thread that answers, after the answer is written; moved out
  // of the request first, so the answering thread never touches the request
  // once the caller may have returned.
  std::promise<void> done;
};

Pacer::Pacer(PacerConfig cfg, Egress& egress, PacketDone done)
    : cfg_(std::move(cfg)),
      done_(std::move(done)),
      loop_(loop_config(cfg_), egress,
            [this](Packet& p, PacketFate f, Time when) {
              if (done_) done_(p, f, when);
            }),
      sleeper_(cfg_.sleeper),
      ring_(cfg_.ring_capacity),
      rates_(std::make_unique<RateMessage[]>(cfg_.rate_messages ? cfg_.rate_messages : 1)),
      free_rates_(cfg_.rate_messages ? cfg_.rate_messages : 1) {
  const std::uint32_t n = cfg_.rate_messages ? cfg_.rate_messages : 1;
  for (std::uint32_t i = 0; i < n; ++i) free_rates_.try_push(i);
}

Pacer::~Pacer() { stop(); }

void Pacer::start() {
  if (thread_.joinable() || finished_) return;
  thread_ = std::thread([this] { loop(); });
}

bool Pacer::submit(Packet& p, bool notify_pacer) {
  // Counted before the push: the pacer thread may take the packet before this
  // call returns, and no snapshot may show more packets taken than submitted
  // (the push publishes the count with the packet). Taken back if refused.
  submitted_.fetch_add(1, std::memory_order_relaxed);
  if (!ring_.try_push(reinterpret_cast<Slot>(&p))) {
    submitted_.fetch_sub(1, std::memory_order_relaxed);
    ring_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (notify_pacer) notify(p.tstamp);  // no timestamp (0): due now
  return true;
}

void Pacer::notify(Time earliest_due) {
  // Pairs with the pacer's fence between publishing its plan and its last
  // look at the ring: one of the two sees the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const Time planned = sleep_until_.load(std::memory_order_relaxed);
  if (planned != 0 && earliest_due < planned) {
    rings_.fetch_add(1, std::memory_order_relaxed);
    sleeper_.ring();
  }
}

bool Pacer::set_rate(FlowOwner& owner, Rate pacing_rate, Rate max_pacing_rate) {
  std::uint32_t i = 0;
  if (!free_rates_.try_pop(i)) return false;
  rates_[i] = RateMessage{&owner, pacing_rate, max_pacing_rate};
  if (!ring_.try_push(static_cast<Slot>(i) << 3 | kTagRate)) {
    free_rates_.try_push(i);
    return false;
  }
  return true;
}

// Hand a request to the pacer thread and wait for its answer; when no pacer
// thread runs, answer it here.
void Pacer::call(Request& rq) {
  if (thread_.joinable() && std::this_thread::get_id() == thread_.get_id()) {
    std::fputs(
        "ufq::rt::Pacer::change()/stats() called on the pacer thread (from PacketDone): it "
        "would wait for itself (docs/embedding.md)\n",
        stderr);
    std::abort();
  }
  std::future<void> f = rq.done.get_future();
  if (!thread_.joinable()) {
    answer(rq, mono_now());
    f.get();
    return;
  }
  while (!ring_.try_push(reinterpret_cast<Slot>(&rq) | kTagRequest)) std::this_thread::yield();
  rings_.fetch_add(1, std::memory_order_relaxed);
  sleeper_.ring();
  f.get();  // rethrows what the pacer thread caught (ConfigError)
}

std::size_t Pacer::change(const FqConfig& cfg) {
  Request rq;
  rq.kind = Request::Kind::change;
  rq.cfg = &cfg;
  call(rq);
  return rq.trimmed;
}

PacerStats Pacer::stats() {
  Request rq;
  rq.kind = Request::Kind::stats;
  call(rq);
  return rq.stats;
}

void Pacer::answer(Request& rq, Time now) {
  std::promise<void> done = std::move(rq.done);
  try {
    if (rq.kind == Request::Kind::change) {
      rq.trimmed = loop_.change(*rq.cfg, now);
      bump(config_changes_);
    } else {
      rq.stats = snapshot(now);
    }
    done.set_value();
  } catch (...) {
    done.set_exception(std::current_exception());
  }
}

PacerStats Pacer::snapshot(Time now) const {
  PacerStats s;
  s.counters = counters();
  s.loop = loop_.stats(now);
  s.config = loop_.config();
  return s;
}

void Pacer::stop(Time drain_ns) {
  if (thread_.joinable()) {
    drain_until_.store(drain_ns ? mono_now() + drain_ns : 0, std::memory_order_relaxed);
    stop_.store(true, std::memory_order_release);
    sleeper_.ring();
    thread_.join();
  }
  if (!finished_) finish();
}

PacerCounters Pacer::counters() const {
  PacerCounters c;
  const EventLoopCounters l = loop_.counters();
  c.wakeups = wakeups_.load(std::memory_order_relaxed);
  c.timer_wakeups = timer_wakeups_.load(std::memory_order_relaxed);
  c.doorbell_wakeups = doorbell_wakeups_.load(std::memory_order_relaxed);
  c.runs = l.runs;
  c.submitted = submitted_.load(std::memory_order_relaxed);
  c.ring_full = ring_full_.load(std::memory_order_relaxed);
  c.sent = l.sent;
  c.dropped = l.dropped;
  c.failed = l.failed;
  c.blocked_waits = l.egress_waits;
  c.rings = rings_.load(std::memory_order_relaxed);
  c.due_without_sleep = due_without_sleep_.load(std::memory_order_relaxed);
  c.quota_runs = l.quota_runs;
  c.ring_rechecks = ring_rechecks_.load(std::memory_order_relaxed);
  c.rate_changes = rate_changes_.load(std::memory_order_relaxed);
  c.config_changes = config_changes_.load(std::memory_order_relaxed);
  c.thread_cpu_ns = thread_cpu_.load(std::memory_order_relaxed);
  if (thread_.joinable() && !exited_.load(std::memory_order_acquire)) {
    clockid_t id{};
    timespec ts{};
    if (::pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &id) == 0 &&
        ::clock_gettime(id, &ts) == 0)
      c.thread_cpu_ns = static_cast<std::uint64_t>(ts.tv_sec) * kNsecPerSec +
                        static_cast<std::uint64_t>(ts.tv_nsec);
  }
  return c;
}

void Pacer::take(Slot s, Time now) {
  switch (s & kTagMask) {
    case 0:
      loop_.enqueue(*reinterpret_cast<Packet*>(s), now);
      return;
    case kTagRate: {
      const auto i = static_cast<std::uint32_t>(s >> 3);
      const RateMessage m = rates_[i];
      free_rates_.try_push(i);  // never full: it has room for every index
      m.owner->pacing_rate = m.pacing_rate;
      m.owner->max_pacing_rate = m.max_pacing_rate;
      bump(rate_changes_);
      return;
    }
    case kTagRequest:
      answer(*reinterpret_cast<Request*>(s & ~kTagMask), now);
      return;
  }
}

// Consecutive packets go to the loop in bursts of up to kDrainBurst (one
// EventLoop::enqueue_burst each); a rate message or request first flushes the
// packets before it, so everything still takes effect in ring order.
void Pacer::drain_ring(Time now) {
  std::array<Packet*, kDrainBurst> burst;
  std::size_t n = 0;
  Slot s = 0;
  while (ring_.try_pop(s)) {
    if ((s & kTagMask) == 0) {
      burst[n++] = reinterpret_cast<Packet*>(s);
      if (n == burst.size()) {
        loop_.enqueue_burst(burst, now);
        n = 0;
      }
      continue;
    }
    if (n) loop_.enqueue_burst(std::span<Packet* const>(burst.data(), n), now);
    n = 0;
    take(s, now);
  }
  if (n) loop_.enqueue_burst(std::span<Packet* const>(burst.data(), n), now);
}

// The egress refused a send (EAGAIN/ENOBUFS): wait until it can take more,
// or until the loop's retry time (ENOBUFS raises no POLLOUT).
void Pacer::wait_egress(const Wakeup& w) {
  const Time now = mono_now();
  const Time left = w.soft > now ? w.soft - now : 0;
  const timespec ts = to_timespec(left);
  if (w.fd >= 0) {
    pollfd pfd{w.fd, POLLOUT, 0};
    ::ppoll(&pfd, 1, &ts, nullptr);
  } else {
    ::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
  }
}

void Pacer::loop() {
  // Named so that top, perf and /proc show which thread paces.
  ::pthread_setname_np(::pthread_self(), "ufq-pacer");
  if (cfg_.cpu >= 0) pin_current_thread(cfg_.cpu);
  if (cfg_.nice != 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), cfg_.nice);
  for (;;) {
    if (stop_.load(std::memory_order_acquire)) {
      const Time until = drain_until_.load(std::memory_order_relaxed);
      const bool empty = loop_.idle() && ring_.empty_approx();
      if (until == 0 || empty || mono_now() >= until) break;
    }

    drain_ring(mono_now());
    const Wakeup w = loop_.run(mono_now());
    if (w.why == WakeFor::quota) continue;
    if (w.why == WakeFor::egress) {
      wait_egress(w);
      continue;
    }

    // Nothing may leave now: sleep until the wake-up window (kNever: none).
    const bool armed = w.timed();
    // Publish the planned wake-up, then look at the ring once more. A
    // producer publishes its packet, then reads the plan (both behind a full
    // fence): either we see the packet here, or it sees the plan and rings
    // the doorbell if its packet is due earlier. A push still in progress
    // (slot claimed, not yet published) is the producer's to signal, so it
    // is not waited for here.
    sleep_until_.store(w.soft, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Slot early = 0;
    const bool got = ring_.try_pop(early);
    if (got || stop_.load(std::memory_order_relaxed)) {
      sleep_until_.store(0, std::memory_order_relaxed);
      if (got) {
        bump(ring_rechecks_);
        take(early, mono_now());
        continue;
      }
      // Stopping: go round to the drain test without sleeping, unless
      // draining must wait for throttled packets.
      if (drain_until_.load(std::memory_order_relaxed) == 0 || !armed) continue;
    }
    if (armed && w.soft <= mono_now()) {  // already due (the run took time): no sleep
      sleep_until_.store(0, std::memory_order_relaxed);
      bump(due_without_sleep_);
      continue;  // the next run() sees the window reached and expires the watchdog
    }
    const WakeReason why = sleeper_.wait(w.soft, w.hard, cfg_.idle_ns);
    sleep_until_.store(0, std::memory_order_relaxed);
    bump(wakeups_);
    if (why == WakeReason::doorbell) bump(doorbell_wakeups_);
    if (why == WakeReason::timer) bump(timer_wakeups_);
  }
  thread_cpu_.store(thread_cpu_ns(), std::memory_order_relaxed);
  exited_.store(true, std::memory_order_release);
}

void Pacer::finish() {
  finished_ = true;
  const Time now = mono_now();
  result_.counters = counters();
  {
    const EventLoopStats s = loop_.stats(now);  // before purging
    result_.fq = s.fq;
    result_.runner = s.runner;
    result_.watchdog_arms = s.watchdog_arms;
  }
  result_.slack_changes = sleeper_.slack_changes();
  // What is still in the ring: packets are unsent, rate changes discarded,
  // requests answered here (no pacer thread runs any more).
  Slot s = 0;
  while (ring_.try_pop(s)) {
    switch (s & kTagMask) {
      case 0:
        ++result_.unsent_ring;
        ++result_.fates[static_cast<std::size_t>(PacketFate::unsent)];
        if (done_) done_(*reinterpret_cast<Packet*>(s), PacketFate::unsent, now);
        break;
      case kTagRate:
        free_rates_.try_push(static_cast<std::uint32_t>(s >> 3));
        break;
      default:
        answer(*reinterpret_cast<Request*>(s & ~kTagMask), now);
        break;
    }
  }
  loop_.give_back(now);
  const EventLoopStats after = loop_.stats(now);
  const PacketAccounting la = loop_.accounting();
  result_.egress = after.egress;
  for (std::size_t f = 0; f < kPacketFates; ++f) result_.fates[f] += after.fates[f];
  result_.unsent_scheduler = la.unsent_scheduler;
  result_.unsent_egress = la.unsent_egress;

  PacketAccounting& a = result_.accounting;
  a = la;
  a.produced = result_.counters.submitted;
  a.unsent_ring = result_.unsent_ring;
}

}  // namespace ufq::rt
