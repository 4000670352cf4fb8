// The fast scheduler's throttled set (src/core/throttled_set.hpp): the radix
// wheel alone and the set (lane + wheel) against a model that keeps every
// entry and takes the least by (t, seq). Random programs full of ties, due
// times spread over every level of the wheel, time going backwards, stale
// entries filtered out, clears; then the steady state allocates nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "alloc_counter.hpp"
#include "throttled_set.hpp"

namespace {

using ufq::Time;
using ufq::detail::before;
using ufq::detail::RadixWheel;
using ufq::detail::ThrottledSet;
using Entry = ufq::detail::ThrottleEntry;

bool same(const Entry& a, const Entry& b) { return a.t == b.t && a.seq == b.seq && a.idx == b.idx; }

// Every entry; the front is the least (t, seq).
class Model {
 public:
  void push(const Entry& e) { v_.push_back(e); }
  bool empty() const { return v_.empty(); }
  std::size_t size() const { return v_.size(); }
  const Entry& top() const { return *std::min_element(v_.begin(), v_.end(), before); }
  void pop() { v_.erase(std::min_element(v_.begin(), v_.end(), before)); }
  template <class Keep>
  void filter(const Keep& keep) {
    std::erase_if(v_, [&](const Entry& e) { return !keep(e); });
  }
  void clear() { v_.clear(); }
  std::vector<Entry> sorted() const {
    std::vector<Entry> s = v_;
    std::sort(s.begin(), s.end(), before);
    return s;
  }

 private:
  std::vector<Entry> v_;
};

template <class Set>
std::vector<Entry> contents(const Set& s) {
  std::vector<Entry> v;
  s.for_each([&](const Entry& e) { v.push_back(e); });
  std::sort(v.begin(), v.end(), before);
  return v;
}

// Due times for one push, around the release front `now` (which mostly
// grows): ties on a few values, neighbours within one bucket, offsets of every
// magnitude (every level of the wheel), earlier than `now` (time going
// backwards), and the ends of the 64-bit range.
class DueTimes {
 public:
  explicit DueTimes(std::uint64_t seed) : rng_(seed) {}
  Time next(Time now) {
    switch (pick(0, 9)) {
      case 0:
        return now + pick(0, 3) * 1000;  // ties
      case 1:
        return now + pick(0, 4095);  // within a bucket or two
      case 2:
        return now - std::min<Time>(now, pick(0, 1ULL << pick(0, 30)));  // backwards
      case 3:
        return pick(0, 1) ? ~Time{0} - pick(0, 3) : pick(0, 3);  // the ends
      default:
        return now + pick(0, 1ULL << pick(0, 44));  // any level
    }
  }
  std::uint64_t pick(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937_64 rng_;
};

// Runs one random program against the set and the model. `Ops` adapts the
// set's interface (the wheel and the set differ in push and pop).
template <class Ops>
void run_program(std::uint64_t seed, int steps, Ops ops) {
  DueTimes due(seed);
  Model model;
  Time now = 1'000'000'000;
  std::uint64_t seq = 0;
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t op = due.pick(0, 99);
    if (op < 50) {
      const Entry e{due.next(now), ++seq, static_cast<std::uint32_t>(due.pick(0, 1000))};
      ops.push(e);
      model.push(e);
    } else if (op < 94) {
      ASSERT_EQ(ops.empty(), model.empty()) << "step " << step;
      if (model.empty()) continue;
      const Entry got = ops.top();
      const Entry& want = model.top();
      ASSERT_TRUE(same(got, want)) << "step " << step << ": got (" << got.t << ", " << got.seq << ") want ("
                                   << want.t << ", " << want.seq << ")";
      ops.pop();
      model.pop();
      // The release front follows the entries, with jumps either way.
      if (want.t < ~Time{0} / 2) now = std::max(now, want.t);
      if (due.pick(0, 200) == 0) now -= std::min<Time>(now, due.pick(0, 1ULL << 36));
      if (due.pick(0, 200) == 0) now += due.pick(0, 1ULL << 40);
    } else if (op < 97) {
      const std::uint64_t r = due.pick(0, 4);
      const auto keep = [r](const Entry& e) { return e.idx % 5 != r; };
      ops.filter(keep);
      model.filter(keep);
      ASSERT_EQ(ops.size(), model.size()) << "step " << step;
    } else if (op < 98) {
      ASSERT_EQ(ops.size(), model.size()) << "step " << step;
      const std::vector<Entry> got = contents(ops.set()), want = model.sorted();
      ASSERT_EQ(got.size(), want.size()) << "step " << step;
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(same(got[i], want[i])) << "step " << step;
    } else if (due.pick(0, 20) == 0) {
      ops.clear();
      model.clear();
    }
  }
  // Drained to the end in order.
  while (!model.empty()) {
    ASSERT_FALSE(ops.empty());
    const Entry got = ops.top();
    ASSERT_TRUE(same(got, model.top())) << "drain: got (" << got.t << ", " << got.seq << ")";
    ops.pop();
    model.pop();
  }
  ASSERT_TRUE(ops.empty());
}

struct WheelOps {
  RadixWheel& w;
  void push(const Entry& e) { w.push(e); }
  bool empty() const { return w.empty(); }
  std::size_t size() const { return w.size(); }
  Entry top() { return w.top(); }
  void pop() { w.pop(); }
  template <class Keep>
  void filter(const Keep& keep) {
    w.filter(keep);
  }
  void clear() { w.clear(); }
  const RadixWheel& set() const { return w; }
};

struct SetOps {
  ThrottledSet& s;
  bool from_lane = false;
  void push(const Entry& e) { s.push(e.t, e.seq, e.idx); }
  bool empty() const { return s.empty(); }
  std::size_t size() const { return s.size(); }
  Entry top() {
    const auto f = s.top();
    from_lane = f.from_lane;
    return *f.entry;
  }
  void pop() { s.pop(from_lane); }
  template <class Keep>
  void filter(const Keep& keep) {
    s.compact(keep);
  }
  void clear() { s.clear(); }
  const ThrottledSet& set() const { return s; }
};

TEST(RadixWheel, MatchesTheModel) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RadixWheel w;
    run_program(seed, 20000, WheelOps{w});
    if (HasFatalFailure()) FAIL() << "seed " << seed;
  }
}

TEST(ThrottledSet, MatchesTheModel) {
  for (std::uint64_t seed = 101; seed <= 140; ++seed) {
    ThrottledSet s;
    run_program(seed, 20000, SetOps{s});
    if (HasFatalFailure()) FAIL() << "seed " << seed;
  }
}

// Many entries on a few due times, pushed in no order: they leave by due time,
// then in push order.
TEST(RadixWheel, TiesLeaveInPushOrder) {
  RadixWheel w;
  std::mt19937_64 rng(3);
  const Time base = 5ULL << 40;
  std::vector<Entry> pushed;
  for (std::uint64_t seq = 1; seq <= 5000; ++seq) {
    const Time t = base + (rng() % 7) * (1ULL << (rng() % 30));
    pushed.push_back({t, seq, static_cast<std::uint32_t>(seq)});
    w.push(pushed.back());
  }
  std::stable_sort(pushed.begin(), pushed.end(), [](const Entry& a, const Entry& b) { return a.t < b.t; });
  for (const Entry& e : pushed) {
    ASSERT_FALSE(w.empty());
    ASSERT_TRUE(same(w.top(), e)) << "seq " << e.seq;
    w.pop();
  }
  EXPECT_TRUE(w.empty());
}

// Throttles in due-time order (the scheduler's common case: the lane alone).
// The lane fills and grows past its first sizes (64, 128, ...) with its head
// anywhere in the ring, empties and refills, against the model; and an
// in-order throttle stays in the lane after the lane was drained, cleared or
// compacted empty, even one earlier than the last entry before a clear or
// compaction (the wheel is then never used).
TEST(ThrottledSet, InOrderThrottlesFillGrowAndWrapTheLane) {
  ThrottledSet s;
  SetOps ops{s};
  Model model;
  std::mt19937_64 rng(7);
  Time t = 1'000'000;
  std::uint64_t seq = 0;
  const auto push = [&](Time at) {
    const Entry e{at, ++seq, static_cast<std::uint32_t>(seq % 997)};
    ops.push(e);
    model.push(e);
  };
  const auto pop_checked = [&] {
    ASSERT_FALSE(ops.empty());
    const Entry got = ops.top();
    ASSERT_TRUE(same(got, model.top())) << "got (" << got.t << ", " << got.seq << ")";
    ops.pop();
    model.pop();
  };
  for (int round = 0; round < 200; ++round) {
    const std::uint64_t pushes = rng() % 300, pops = rng() % 300;
    for (std::uint64_t i = 0; i < pushes; ++i) push(t += rng() % 3);  // ties too
    for (std::uint64_t i = 0; i < pops && !model.empty(); ++i) {
      pop_checked();
      if (HasFatalFailure()) FAIL() << "round " << round;
    }
    ASSERT_EQ(s.size(), model.size()) << "round " << round;
    if (round % 50 == 49) {  // drained empty: the next in-order throttle joins the lane
      while (!model.empty()) pop_checked();
      push(t);
    } else if (round % 50 == 24) {  // cleared: even an earlier due time
      s.clear();
      model.clear();
      push(t -= 1000);
    } else if (round % 50 == 37) {  // compacted empty: likewise
      ops.filter([](const Entry&) { return false; });
      model.clear();
      push(t -= 1000);
    }
    ASSERT_TRUE(s.wheel_empty()) << "round " << round;
  }
  while (!model.empty()) {
    pop_checked();
    if (HasFatalFailure()) return;
  }
  EXPECT_TRUE(ops.empty());
}

// The scheduler's pattern (a flow released, throttled again anywhere within
// the next round): once the pool has grown to the most entries held, nothing
// more is allocated.
TEST(ThrottledSet, SteadyStateAllocatesNothing) {
  ThrottledSet s;
  std::mt19937_64 rng(11);
  const std::uint32_t flows = 20000;
  const Time round = 20'000'000;  // each flow due again within 20 ms
  Time now = 1'000'000'000;
  std::uint64_t seq = 0;
  for (std::uint32_t i = 0; i < flows; ++i) s.push(now + rng() % round, ++seq, i);
  const auto step = [&] {
    now += 1000;
    for (auto f = s.top(); f.entry && f.entry->t <= now; f = s.top()) {
      const std::uint32_t i = f.entry->idx;
      s.pop(f.from_lane);
      s.push(now + 1 + rng() % round, ++seq, i);
    }
  };
  for (int k = 0; k < 200000; ++k) step();  // ten rounds: the pool at its size
  const std::uint64_t before_count = ufq::test::allocation_count();
  for (int k = 0; k < 200000; ++k) step();
  EXPECT_EQ(ufq::test::allocation_count(), before_count);
  EXPECT_EQ(s.size(), flows);
}

}  // namespace
