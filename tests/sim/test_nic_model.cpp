// The NIC model: serialisation at line rate, ring space, completion
// interrupts coalesced by tx-usecs and tx-frames, completions in order.
#include <gtest/gtest.h>

#include <vector>

#include "ufq/sim/nic_model.hpp"

namespace ufq::sim {
namespace {

struct Fixture {
  EventQueue q;
  std::vector<Packet> pkts = std::vector<Packet>(64);
  std::vector<std::pair<Time, std::uint64_t>> completed;  // (time, cookie)
  std::vector<Time> polls;
  NicModel nic;
  explicit Fixture(NicConfig cfg)
      : nic(q, cfg, [this](Packet& p) { completed.emplace_back(q.now(), p.cookie); },
            [this] { polls.push_back(q.now()); }) {
    for (std::size_t i = 0; i < pkts.size(); ++i) {
      pkts[i].len = 1226;  // + 24 overhead = 1250 bytes = 10000 bits: 100 ns at 100 Gbit/s
      pkts[i].cookie = i;
    }
  }
};

NicConfig config(Time tx_usecs, std::uint32_t tx_frames, std::uint32_t ring = 8) {
  NicConfig c;
  c.line_rate_bps = 100'000'000'000;
  c.ring_size = ring;
  c.tx_usecs = tx_usecs;
  c.tx_frames = tx_frames;
  c.irq_latency = 50;
  return c;
}

TEST(NicModel, SerialisesBackToBackAtLineRate) {
  Fixture f(config(1000, 64));
  ASSERT_TRUE(f.nic.xmit(f.pkts[0], true));
  ASSERT_TRUE(f.nic.xmit(f.pkts[1], false));
  EXPECT_EQ(f.nic.wire_free(), 200u);  // 2 x 100 ns
  EXPECT_EQ(f.nic.stats().doorbells, 1u);
  // First completion at 100, interrupt tx_usecs later (1100), handler at 1150.
  f.q.run();
  ASSERT_EQ(f.completed.size(), 2u);
  EXPECT_EQ(f.completed[0], (std::pair<Time, std::uint64_t>{1150, 0}));
  EXPECT_EQ(f.completed[1], (std::pair<Time, std::uint64_t>{1150, 1}));
  EXPECT_EQ(f.polls, std::vector<Time>{1150});
  EXPECT_EQ(f.nic.stats().interrupts, 1u);
}

// An interrupt counts from its firing on, before its handler runs (the
// queue's relay arms the handler without a call; stats() adds it), also when
// xmit moved it earlier (a plain event then, raise_irq), and never on the
// dummy device.
TEST(NicModel, InterruptsCountFromTheirFiring) {
  Fixture f(config(1000, 64));
  ASSERT_TRUE(f.nic.xmit(f.pkts[0], false));
  f.q.run_until(1099);
  EXPECT_EQ(f.nic.stats().interrupts, 0u);
  f.q.run_until(1100);  // fired, handler due at 1150
  EXPECT_EQ(f.nic.stats().interrupts, 1u);
  EXPECT_TRUE(f.polls.empty());
  f.q.run_until(1150);
  EXPECT_EQ(f.nic.stats().interrupts, 1u);
  EXPECT_EQ(f.polls, std::vector<Time>{1150});

  Fixture g(config(1'000'000, 3));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.nic.xmit(g.pkts[static_cast<std::size_t>(i)], i < 2));
  g.q.run_until(299);
  EXPECT_EQ(g.nic.stats().interrupts, 0u);
  g.q.run_until(300);  // moved to the third completion
  EXPECT_EQ(g.nic.stats().interrupts, 1u);
  EXPECT_TRUE(g.polls.empty());
  g.q.run();
  EXPECT_EQ(g.polls, std::vector<Time>{350});
  EXPECT_EQ(g.nic.stats().interrupts, 1u);

  NicConfig d = config(1000, 64);
  d.dummy = true;
  Fixture h(d);
  ASSERT_TRUE(h.nic.xmit(h.pkts[0], false));
  h.q.run_until(10);
  EXPECT_EQ(h.nic.stats().interrupts, 0u);
  h.q.run();
  EXPECT_EQ(h.nic.stats().interrupts, 0u);
  EXPECT_EQ(h.polls, std::vector<Time>{50});
}

// Packets posted between an interrupt and its handler, past tx-frames, do
// not move the interrupt again: the handler runs at its time, the next
// interrupt comes from what it left.
TEST(NicModel, XmitBetweenTheInterruptAndItsHandler) {
  Fixture f(config(1000, 2, 16));
  ASSERT_TRUE(f.nic.xmit(f.pkts[0], false));  // done at 100: interrupt at 1100
  f.q.run_until(1100);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(f.nic.xmit(f.pkts[static_cast<std::size_t>(i)], i < 3));  // done 1200, 1300, 1400
  f.q.run();
  const std::vector<std::pair<Time, std::uint64_t>> want{{1150, 0}, {1350, 1}, {1350, 2}, {2450, 3}};
  EXPECT_EQ(f.completed, want);
  EXPECT_EQ(f.nic.stats().interrupts, 3u);
}

TEST(NicModel, TxFramesFiresEarly) {
  Fixture f(config(1'000'000, 3));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.nic.xmit(f.pkts[static_cast<std::size_t>(i)], i < 2));
  f.q.run();
  // The third completion (at 300) reaches tx_frames: interrupt at 300, handler 350.
  ASSERT_EQ(f.polls.size(), 1u);
  EXPECT_EQ(f.polls[0], 350u);
  EXPECT_EQ(f.completed.size(), 3u);
}

TEST(NicModel, RingFullRefusesAndCounts) {
  Fixture f(config(1000, 64, 2));
  EXPECT_EQ(f.nic.tx_room(), 2u);
  EXPECT_TRUE(f.nic.xmit(f.pkts[0], true));
  EXPECT_TRUE(f.nic.xmit(f.pkts[1], true));
  EXPECT_EQ(f.nic.tx_room(), 0u);
  EXPECT_FALSE(f.nic.xmit(f.pkts[2], false));
  EXPECT_EQ(f.nic.stats().ring_full, 1u);
  f.q.run();
  EXPECT_EQ(f.nic.tx_room(), 2u);
  EXPECT_EQ(f.nic.stats().completions, 2u);
}

TEST(NicModel, PacketsStillOnTheWireWaitForTheNextInterrupt) {
  Fixture f(config(0, 64));
  // tx_usecs 0: the interrupt comes at the first completion (100); the second
  // packet is still on the wire then and is reclaimed by a second interrupt.
  ASSERT_TRUE(f.nic.xmit(f.pkts[0], true));
  ASSERT_TRUE(f.nic.xmit(f.pkts[1], false));
  f.q.run();
  ASSERT_EQ(f.completed.size(), 2u);
  EXPECT_EQ(f.completed[0].first, 150u);
  EXPECT_EQ(f.completed[1].first, 250u);
  EXPECT_EQ(f.nic.stats().interrupts, 2u);
}

TEST(NicModel, WireIdlesBetweenBursts) {
  Fixture f(config(1000, 64));
  ASSERT_TRUE(f.nic.xmit(f.pkts[0], false));
  f.q.run_until(5000);
  ASSERT_TRUE(f.nic.xmit(f.pkts[1], false));
  EXPECT_EQ(f.nic.wire_free(), 5100u);
}

// stats().packets is derived (completions + descriptors in the ring), not
// counted per xmit: it must equal the accepted xmits at every moment, with
// refusals, partial reclaims and the dummy device's immediate frees.
TEST(NicModel, PacketsCountsEveryAcceptedXmitAtAnyMoment) {
  for (const bool dummy : {false, true}) {
    SCOPED_TRACE(dummy ? "dummy" : "ring");
    NicConfig cfg = config(0, 64, 4);
    cfg.dummy = dummy;
    Fixture f(cfg);
    std::uint64_t accepted = 0, refused = 0;
    std::size_t next = 0;
    for (int round = 0; round < 12; ++round) {
      // 1 to 6 packets into a ring of 4: some rounds fill it and are refused.
      const int n = 1 + round % 6;
      for (int k = 0; k < n; ++k) {
        if (f.nic.xmit(f.pkts[next % f.pkts.size()], k + 1 < n)) {
          ++accepted;
          ++next;
        } else {
          ++refused;
        }
        EXPECT_EQ(f.nic.stats().packets, accepted);
      }
      // Reclaim part of the ring (the wire takes 100 ns a packet).
      f.q.run_until(f.q.now() + 150);
      EXPECT_EQ(f.nic.stats().packets, accepted);
      EXPECT_EQ(f.nic.stats().completions + (4 - f.nic.tx_room()), accepted);
    }
    f.q.run();
    EXPECT_EQ(f.nic.stats().packets, accepted);
    EXPECT_EQ(f.nic.stats().completions, accepted);
    EXPECT_EQ(f.nic.stats().ring_full, refused);
    EXPECT_GT(refused, 0u);
  }
}

}  // namespace
}  // namespace ufq::sim
