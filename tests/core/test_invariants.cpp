// The invariant checker (invariants.hpp) can fail: each fault below is a
// wrapper around the reference scheduler that breaks one promise (a packet
// out early, out of order, a counter off by one, the watchdog not asked, a
// refused change that still altered something...). Driven by the same
// randomized operations, the checker must report that fault, with the
// expected message, while the unwrapped reference::FqScheduler and FqScheduler pass.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "invariants.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/reference/scheduler.hpp"

namespace ufq::test {
namespace {

enum class Fault {
  none,
  early,             // dequeue() looks 5 ms into the future
  swap,              // dequeue() returns two packets in swapped order (unpaced runs)
  lie_queued,        // enqueue() says queued for a refused packet
  backlog,           // stats() backlog one byte high
  dequeued_count,    // stats() dequeued one low after the first dequeue
  ce_always,         // dequeue() marks CE on every ECT packet
  no_watchdog,       // the watchdog request is cancelled after "nothing to send"
  late_watchdog,     // ... or moved past its window
  accept_invalid,    // change() swallows ConfigError
  refused_altered,   // change() alters the quantum, then refuses
  throttled_hidden,  // for_each_flow() shows throttled flows as old_list
};

// reference::FqScheduler with one fault injected.
class Faulty {
 public:
  Faulty(const FqConfig& cfg, Fault f) : q_(cfg), f_(f) {}

  Verdict enqueue(Packet& p, Time now) {
    const Verdict v = q_.enqueue(p, now);
    return f_ == Fault::lie_queued ? Verdict::queued : v;
  }
  Packet* dequeue(Time now) {
    if (f_ == Fault::early) return q_.dequeue(now + 5 * kNsecPerMsec);
    if (f_ == Fault::swap) {
      if (held_) return std::exchange(held_, nullptr);
      Packet* a = q_.dequeue(now);
      Packet* b = a ? q_.dequeue(now) : nullptr;
      if (!b) return a;
      held_ = a;
      return b;
    }
    Packet* p = q_.dequeue(now);
    if (p) ++dequeues_;
    if (p && f_ == Fault::ce_always && p->ect) p->ce = true;
    if (!p && q_.qlen() > 0 && q_.watchdog().queued()) {
      if (f_ == Fault::no_watchdog) q_.watchdog().cancel();
      if (f_ == Fault::late_watchdog)
        q_.watchdog().schedule_range(q_.watchdog().soft_expiry() + q_.config().timer_slack_ns + 1, 0);
    }
    return p;
  }
  std::size_t change(const FqConfig& cfg, Time now, const PacketSink& trimmed = {}) {
    if (f_ == Fault::refused_altered && validate(cfg)) {
      FqConfig c = q_.config();
      c.quantum = c.quantum % kMaxQuantum + 1;
      q_.change(c, now, trimmed);
    }
    try {
      return q_.change(cfg, now, trimmed);
    } catch (const ConfigError&) {
      if (f_ == Fault::accept_invalid) return 0;
      throw;
    }
  }
  void reset(const PacketSink& purged = {}) { q_.reset(purged); }
  FqStats stats(Time now) const {
    FqStats s = q_.stats(now);
    if (f_ == Fault::backlog && s.qlen > 0) ++s.backlog;
    if (f_ == Fault::dequeued_count && dequeues_ > 0) --s.dequeued;
    return s;
  }
  const FqConfig& config() const { return q_.config(); }
  Watchdog& watchdog() { return q_.watchdog(); }
  const Watchdog& watchdog() const { return q_.watchdog(); }
  std::uint32_t qlen() const { return q_.qlen(); }
  std::uint32_t internal_qlen() const { return q_.internal_qlen(); }
  Time time_next_delayed_flow() const { return q_.time_next_delayed_flow(); }
  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const {
    q_.for_each_flow([&](const FlowInfo& f) {
      FlowInfo g = f;
      if (f_ == Fault::throttled_hidden && g.state == FlowState::throttled) g.state = FlowState::old_list;
      fn(g);
    });
  }

 private:
  reference::FqScheduler q_;
  Fault f_;
  Packet* held_ = nullptr;
  std::uint64_t dequeues_ = 0;
};

// Randomized operations through the checker, stopping at its first failure.
// Returns the failure message ("" when none).
template <class Sched>
std::string drive(Sched& q, std::uint64_t seed, bool paced = true, int steps = 4000) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&](std::uint64_t n) { return rng() % n; };
  std::string failure;
  inv::Checker<Sched> checker(q, [&](const std::string& w) { failure = w; });
  std::array<FlowOwner, 6> owners{};
  for (std::size_t i = 0; i < owners.size(); ++i) {
    owners[i].id = 100 + i;
    owners[i].tcp = i % 2 == 0;
    owners[i].kind = i == 5 ? FlowOwner::Kind::unconnected : FlowOwner::Kind::connected;
    if (paced && i >= 3) owners[i].pacing_rate = owners[i].max_pacing_rate = 1'000'000 * i;
  }
  std::vector<Packet> packets(256);
  std::vector<Packet*> free;
  for (Packet& p : packets) free.push_back(&p);
  const auto give_back = [&](Packet& p) { free.push_back(&p); };
  Time now = 10 * kNsecPerSec;
  for (int step = 0; step < steps && failure.empty(); ++step) {
    const std::uint64_t op = uniform(100);
    if (op < 45 && !free.empty()) {
      Packet& p = *free.back();
      free.pop_back();
      p = Packet{};
      p.len = static_cast<std::uint32_t>(64 + uniform(1451));
      p.ect = uniform(2) == 1;
      p.hash = static_cast<std::uint32_t>(uniform(8));
      p.priority = static_cast<std::uint8_t>(paced && uniform(4) == 0 ? uniform(16) : 0);
      p.owner = uniform(8) == 0 ? nullptr : &owners[uniform(owners.size())];
      if (paced && uniform(3) == 0) p.tstamp = now + uniform(3 * kNsecPerMsec);
      if (checker.enqueue(q, p, now) != Verdict::queued) give_back(p);
    } else if (op < 80) {
      for (int k = 0; k < 4; ++k)
        if (Packet* p = checker.dequeue(q, now))
          give_back(*p);
        else
          break;
    } else if (op < 95) {
      now += uniform(400 * kNsecPerUsec);
    } else if (op < 98) {
      FqConfig c = q.config();
      c.limit = static_cast<std::uint32_t>(10 + uniform(40));
      c.flow_limit = static_cast<std::uint32_t>(3 + uniform(10));
      c.ce_threshold_us = uniform(2) ? kCeThresholdDisabled : 300;
      c.timer_slack_ns = uniform(2) ? 0 : 20'000;
      if (uniform(3) == 0) c.quantum = 0;  // refused
      checker.change(q, c, now, give_back);
    } else {
      checker.reset(q, give_back);
    }
    checker.check(q, now);
  }
  return failure;
}

// Paced: flows get throttled (maxrate, owner rates, time stamps) and latest
// has no fast path. Unpaced: nothing is ever throttled.
FqConfig config(Compat c, bool paced = true) {
  FqConfig cfg;
  cfg.compat = c;
  cfg.limit = 40;
  cfg.flow_limit = 8;
  if (paced) cfg.maxrate = 20'000'000;
  return cfg;
}

TEST(Invariants, BothSchedulersPass) {
  for (Compat c : {Compat::latest, Compat::linux_5_7})
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      reference::FqScheduler ref(config(c));
      EXPECT_EQ(drive(ref, seed), "") << to_string(c) << " seed " << seed;
      FqScheduler fast(config(c));
      EXPECT_EQ(drive(fast, seed), "") << to_string(c) << " seed " << seed;
      Faulty clean(config(c), Fault::none);
      EXPECT_EQ(drive(clean, seed), "") << to_string(c) << " seed " << seed;
    }
}

// A time stamp of ~0 passes the signed horizon test (docs/fq-rules.md#departure-time-and-horizon) and makes its flow
// due at ~0: throttled for good, and time_next_delayed_flow stays ~0, so no
// wake-up is asked for (docs/fq-rules.md#arming-the-watchdog). The checker accepts exactly that (found by the
// fuzzer, fuzz/corpus/scheduler_diff/tstamp_never).
TEST(Invariants, TimestampNeverThrottlesWithoutWakeUp) {
  for (Compat c : {Compat::latest, Compat::linux_5_7}) {
    reference::FqScheduler q(config(c));
    std::string failure;
    inv::Checker<reference::FqScheduler> checker(q, [&](const std::string& w) { failure = w; });
    FlowOwner o;
    o.id = 7;
    o.tcp = true;
    Packet p{};
    p.len = 1000;
    p.owner = &o;
    p.tstamp = kNever;
    const Time now = 10 * kNsecPerSec;
    EXPECT_EQ(checker.enqueue(q, p, now), Verdict::queued);
    EXPECT_EQ(checker.dequeue(q, now), nullptr);
    checker.check(q, now);
    EXPECT_EQ(failure, "") << to_string(c);
    EXPECT_EQ(q.stats(now).throttled_flows, 1U);
    EXPECT_EQ(q.time_next_delayed_flow(), kNever);
    EXPECT_EQ(q.watchdog().request_count(), 0U);
    q.reset();
  }
}

struct Case {
  const char* name;
  Fault fault;
  const char* expected;  // part of the checker's message
  bool paced = true;
};

class FaultFound : public ::testing::TestWithParam<Case> {};

TEST_P(FaultFound, CheckerReportsIt) {
  for (Compat c : {Compat::latest, Compat::linux_5_7}) {
    Faulty q(config(c, GetParam().paced), GetParam().fault);
    const std::string failure = drive(q, 7, GetParam().paced);
    EXPECT_NE(failure.find(GetParam().expected), std::string::npos)
        << to_string(c) << ": expected \"" << GetParam().expected << "\", got \"" << failure << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Invariants, FaultFound,
    ::testing::Values(Case{"early", Fault::early, "left before its time"},
                      Case{"swap", Fault::swap, "per-flow order", /*paced=*/false},
                      Case{"lie_queued", Fault::lie_queued, "enqueue verdict queued, the model says"},
                      Case{"backlog", Fault::backlog, "backlog is"},
                      Case{"dequeued_count", Fault::dequeued_count, "offered != dequeued + drops + purged + qlen"},
                      Case{"ce_always", Fault::ce_always, "CE"},
                      Case{"no_watchdog", Fault::no_watchdog, "no watchdog queued"},
                      Case{"late_watchdog", Fault::late_watchdog, "watchdog soft expiry"},
                      Case{"accept_invalid", Fault::accept_invalid, "accepted a configuration validate() refuses"},
                      Case{"refused_altered", Fault::refused_altered, "a refused change() altered the scheduler"},
                      Case{"throttled_hidden", Fault::throttled_hidden, "throttled"}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace ufq::test
