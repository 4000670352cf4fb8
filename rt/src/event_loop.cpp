#include "ufq/rt/event_loop.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace ufq::rt {

const char* to_string(WakeFor w) {
  switch (w) {
    case WakeFor::window: return "window";
    case WakeFor::packet: return "packet";
    case WakeFor::quota: return "quota";
    case WakeFor::egress: return "egress";
  }
  return "?";
}

// Marks a call in progress; a second one from inside it (the PacketDone
// callback calling back) is a contract violation: the scheduler and the
// driver loop are in the middle of a run and cannot take it.
class EventLoop::Entry {
 public:
  Entry(EventLoop& loop, const char* what) : loop_(loop) {
    if (loop_.entered_) {
      std::fprintf(stderr,
                   "ufq::rt::EventLoop::%s called from inside the loop (its PacketDone "
                   "callback): the loop is not reentrant; note the packet and act after the "
                   "call returns (docs/embedding.md)\n",
                   what);
      std::abort();
    }
    loop_.entered_ = true;
  }
  ~Entry() { loop_.entered_ = false; }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

 private:
  EventLoop& loop_;
};

EventLoop::EventLoop(EventLoopConfig cfg, Egress& egress, PacketDone done)
    : cfg_(std::move(cfg)),
      egress_(egress),
      done_(std::move(done)),
      fq_(cfg_.fq),
      device_{&egress_},
      runner_(fq_, device_, cfg_.runner) {
  egress_.set_tx_done([this](Packet& p, TxResult r, Time when, int error) {
    if (r == TxResult::sent) {
      sent_.bump();
      report(p, PacketFate::sent, when);
    } else {
      failed_.bump();
      failed_errno_.add(error);
      report(p, PacketFate::failed, when);
    }
  });
}

EventLoop::~EventLoop() {
  if (!entered_ && !idle()) give_back(now_);
  egress_.set_tx_done({});
}

void EventLoop::report(Packet& p, PacketFate f, Time when) {
  ++fates_[static_cast<std::size_t>(f)];
  if (done_) done_(p, f, when);
}

Verdict EventLoop::enqueue(Packet& p, Time now) {
  Entry entry(*this, "enqueue");
  now = advance(now);
  enqueued_.bump();
  const Verdict v = fq_.enqueue(p, now);
  if (v == Verdict::queued) return v;
  PacketFate f = PacketFate::drop_limit;
  if (v == Verdict::drop_flow_limit) f = PacketFate::drop_flow_limit;
  if (v == Verdict::drop_horizon) f = PacketFate::drop_horizon;
  dropped_.bump();
  report(p, f, now);
  return v;
}

std::size_t EventLoop::enqueue_burst(std::span<Packet* const> packets, Time now) {
  Entry entry(*this, "enqueue_burst");
  now = advance(now);
  std::array<Verdict, 64> verdicts;
  std::size_t queued = 0;
  for (std::size_t first = 0; first < packets.size(); first += verdicts.size()) {
    const std::span<Packet* const> group = packets.subspan(first, std::min(verdicts.size(), packets.size() - first));
    enqueued_.bump(group.size());
    const std::size_t q = fq_.enqueue_burst(group, now, verdicts);
    queued += q;
    if (q == group.size()) continue;
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Verdict v = verdicts[i];
      if (v == Verdict::queued) continue;
      PacketFate f = PacketFate::drop_limit;
      if (v == Verdict::drop_flow_limit) f = PacketFate::drop_flow_limit;
      if (v == Verdict::drop_horizon) f = PacketFate::drop_horizon;
      dropped_.bump();
      report(*group[i], f, now);
    }
  }
  return queued;
}

Wakeup EventLoop::egress_wait(Time now) {
  egress_waits_.bump();
  Wakeup w;
  w.why = WakeFor::egress;
  w.fd = egress_.poll_fd();
  w.soft = w.hard = now + (w.fd >= 0 ? cfg_.egress_wait_ns : cfg_.egress_retry_ns);
  return w;
}

Wakeup EventLoop::run(Time now) {
  Entry entry(*this, "run");
  now = advance(now);
  Watchdog& wd = fq_.watchdog();
  if (wd.queued() && now >= wd.soft_expiry()) wd.expire();  // the caller's timer fired
  if (egress_.pending() > 0) {
    egress_.flush();
    if (egress_.pending() > 0) return egress_wait(now);
  }
  const RunResult r = runner_.run(now);
  runs_.bump();
  if (r.end == RunEnd::quota) {
    quota_runs_.bump();
    return Wakeup{WakeFor::quota, now, now, -1};
  }
  // Refused by the egress (a stopped queue, or a send that met EAGAIN or
  // ENOBUFS and keeps its packets staged, even when the run ended idle).
  if (r.end == RunEnd::device || egress_.pending() > 0) return egress_wait(now);
  if (wd.queued()) return Wakeup{WakeFor::window, wd.soft_expiry(), wd.hard_expiry(), -1};
  return Wakeup{};
}

std::size_t EventLoop::change(const FqConfig& cfg, Time now) {
  Entry entry(*this, "change");
  now = advance(now);
  return fq_.change(cfg, now, [&](Packet& p) {
    dropped_.bump();
    report(p, PacketFate::drop_limit, now);
  });
}

std::size_t EventLoop::give_back(Time now) {
  Entry entry(*this, "give_back");
  now = advance(now);
  std::size_t n = 0;
  auto unsent = [&](Packet& p, std::uint64_t& where) {
    ++where;
    ++n;
    report(p, PacketFate::unsent, now);
  };
  egress_.abandon([&](Packet& p) { unsent(p, unsent_egress_); });
  // Dequeued and refused by the egress, waiting to go first: the egress's.
  runner_.release_held([&](Packet& p) { unsent(p, unsent_egress_); });
  fq_.reset([&](Packet& p) { unsent(p, unsent_scheduler_); });
  return n;
}

EventLoopCounters EventLoop::counters() const {
  EventLoopCounters c;
  c.enqueued = enqueued_.get();
  c.runs = runs_.get();
  c.quota_runs = quota_runs_.get();
  c.egress_waits = egress_waits_.get();
  c.sent = sent_.get();
  c.dropped = dropped_.get();
  c.failed = failed_.get();
  return c;
}

EventLoopStats EventLoop::stats(Time now) const {
  EventLoopStats s;
  s.counters = counters();
  s.fates = fates_;
  s.queued = queued();
  s.fq = fq_.stats(now > now_ ? now : now_);
  s.runner = runner_.stats();
  s.egress = egress_.stats();
  s.watchdog_arms = fq_.watchdog().arm_count();
  return s;
}

PacketAccounting EventLoop::accounting() const {
  PacketAccounting a;
  auto fate = [&](PacketFate f) { return fates_[static_cast<std::size_t>(f)]; };
  a.produced = enqueued_.get();
  a.sent = fate(PacketFate::sent);
  a.drop_limit = fate(PacketFate::drop_limit);
  a.drop_flow_limit = fate(PacketFate::drop_flow_limit);
  a.drop_horizon = fate(PacketFate::drop_horizon);
  a.failed = failed_errno_;
  a.unsent_scheduler = unsent_scheduler_;
  a.unsent_egress = unsent_egress_;
  return a;
}

}  // namespace ufq::rt
