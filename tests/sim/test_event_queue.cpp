#include "ufq/sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "alloc_counter.hpp"

namespace ufq::sim {
namespace {

struct Record {
  Time time;
  int id;
  bool operator==(const Record&) const = default;
};

TEST(EventQueue, EmptyQueue) {
  EventQueue q(5);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), kNever);
  EXPECT_FALSE(q.run_next());
  EXPECT_EQ(q.run(), 0u);
  EXPECT_EQ(q.run_until(10), 0u);
  EXPECT_EQ(q.now(), 10u);
}

TEST(EventQueue, RunsByTimeThenArmingOrder) {
  EventQueue q;
  std::vector<Record> trace;
  std::vector<std::unique_ptr<Event>> ev;
  for (int i = 0; i < 6; ++i) {
    ev.push_back(std::make_unique<Event>(q, [&, i] { trace.push_back({q.now(), i}); }));
  }
  q.schedule(*ev[0], 20);
  q.schedule(*ev[1], 10);
  q.schedule(*ev[2], 20);
  q.schedule(*ev[3], 10);
  q.schedule(*ev[4], 15);
  q.schedule(*ev[5], 20);
  q.schedule(*ev[0], 20);  // re-arming for the same time moves it behind 2 and 5
  EXPECT_EQ(q.size(), 6u);
  EXPECT_EQ(q.next_time(), 10u);
  EXPECT_EQ(ev[4]->when(), 15u);
  EXPECT_EQ(q.run(), 6u);
  const std::vector<Record> want{{10, 1}, {10, 3}, {15, 4}, {20, 2}, {20, 5}, {20, 0}};
  EXPECT_EQ(trace, want);
  EXPECT_EQ(q.now(), 20u);
  EXPECT_EQ(q.events_run(), 6u);
}

TEST(EventQueue, CancelAndMove) {
  EventQueue q;
  std::vector<int> trace;
  Event a(q, [&] { trace.push_back(1); });
  Event b(q, [&] { trace.push_back(2); });
  Event c(q, [&] { trace.push_back(3); });
  q.schedule(a, 10);
  q.schedule(b, 20);
  q.schedule(c, 30);
  EXPECT_TRUE(q.cancel(b));
  EXPECT_FALSE(b.armed());
  EXPECT_FALSE(q.cancel(b));
  q.schedule(c, 5);  // earlier
  q.schedule(a, 40);  // later
  q.run();
  EXPECT_EQ(trace, (std::vector<int>{3, 1}));
}

TEST(EventQueue, CallbackRearmsItselfAndRunUntilIsInclusive) {
  EventQueue q;
  std::vector<Time> fired;
  Event tick(q, {});
  tick.set_callback([&] {
    fired.push_back(q.now());
    q.schedule(tick, q.now() + 10);
  });
  q.schedule(tick, 0);
  EXPECT_EQ(q.run_until(30), 4u);  // 0, 10, 20, 30
  EXPECT_EQ(fired, (std::vector<Time>{0, 10, 20, 30}));
  EXPECT_EQ(q.now(), 30u);
  EXPECT_EQ(tick.when(), 40u);
  EXPECT_EQ(q.run_until(35), 0u);
  EXPECT_EQ(q.now(), 35u);
}

TEST(EventQueue, CallbackMayScheduleAtNow) {
  EventQueue q;
  std::vector<int> trace;
  Event later(q, [&] { trace.push_back(2); });
  Event other(q, [&] { trace.push_back(3); });
  Event first(q, [&] {
    trace.push_back(1);
    q.schedule(later, q.now());
  });
  q.schedule(first, 7);
  q.schedule(other, 7);
  q.run();
  EXPECT_EQ(trace, (std::vector<int>{1, 3, 2}));  // `later` was armed last
}

TEST(EventQueue, RejectsThePastAndNever) {
  EventQueue q;
  Event e(q, [] {});
  q.run_until(100);
  EXPECT_THROW(q.schedule(e, 99), std::logic_error);
  EXPECT_THROW(q.schedule(e, kNever), std::logic_error);
  EXPECT_THROW(q.run_until(50), std::logic_error);
  EventQueue other;
  EXPECT_THROW(other.schedule(e, 200), std::logic_error);
  EXPECT_NO_THROW(q.schedule(e, 100));
}

TEST(EventQueue, DestroyingAnArmedEventCancelsIt) {
  EventQueue q;
  int runs = 0;
  Event keep(q, [&] { ++runs; });
  q.schedule(keep, 10);
  {
    Event gone(q, [&] { runs += 100; });
    q.schedule(gone, 5);
    EXPECT_EQ(q.size(), 2u);
  }
  EXPECT_EQ(q.size(), 1u);
  q.run();
  EXPECT_EQ(runs, 1);
}

TEST(EventQueue, QueueMayDieBeforeItsEvents) {
  auto q = std::make_unique<EventQueue>();
  Event e(*q, [] {});
  q->schedule(e, 10);
  q.reset();
  EXPECT_FALSE(e.armed());
}  // e's destructor must not touch the dead queue

// The event that has just run keeps its heap slot until the next operation
// (event_queue.hpp): size, next_time and destruction must not see it.
TEST(EventQueue, TheEventThatRanIsGoneAtOnce) {
  auto q = std::make_unique<EventQueue>();
  std::size_t size_inside = 99;
  Time next_inside = 0;
  auto first = std::make_unique<Event>(*q, [&] {
    size_inside = q->size();
    next_inside = q->next_time();
  });
  Event second(*q, [] {});
  Event third(*q, [] {});
  q->schedule(*first, 1);
  q->schedule(second, 3);
  q->schedule(third, 2);
  ASSERT_TRUE(q->run_next());
  EXPECT_EQ(size_inside, 2u);
  EXPECT_EQ(next_inside, 2u);
  EXPECT_FALSE(first->armed());
  EXPECT_EQ(q->size(), 2u);
  EXPECT_EQ(q->next_time(), 2u);
  first.reset();  // the one that ran dies; the queue must not touch it again
  ASSERT_TRUE(q->run_next());
  EXPECT_EQ(q->now(), 2u);
  EXPECT_TRUE(q->cancel(second));
  EXPECT_TRUE(q->empty());
  EXPECT_EQ(q->next_time(), kNever);
  q->schedule(third, 5);
  ASSERT_TRUE(q->run_next());
  Event last(*q, [] {});
  q.reset();  // dies with the slot of `third` vacant
}

// A random program of arms, moves and cancels, many at equal times, run against
// the heap and against a linear-scan reference of the same contract.
struct RandomProgram {
  // Armed at once: at most this many. 40 passes the queue's 32 near slots now
  // and then; the many-events tests below set 300 (most entries in the heap).
  static inline int events = 40;
  // > 0: one arm in `reserved` is decided early with reserve_seq() and made
  // at the callback's end with schedule_reserved() (the hrtimer's deferred
  // device write), after the callback's other arms.
  static inline int reserved = 0;
  // Actions per callback: 0 .. actions-1 (mean 1 keeps about a dozen armed;
  // 6 keeps about a third of `events` armed).
  static inline int actions = 3;
  // > 0: one arm in `relays` is a relay (schedule_relay; the deferred arm
  // then schedule_relay_reserved) whose second stage comes 1-8 ns later.
  static inline int relays = 0;
  static Time relay(std::mt19937_64& rng) {
    if (relays == 0 || rng() % static_cast<std::uint64_t>(relays) != 0) return 0;
    return 1 + rng() % 8;
  }
  static inline std::size_t most_armed = 0;  // the queue's largest size() in the last run
  // Spread > 0: a quarter of the arms go up to `spread` ns ahead (far events,
  // often moved back near), the rest within 8 ns (ties).
  static inline Time spread = 0;
  static Time delay(std::mt19937_64& rng) {
    const std::uint64_t r = rng();
    return spread && r % 4 == 0 ? (r >> 8) % spread : r % 8;
  }

  template <class Schedule, class Cancel, class Now, class Reserve, class ScheduleReserved>
  static void step(std::mt19937_64& rng, int self, Schedule&& schedule, Cancel&& cancel, Now&& now,
                   Reserve&& reserve, ScheduleReserved&& schedule_reserved, std::vector<Record>& trace) {
    trace.push_back({now(), self});
    const bool defer = reserved > 0 && rng() % static_cast<std::uint64_t>(reserved) == 0;
    const std::uint64_t seq = defer ? reserve() : 0;
    const int deferred = defer ? static_cast<int>(rng() % events) : -1;
    const Time deferred_at = defer ? now() + delay(rng) : 0;
    const Time deferred_relay = defer ? relay(rng) : 0;
    const int n = static_cast<int>(rng() % static_cast<std::uint64_t>(actions));
    for (int k = 0; k < n; ++k) {
      const int target = static_cast<int>(rng() % events);
      if (rng() % 4 == 0) {
        cancel(target);
      } else {
        const Time at = now() + delay(rng);  // few distinct times: many ties
        schedule(target, at, relay(rng));
      }
    }
    if (defer) schedule_reserved(deferred, deferred_at, seq, deferred_relay);
  }
};

// The trace of the program's callbacks, and after each the time and the
// relays pending (-1 - their number); `events` gets the events run (first
// stages too).
std::vector<Record> run_heap(std::uint64_t seed, std::uint64_t steps, std::uint64_t& events) {
  std::mt19937_64 rng(seed);
  EventQueue q;
  std::vector<Record> trace;
  std::vector<std::unique_ptr<Event>> ev;
  for (int i = 0; i < RandomProgram::events; ++i) ev.push_back(std::make_unique<Event>(q, nullptr));
  // A quarter of them keep the explicit form for their relays (the hrtimer's
  // device: Event::set_explicit_relay), beside the others' relay list.
  for (int i = 0; i < RandomProgram::events; i += 4) ev[static_cast<std::size_t>(i)]->set_explicit_relay(true);
  auto schedule = [&](int i, Time t, Time relay) {
    Event& e = *ev[static_cast<std::size_t>(i)];
    if (relay && !e.armed() && i % 2 == 1)
      q.schedule_unarmed_relay(e, t, relay);  // the NIC's interrupt
    else if (relay)
      q.schedule_relay(e, t, relay);
    else
      q.schedule(e, t);
  };
  auto cancel = [&](int i) { q.cancel(*ev[static_cast<std::size_t>(i)]); };
  auto now = [&] { return q.now(); };
  auto reserve = [&] { return q.reserve_seq(); };
  auto schedule_reserved = [&](int i, Time t, std::uint64_t seq, Time relay) {
    Event& e = *ev[static_cast<std::size_t>(i)];
    if (relay && !e.armed())
      q.schedule_relay_reserved_unarmed(e, t, relay, seq);  // the hrtimer's device at its handler's end
    else if (relay)
      q.schedule_relay_reserved(e, t, relay, seq);
    else
      q.schedule_reserved(e, t, seq);
  };
  for (int i = 0; i < RandomProgram::events; ++i)
    ev[static_cast<std::size_t>(i)]->set_callback(
        [&, i] { RandomProgram::step(rng, i, schedule, cancel, now, reserve, schedule_reserved, trace); });
  for (int i = 0; i < RandomProgram::events; ++i) schedule(i, RandomProgram::delay(rng), 0);
  RandomProgram::most_armed = 0;
  // run_next() runs one callback, the relays' first stages due before it
  // included.
  for (std::uint64_t s = 0; s < steps && q.run_next(); ++s) {
    RandomProgram::most_armed = std::max(RandomProgram::most_armed, q.size());
    int pending = 0;
    for (const auto& e : ev) pending += e->relay_pending();
    trace.push_back({q.now(), -1 - pending});
  }
  events = q.events_run();
  return trace;
}

// The same program on a linear scan of plain (time, sequence) slots, each
// relay's first stage a slot of its own.
std::vector<Record> run_reference(std::uint64_t seed, std::uint64_t steps, std::uint64_t& events) {
  std::mt19937_64 rng(seed);
  struct Slot {
    bool armed = false;
    Time time = 0;
    std::uint64_t seq = 0;
    Time relay = 0;  // a relay's first stage: the delay to its second
  };
  std::vector<Slot> slots(static_cast<std::size_t>(RandomProgram::events));
  std::uint64_t next_seq = 0;
  Time current = 0;
  std::vector<Record> trace;
  auto schedule = [&](int i, Time t, Time relay) {
    slots[static_cast<std::size_t>(i)] = {true, t, next_seq++, relay};
  };
  auto cancel = [&](int i) { slots[static_cast<std::size_t>(i)].armed = false; };
  auto now = [&] { return current; };
  auto reserve = [&] { return next_seq++; };
  auto schedule_reserved = [&](int i, Time t, std::uint64_t seq, Time relay) {
    slots[static_cast<std::size_t>(i)] = {true, t, seq, relay};
  };
  for (int i = 0; i < RandomProgram::events; ++i) schedule(i, RandomProgram::delay(rng), 0);
  events = 0;
  for (std::uint64_t s = 0; s < steps;) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
      const Slot& c = slots[static_cast<std::size_t>(i)];
      if (!c.armed) continue;
      const Slot* b = best < 0 ? nullptr : &slots[static_cast<std::size_t>(best)];
      if (!b || c.time < b->time || (c.time == b->time && c.seq < b->seq)) best = i;
    }
    if (best < 0) break;
    Slot& b = slots[static_cast<std::size_t>(best)];
    current = b.time;
    ++events;
    if (b.relay) {
      // The first stage arms the second, as an event armed by an event.
      b = {true, current + b.relay, next_seq++, 0};
      continue;
    }
    b.armed = false;
    RandomProgram::step(rng, best, schedule, cancel, now, reserve, schedule_reserved, trace);
    ++s;
    int pending = 0;
    for (const Slot& c : slots) pending += c.armed && c.relay;
    trace.push_back({current, -1 - pending});
  }
  return trace;
}

void expect_equal_to_reference(Time spread) {
  RandomProgram::spread = spread;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    std::uint64_t ea = 0, eb = 0, eref = 0;
    const auto a = run_heap(seed, 5000, ea);
    const auto b = run_heap(seed, 5000, eb);
    const auto ref = run_reference(seed, 5000, eref);
    ASSERT_EQ(a, b) << "seed " << seed;
    EXPECT_EQ(ea, eref) << "seed " << seed;
    for (std::size_t i = 0; i < std::min(a.size(), ref.size()); ++i) {
      ASSERT_EQ(a[i], ref[i]) << "seed " << seed << " step " << i << " prev " << (i ? a[i-1].time : 0) << "," << (i ? a[i-1].id : 0);
    }
    ASSERT_EQ(a.size(), ref.size()) << "seed " << seed;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i], ref[i]) << "seed " << seed << " step " << i;
    }
  }
}

TEST(EventQueue, DeterministicAndEqualToLinearReference) { expect_equal_to_reference(0); }

// Times up to 1 ms ahead: far events deep in the heap, moved earlier and later
// (the simulator's clock-event devices: a tick far ahead, a watchdog near).
TEST(EventQueue, FarAndNearEventsEqualToLinearReference) {
  expect_equal_to_reference(1'000'000);
  expect_equal_to_reference(100'000);
  RandomProgram::spread = 0;
}

// Hundreds armed at once: most entries beyond the near array, so arms fall
// into the heap, the near array fills and spills its last entry, refills from
// the heap when it runs empty, and events move between the two.
TEST(EventQueue, ManyArmedEventsEqualToLinearReference) {
  RandomProgram::events = 300;
  RandomProgram::actions = 6;
  for (Time spread : {0, 1'000, 1'000'000}) {
    expect_equal_to_reference(spread);
    EXPECT_GT(RandomProgram::most_armed, 64u) << "spread " << spread;
  }
  RandomProgram::actions = 3;
  RandomProgram::events = 40;
  RandomProgram::spread = 0;
}

// The random programs with `reserved` and `relays` set, at 40 and 300 events
// (the near array fills, spills and refills) and three spreads; the knobs are
// put back afterwards.
void expect_mix_equal_to_reference(int reserved, int relays) {
  RandomProgram::reserved = reserved;
  RandomProgram::relays = relays;
  for (int events : {40, 300}) {
    RandomProgram::events = events;
    RandomProgram::actions = events > 40 ? 6 : 3;
    expect_equal_to_reference(0);
    expect_equal_to_reference(1'000);
    expect_equal_to_reference(1'000'000);
  }
  RandomProgram::actions = 3;
  RandomProgram::relays = 0;
  RandomProgram::reserved = 0;
  RandomProgram::events = 40;
  RandomProgram::spread = 0;
}

// Arms decided early and made late (reserve_seq, schedule_reserved) run where
// an arm made at the reservation would have, among ties and moves.
TEST(EventQueue, ReservedSequenceNumbersEqualToLinearReference) { expect_mix_equal_to_reference(2, 0); }

// Relays (the hrtimer's device and handler as one event: schedule_relay,
// schedule_relay_reserved) run as an event that arms another would, among
// ties, moves (of either stage), cancels and reserved arms, near and far.
TEST(EventQueue, RelaysEqualToLinearReference) { expect_mix_equal_to_reference(2, 3); }

TEST(EventQueue, RelayStages) {
  EventQueue q;
  int runs = 0;
  Event e(q, [&] { ++runs; });
  Event other(q, [] {});
  q.schedule_relay(e, 10, 5);
  EXPECT_TRUE(e.relay_pending());
  EXPECT_EQ(e.when(), 10u);
  q.schedule(other, 15);  // armed before the second stage: runs first
  EXPECT_EQ(q.run_until(12), 1u);
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(e.armed());
  EXPECT_FALSE(e.relay_pending());
  EXPECT_EQ(e.when(), 15u);
  EXPECT_EQ(q.run_until(15), 2u);
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(e.armed());
  // A cancelled first stage never arms the second; a delay of 0 is a plain arm.
  q.schedule_relay(e, 20, 5);
  EXPECT_TRUE(q.cancel(e));
  EXPECT_FALSE(e.relay_pending());
  q.run_until(30);
  EXPECT_EQ(runs, 1);
  q.schedule_relay(e, 31, 0);
  EXPECT_FALSE(e.relay_pending());
  EXPECT_EQ(q.run_until(31), 1u);
  EXPECT_EQ(runs, 2);
  EXPECT_THROW(q.schedule_relay(e, 40, kNever - 40), std::logic_error);
}

// A relay's second stage is filed before its first stage comes due, under a
// number not known yet: an arm for the same time made before the first stage
// is due still runs before it, one made after runs after it; a second relay
// for that time takes the explicit form, and each first stage counts as an
// event run.
TEST(EventQueue, RelaySecondStageAmongTies) {
  EventQueue q;
  std::vector<int> order;
  Event r(q, [&] { order.push_back(1); });
  Event r2(q, [&] { order.push_back(2); });
  Event before(q, [&] { order.push_back(3); });
  Event between(q, [&] { order.push_back(4); });
  Event after(q, [&] { order.push_back(5); });
  Event fire(q, [&] {
    order.push_back(6);
    EXPECT_FALSE(r.relay_pending());  // its first stage, at 10, came before this event
    q.schedule(after, 15);
  });
  q.schedule(before, 15);
  q.schedule_relay(r, 10, 5);
  q.schedule(between, 15);  // the first stage is not due yet: before the second
  q.schedule(fire, 10);
  q.schedule_relay(r2, 12, 3);  // second stage at 15 too
  EXPECT_TRUE(r.relay_pending());
  EXPECT_TRUE(r2.relay_pending());
  EXPECT_EQ(r.when(), 10u);
  EXPECT_EQ(q.next_time(), 10u);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.run_until(12), 3u);  // r's first stage, fire, r2's first stage
  EXPECT_EQ(r.when(), 15u);
  EXPECT_FALSE(r2.relay_pending());
  EXPECT_EQ(q.run(), 5u);
  EXPECT_EQ(order, (std::vector<int>{6, 3, 4, 1, 5, 2}));
  EXPECT_EQ(q.events_run(), 8u);
  // Moved and cancelled before its first stage: the second never runs.
  q.schedule_relay(r, 20, 5);
  q.schedule_relay(r, 21, 5);
  EXPECT_EQ(r.when(), 21u);
  EXPECT_TRUE(q.cancel(r));
  EXPECT_FALSE(r.relay_pending());
  EXPECT_FALSE(q.maybe_due_now());
  EXPECT_EQ(q.run(), 0u);
  EXPECT_EQ(order.size(), 6u);
}

// A reserved number places the event before arms made after the reservation
// at the same instant, and after those made before it.
TEST(EventQueue, ReservedArmRunsInItsReservedPlace) {
  EventQueue q;
  std::vector<int> order;
  Event a(q, [&] { order.push_back(1); });
  Event b(q, [&] { order.push_back(2); });
  Event c(q, [&] { order.push_back(3); });
  q.schedule(a, 10);
  const std::uint64_t seq = q.reserve_seq();
  q.schedule(c, 10);
  q.schedule_reserved(b, 10, seq);
  q.run();
  const std::vector<int> want{1, 2, 3};
  EXPECT_EQ(order, want);
}

// Near entries hold the time alone: among entries of the same time, an arm
// with an older (reserved) number, and a cancel, find their place by the
// events' own keys, from either end of the near array.
TEST(EventQueue, TiesInTheNearArrayOrderedByTheEventsKeys) {
  EventQueue q;
  std::vector<int> order;
  std::vector<std::unique_ptr<Event>> e, x;
  for (int i = 0; i < 8; ++i) {
    e.push_back(std::make_unique<Event>(q, [&order, i] { order.push_back(i); }));
    x.push_back(std::make_unique<Event>(q, [&order, i] { order.push_back(100 + i); }));
  }
  Event before(q, [&] { order.push_back(-1); });
  Event after(q, [&] { order.push_back(-2); });
  q.schedule(before, 9);
  std::vector<std::uint64_t> seq;
  for (int i = 0; i < 8; ++i) {
    seq.push_back(q.reserve_seq());
    q.schedule(*e[static_cast<std::size_t>(i)], 10);
  }
  q.schedule(after, 11);
  for (int i : {7, 0, 5, 3}) q.schedule_reserved(*x[static_cast<std::size_t>(i)], 10, seq[static_cast<std::size_t>(i)]);
  EXPECT_TRUE(q.cancel(*e[4]));
  EXPECT_TRUE(q.cancel(*e[1]));
  q.run();
  const std::vector<int> want{-1, 100, 0, 2, 103, 3, 105, 5, 6, 107, 7, -2};
  EXPECT_EQ(order, want);
}

// A callback may run at its own end what it would arm for now() only when no
// other event is due at now() (the simulator's NET_TX after a timer interrupt).
TEST(EventQueue, MaybeDueNowSeesAnEventDueAtTheSameInstant) {
  EventQueue q;
  std::vector<int> seen;  // maybe_due_now() inside the probe, once per run
  Event other(q, [] {});
  Event probe(q, [&] { seen.push_back(q.maybe_due_now() ? 1 : 0); });
  q.schedule(probe, 10);
  q.schedule(other, 20);
  q.run_until(10);  // at 10 nothing else is due
  q.schedule(probe, 20);
  q.schedule(other, 30);  // both moved later (their entries stay early)
  q.schedule(probe, 30);
  Event third(q, [] {});  // due at 30 too, after the probe
  q.schedule(third, 30);
  q.run_until(40);
  const std::vector<int> want{0, 1};  // at 10: nothing else; at 30: `other` has run, `third` is due
  EXPECT_EQ(seen, want);
  EXPECT_FALSE(q.maybe_due_now());
  q.schedule(other, 40);
  EXPECT_TRUE(q.maybe_due_now());
}

// run_before(t, seq), a queue run in stretches beside another (the
// simulator's queues apart): what is due before t runs, and at t only what was
// armed before next_seq() gave seq, also when armed by a callback in the
// stretch; maybe_due_now() is true at t meanwhile (the other queue's event is
// due there) and false again after.
TEST(EventQueue, RunBeforeStopsAtTheKey) {
  EventQueue q;
  std::vector<int> ran, due_now;
  Event a(q, [&] { ran.push_back(1); });
  Event late(q, [&] { ran.push_back(6); });  // armed at 10 by `b`, after the mark
  Event b(q, [&] {
    ran.push_back(2);
    due_now.push_back(q.maybe_due_now() ? 1 : 0);
    q.schedule(late, 10);
  });
  Event c(q, [&] { ran.push_back(3); });
  Event d(q, [&] { ran.push_back(4); });
  Event early(q, [&] {  // due at 7, before t: it runs, with nothing else due at 7
    ran.push_back(5);
    due_now.push_back(q.maybe_due_now() ? 1 : 0);
  });
  q.schedule(a, 5);
  q.schedule(b, 10);
  q.schedule(early, 7);
  const std::uint64_t mark = q.next_seq();
  q.schedule(c, 12);
  q.schedule(d, 20);
  EXPECT_EQ(q.run_before(10, mark), 3u);
  EXPECT_EQ(ran, (std::vector<int>{1, 5, 2}));
  // At 7 nothing is due; at 10 nothing of this queue but the stretch's end.
  EXPECT_EQ(due_now, (std::vector<int>{0, 1}));
  EXPECT_EQ(q.now(), 10u);
  EXPECT_TRUE(late.armed());
  EXPECT_EQ(q.run_before(10, mark), 0u);  // nothing more below the key
  EXPECT_EQ(q.run_before(15, 0), 2u);     // late (at 10), then c (at 12)
  EXPECT_EQ(ran, (std::vector<int>{1, 5, 2, 6, 3}));
  EXPECT_EQ(q.now(), 12u);  // left at the last event's time
  EXPECT_THROW(q.run_before(9, 0), std::logic_error);
  EXPECT_THROW(q.run_before(kNever, 0), std::logic_error);
  EXPECT_EQ(q.run_until(20), 1u);
  EXPECT_EQ(ran.back(), 4);
  EXPECT_FALSE(q.maybe_due_now());  // nothing armed, no stretch running
}

TEST(EventQueue, SteadyStateDoesNotAllocate) {
  EventQueue q;
  std::vector<std::unique_ptr<Event>> ev;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 64; ++i) {
    ev.push_back(std::make_unique<Event>(q, nullptr));
    Event& self = *ev.back();
    self.set_callback([&q, &self, &rng] { q.schedule(self, q.now() + 1 + rng() % 100); });
    q.schedule(self, rng() % 100);
  }
  q.run_until(1000);  // warm up
  const std::uint64_t before = test::allocation_count();
  q.run_until(100000);
  for (auto& e : ev) q.cancel(*e);
  for (auto& e : ev) q.schedule(*e, q.now() + 5);
  q.run_until(200000);
  EXPECT_EQ(test::allocation_count(), before);
  EXPECT_GT(q.events_run(), 50000u);
}

}  // namespace
}  // namespace ufq::sim
