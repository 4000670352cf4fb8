#include "ufq/rt/pacer.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

const char* to_string(PacketFate f) {
  switch (f) {
    case PacketFate::sent: return "sent";
    case PacketFate::drop_limit: return "drop_limit";
    case PacketFate::drop_flow_limit: return "drop_flow_limit";
    case PacketFate::drop_horizon: return "drop_horizon";
    case PacketFate::failed: return "failed";
    case PacketFate::unsent: return "unsent";
  }
  return "?";
}

Pacer::Pacer(PacerConfig cfg, Egress& egress, PacketDone done)
    : cfg_(std::move(cfg)),
      egress_(egress),
      done_(std::move(done)),
      fq_(cfg_.fq),
      device_{&egress_},
      runner_(fq_, device_, cfg_.runner),
      sleeper_(cfg_.sleeper),
      ring_(cfg_.ring_capacity) {
  egress_.set_tx_done([this](Packet& p, TxResult r, Time when, int error) {
    if (r == TxResult::sent) {
      bump(sent_);
      ++fates_[static_cast<std::size_t>(PacketFate::sent)];
      if (done_) done_(p, PacketFate::sent, when);
    } else {
      bump(failed_);
      ++fates_[static_cast<std::size_t>(PacketFate::failed)];
      failed_errno_.add(error);
      if (done_) done_(p, PacketFate::failed, when);
    }
  });
}

Pacer::~Pacer() { stop(); }

void Pacer::start() {
  if (thread_.joinable() || finished_) return;
  thread_ = std::thread([this] { loop(); });
}

bool Pacer::submit(Packet& p, bool notify_pacer) {
  if (!ring_.try_push(&p)) {
    ring_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  submitted_.fetch_add(1, std::memory_order_relaxed);
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
  c.wakeups = wakeups_.load(std::memory_order_relaxed);
  c.timer_wakeups = timer_wakeups_.load(std::memory_order_relaxed);
  c.doorbell_wakeups = doorbell_wakeups_.load(std::memory_order_relaxed);
  c.runs = runs_.load(std::memory_order_relaxed);
  c.submitted = submitted_.load(std::memory_order_relaxed);
  c.ring_full = ring_full_.load(std::memory_order_relaxed);
  c.sent = sent_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  c.failed = failed_.load(std::memory_order_relaxed);
  c.blocked_waits = blocked_waits_.load(std::memory_order_relaxed);
  c.rings = rings_.load(std::memory_order_relaxed);
  c.due_without_sleep = due_without_sleep_.load(std::memory_order_relaxed);
  c.quota_runs = quota_runs_.load(std::memory_order_relaxed);
  c.ring_rechecks = ring_rechecks_.load(std::memory_order_relaxed);
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

void Pacer::enqueue_one(Packet& p, Time now) {
  const Verdict v = fq_.enqueue(p, now);
  if (v == Verdict::queued) return;
  PacketFate f = PacketFate::drop_limit;
  if (v == Verdict::drop_flow_limit) f = PacketFate::drop_flow_limit;
  if (v == Verdict::drop_horizon) f = PacketFate::drop_horizon;
  bump(dropped_);
  ++fates_[static_cast<std::size_t>(f)];
  if (done_) done_(p, f, now);
}

void Pacer::drain_ring(Time now) {
  Packet* p = nullptr;
  while (ring_.try_pop(p)) enqueue_one(*p, now);
}

// The egress refused a send (EAGAIN/ENOBUFS): wait until it can take more.
void Pacer::wait_egress() {
  bump(blocked_waits_);
  const int fd = egress_.poll_fd();
  if (fd >= 0) {
    pollfd pfd{fd, POLLOUT, 0};
    const timespec ts = to_timespec(200 * kNsecPerUsec);  // ENOBUFS raises no POLLOUT
    ::ppoll(&pfd, 1, &ts, nullptr);
  } else {
    const timespec ts = to_timespec(50 * kNsecPerUsec);
    ::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
  }
  egress_.flush();
}

void Pacer::loop() {
  if (cfg_.cpu >= 0) pin_current_thread(cfg_.cpu);
  if (cfg_.nice != 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), cfg_.nice);
  Watchdog& wd = fq_.watchdog();
  for (;;) {
    if (stop_.load(std::memory_order_acquire)) {
      const Time until = drain_until_.load(std::memory_order_relaxed);
      const bool empty = fq_.qlen() == 0 && ring_.empty_approx() && egress_.pending() == 0 &&
                         runner_.held() == 0;
      if (until == 0 || empty || mono_now() >= until) break;
    }

    Time now = mono_now();
    drain_ring(now);
    if (egress_.pending() > 0) {
      egress_.flush();
      if (egress_.pending() > 0) {
        wait_egress();
        continue;
      }
    }
    const RunResult r = runner_.run(now);
    bump(runs_);
    if (r.end == RunEnd::quota) {
      bump(quota_runs_);
      continue;
    }
    if (r.end == RunEnd::device) {
      if (egress_.pending() > 0) wait_egress();
      continue;
    }

    // Idle: nothing may leave at `now`. Sleep until the watchdog's window.
    const bool armed = wd.queued();
    const Time soft = armed ? wd.soft_expiry() : kNever;
    const Time hard = armed ? wd.hard_expiry() : kNever;
    // Publish the planned wake-up, then look at the ring once more. A
    // producer publishes its packet, then reads the plan (both behind a full
    // fence): either we see the packet here, or it sees the plan and rings
    // the doorbell if its packet is due earlier. A push still in progress
    // (slot claimed, not yet published) is the producer's to signal, so it
    // is not waited for here.
    sleep_until_.store(soft, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Packet* early = nullptr;
    if (ring_.try_pop(early) || stop_.load(std::memory_order_relaxed)) {
      sleep_until_.store(0, std::memory_order_relaxed);
      if (early) {
        bump(ring_rechecks_);
        enqueue_one(*early, mono_now());
        continue;
      }
      if (!stop_.load(std::memory_order_relaxed)) continue;
      // Stopping: go round to the drain test without sleeping, unless
      // draining must wait for throttled packets.
      if (drain_until_.load(std::memory_order_relaxed) == 0 || !armed) continue;
    }
    now = mono_now();
    if (armed && soft <= now) {  // already due (the run took time): no sleep
      sleep_until_.store(0, std::memory_order_relaxed);
      bump(due_without_sleep_);
      wd.expire();
      continue;
    }
    const WakeReason why = sleeper_.wait(soft, hard, cfg_.idle_ns);
    sleep_until_.store(0, std::memory_order_relaxed);
    bump(wakeups_);
    if (why == WakeReason::doorbell) bump(doorbell_wakeups_);
    if (why == WakeReason::timer) bump(timer_wakeups_);
    if (armed && mono_now() >= soft) wd.expire();  // the timer fired
  }
  thread_cpu_.store(thread_cpu_ns(), std::memory_order_relaxed);
  exited_.store(true, std::memory_order_release);
}

void Pacer::finish() {
  finished_ = true;
  result_.counters = counters();
  result_.fq = fq_.stats(mono_now());
  result_.runner = runner_.stats();
  result_.watchdog_arms = fq_.watchdog().arm_count();
  result_.slack_changes = sleeper_.slack_changes();
  const Time now = mono_now();
  auto unsent = [&](Packet& p, std::uint64_t& where) {
    ++where;
    ++fates_[static_cast<std::size_t>(PacketFate::unsent)];
    if (done_) done_(p, PacketFate::unsent, now);
  };
  Packet* p = nullptr;
  while (ring_.try_pop(p)) unsent(*p, result_.unsent_ring);
  egress_.abandon([&](Packet& q) { unsent(q, result_.unsent_egress); });
  // Dequeued and refused by the egress, waiting to go first: the egress's.
  runner_.release_held([&](Packet& q) { unsent(q, result_.unsent_egress); });
  fq_.reset([&](Packet& q) { unsent(q, result_.unsent_scheduler); });
  result_.egress = egress_.stats();
  result_.fates = fates_;

  PacketAccounting& a = result_.accounting;
  auto fate = [&](PacketFate f) { return fates_[static_cast<std::size_t>(f)]; };
  a.produced = result_.counters.submitted;
  a.sent = fate(PacketFate::sent);
  a.drop_limit = fate(PacketFate::drop_limit);
  a.drop_flow_limit = fate(PacketFate::drop_flow_limit);
  a.drop_horizon = fate(PacketFate::drop_horizon);
  a.failed = failed_errno_;
  a.unsent_ring = result_.unsent_ring;
  a.unsent_scheduler = result_.unsent_scheduler;
  a.unsent_egress = result_.unsent_egress;
}

}  // namespace ufq::rt
