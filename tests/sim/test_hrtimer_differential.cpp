// Differential test: the hrtimer model (kernel-style incremental reprogramming
// over an intrusive red-black tree) against a brute-force reference that
// states the same behaviour as an invariant over a plain array:
//   * outside the handler the device is always programmed for the earliest
//     queued hard expiry, and it is written exactly when that value changes;
//   * the handler reads now once, repeatedly runs the queued timer with the
//     smallest (hard expiry, start order) while its soft expiry <= now, then
//     writes the device once.
// Both are driven by the same random program of starts, restarts and cancels,
// from outside and from inside timer callbacks, and must produce identical
// traces, states and counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hrtimer_model.hpp"

namespace ufq::sim {
namespace {

constexpr int kTimers = 6;

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- the reference -------------------------------------------------------

// How often the random programs reach the interesting corners (counted by the
// reference, so a weakened generator shows up as a failed coverage check).
struct Coverage {
  std::uint64_t blocked_with_due_behind = 0;  // edge case 22 situations
  std::uint64_t ran_after_start_in_same_walk = 0;
  std::uint64_t writes_while_pending = 0;
  std::uint64_t moved_later = 0;  // a write outside the handler to a later time
  std::uint64_t device_stops = 0;
};
Coverage g_coverage;

class ReferenceCpu {
 public:
  using RunHook = std::function<void(int)>;

  ReferenceCpu(EventQueue& q, Time latency)
      : q_(q), latency_(latency), device_(q, [this] { fired(); }), irq_(q, [this] { handle(); }) {}

  void set_run_hook(RunHook hook) { hook_ = std::move(hook); }

  void start(int i, Time soft, Time hard) {
    timers_[static_cast<std::size_t>(i)] = {true, soft, hard, seq_++, in_irq_};
    if (!in_irq_) sync();
  }
  bool cancel(int i) {
    Slot& t = timers_[static_cast<std::size_t>(i)];
    if (!t.queued) return false;
    t.queued = false;
    if (!in_irq_) sync();
    return true;
  }
  bool queued(int i) const { return timers_[static_cast<std::size_t>(i)].queued; }
  Time soft(int i) const { return timers_[static_cast<std::size_t>(i)].soft; }
  Time hard(int i) const { return timers_[static_cast<std::size_t>(i)].hard; }
  Time programmed() const { return expires_next_; }
  bool in_interrupt() const { return in_irq_; }
  HrtimerStats stats;

 private:
  struct Slot {
    bool queued = false;
    Time soft = 0;
    Time hard = 0;
    std::uint64_t seq = 0;
    bool started_in_irq = false;
  };
  int front() const {
    int best = -1;
    for (int i = 0; i < kTimers; ++i) {
      const Slot& c = timers_[static_cast<std::size_t>(i)];
      if (!c.queued) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      const Slot& b = timers_[static_cast<std::size_t>(best)];
      if (c.hard < b.hard || (c.hard == b.hard && c.seq < b.seq)) best = i;
    }
    return best;
  }
  Time min_hard() const {
    const int f = front();
    return f < 0 ? kNever : timers_[static_cast<std::size_t>(f)].hard;
  }
  void sync() {
    const Time m = min_hard();
    if (m != expires_next_) write(m);
  }
  void write(Time m) {
    if (!in_irq_ && m != kNever && expires_next_ != kNever && m > expires_next_) {
      ++g_coverage.moved_later;
    }
    if (irq_.armed()) ++g_coverage.writes_while_pending;
    if (m == kNever) ++g_coverage.device_stops;
    expires_next_ = m;
    if (m == kNever) {
      ++stats.device_stops;
      q_.cancel(device_);
      return;
    }
    ++stats.reprograms;
    if (irq_.armed()) {
      q_.cancel(device_);
    } else {
      q_.schedule(device_, std::max(m, q_.now()));
    }
  }
  void fired() {
    if (latency_ == 0) {
      handle();
    } else {
      q_.schedule(irq_, q_.now() + latency_);
    }
  }
  void handle() {
    ++stats.interrupts;
    in_irq_ = true;
    expires_next_ = kNever;
    const Time now = q_.now();
    for (Slot& t : timers_) t.started_in_irq = false;
    for (;;) {
      const int f = front();
      if (f >= 0 && timers_[static_cast<std::size_t>(f)].soft > now) {
        for (const Slot& t : timers_) {
          if (t.queued && t.soft <= now) {
            ++g_coverage.blocked_with_due_behind;
            break;
          }
        }
      }
      if (f < 0 || timers_[static_cast<std::size_t>(f)].soft > now) break;
      if (timers_[static_cast<std::size_t>(f)].started_in_irq) ++g_coverage.ran_after_start_in_same_walk;
      timers_[static_cast<std::size_t>(f)].queued = false;
      ++stats.timers_run;
      hook_(f);
    }
    in_irq_ = false;
    write(min_hard());
  }

  EventQueue& q_;
  Time latency_;
  Event device_;
  Event irq_;
  RunHook hook_;
  Slot timers_[kTimers];
  std::uint64_t seq_ = 0;
  Time expires_next_ = kNever;
  bool in_irq_ = false;
};

// ---- the model behind the same interface ---------------------------------

class ModelCpu {
 public:
  using RunHook = std::function<void(int)>;

  ModelCpu(EventQueue& q, Time latency) : cpu_(q, HrtimerConfig{.entry_latency = latency}) {
    for (int i = 0; i < kTimers; ++i) {
      timers_.push_back(std::make_unique<Hrtimer>(cpu_, [this, i] { hook_(i); }));
    }
  }
  void set_run_hook(RunHook hook) { hook_ = std::move(hook); }
  void start(int i, Time soft, Time hard) { cpu_.start(t(i), soft, hard); }
  bool cancel(int i) { return cpu_.cancel(t(i)); }
  bool queued(int i) const { return t(i).queued(); }
  Time soft(int i) const { return t(i).soft_expiry(); }
  Time hard(int i) const { return t(i).hard_expiry(); }
  Time programmed() const { return cpu_.programmed(); }
  bool in_interrupt() const { return cpu_.in_interrupt(); }
  const HrtimerStats& stats() const { return cpu_.stats(); }

 private:
  Hrtimer& t(int i) const { return *timers_[static_cast<std::size_t>(i)]; }
  HrtimerModel cpu_;
  std::vector<std::unique_ptr<Hrtimer>> timers_;
  RunHook hook_;
};

const HrtimerStats& stats_of(const ModelCpu& m) { return m.stats(); }
const HrtimerStats& stats_of(const ReferenceCpu& r) { return r.stats; }

// ---- the random program --------------------------------------------------

struct Line {  // one observation
  Time time;
  int kind;  // 0 = timer ran, 1 = state after an operation
  int id;
  std::uint64_t digest;
  bool operator==(const Line&) const = default;
};

template <class Cpu>
std::uint64_t digest(const Cpu& cpu) {
  std::uint64_t h = mix(cpu.programmed());
  for (int i = 0; i < kTimers; ++i) {
    h = mix(h ^ (cpu.queued(i) ? 1 : 0));
    if (cpu.queued(i)) h = mix(mix(h ^ cpu.soft(i)) ^ cpu.hard(i));
  }
  const HrtimerStats& s = stats_of(cpu);
  return mix(h ^ s.interrupts ^ (s.timers_run << 16) ^ (s.reprograms << 32) ^ (s.device_stops << 48));
}

template <class Cpu>
std::vector<Line> run_program(std::uint64_t seed, int ops, Time latency) {
  EventQueue q;
  Cpu cpu(q, latency);
  std::vector<Line> trace;
  std::vector<std::uint64_t> run_count(kTimers, 0);
  std::uint64_t irq_seen = ~std::uint64_t{0};
  int past_starts_this_irq = 0;

  // Timer callbacks: what they do depends only on (seed, timer, nth run).
  cpu.set_run_hook([&](int i) {
    const Time now = q.now();
    trace.push_back({now, 0, i, 0});
    if (stats_of(cpu).interrupts != irq_seen) {
      irq_seen = stats_of(cpu).interrupts;
      past_starts_this_irq = 0;
    }
    const std::uint64_t nth = run_count[static_cast<std::size_t>(i)]++;
    const std::uint64_t r = mix(seed ^ mix(static_cast<std::uint64_t>(i) << 40 ^ nth));
    const int other = static_cast<int>((r >> 8) % kTimers);
    const Time d = 1 + (r >> 16) % 200;
    const Time slack = (r >> 32) % 3 == 0 ? 0 : (r >> 40) % 120;
    switch (r % 10) {
      case 0: case 1: case 2: case 3:
        break;
      case 4: case 5:
        cpu.start(i, now + d, now + d + slack);  // restart self, not due yet
        break;
      case 6: case 7:
        if (past_starts_this_irq < 2 && (r >> 48) % 2 == 0 && now >= d) {
          ++past_starts_this_irq;  // already due: may run in this same walk
          cpu.start(other, now - d, now - d + slack);
        } else {
          cpu.start(other, now + d, now + d + slack);
        }
        break;
      default:
        cpu.cancel(other);
        break;
    }
  });

  std::uint64_t rng = seed;
  auto next = [&rng] { return rng = mix(rng); };
  int done = 0;
  Event driver(q, nullptr);
  driver.set_callback([&] {
    const std::uint64_t r = next();
    const int i = static_cast<int>((r >> 8) % kTimers);
    const Time now = q.now();
    const std::uint64_t kind = r % 10;
    if (kind < 6) {
      const Time back = (r >> 16) % 8 == 0 ? std::min<Time>(now, (r >> 24) % 40) : 0;
      const Time soft = now - back + (back ? 0 : (r >> 24) % 300);
      const Time slack = (r >> 40) % 4 == 0 ? 0 : (r >> 44) % 150;
      cpu.start(i, soft, soft + slack);
    } else if (kind < 9) {
      cpu.cancel(i);
    }
    trace.push_back({now, 1, i, digest(cpu)});
    if (++done < ops) {
      const std::uint64_t g = next() % 8;
      q.schedule(driver, now + (g == 0 ? 0 : (next() % 60)));  // equal times happen
    }
  });
  q.schedule(driver, 0);
  q.run_until(1'000'000'000);
  trace.push_back({q.now(), 1, -1, digest(cpu)});
  return trace;
}

TEST(HrtimerModelRandom, MatchesBruteForceReference) {
  std::uint64_t lines = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const Time latency = std::vector<Time>{0, 0, 3, 25}[seed % 4];
    const auto model = run_program<ModelCpu>(seed, 2000, latency);
    const auto ref = run_program<ReferenceCpu>(seed, 2000, latency);
    ASSERT_EQ(model.size(), ref.size()) << "seed " << seed;
    for (std::size_t k = 0; k < model.size(); ++k) {
      ASSERT_EQ(model[k], ref[k]) << "seed " << seed << " line " << k << " t=" << model[k].time
                                  << " kind=" << model[k].kind << " id=" << model[k].id;
    }
    lines += model.size();
  }
  EXPECT_GT(lines, 600'000u);
  EXPECT_GT(g_coverage.blocked_with_due_behind, 1000u);
  EXPECT_GT(g_coverage.ran_after_start_in_same_walk, 1000u);
  EXPECT_GT(g_coverage.writes_while_pending, 100u);
  EXPECT_GT(g_coverage.moved_later, 1000u);
  EXPECT_GT(g_coverage.device_stops, 1000u);
  std::cout << "coverage: blocked walks with due timers behind " << g_coverage.blocked_with_due_behind
            << ", same-walk runs " << g_coverage.ran_after_start_in_same_walk
            << ", writes while pending " << g_coverage.writes_while_pending << ", moved later "
            << g_coverage.moved_later << ", device stops " << g_coverage.device_stops << "\n";
}

TEST(HrtimerModelRandom, Deterministic) {
  EXPECT_EQ(run_program<ModelCpu>(42, 3000, 3), run_program<ModelCpu>(42, 3000, 3));
}

}  // namespace
}  // namespace ufq::sim
