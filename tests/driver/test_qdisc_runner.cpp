// The driver loop shared by the simulator and the pacer: bulk dequeue with
// xmit_more, quota, device room, requeue on refusal (nothing lost, order kept).
#include <gtest/gtest.h>

#include <vector>

#include "ufq/driver/qdisc_runner.hpp"

namespace ufq {
namespace {

struct FakeDevice {
  std::uint32_t room = 1000;
  int refuse_at = -1;  // refuse the n-th xmit call (0-based), once
  int calls = 0;
  std::vector<std::uint64_t> sent;  // cookies
  std::vector<bool> more;
  std::uint32_t tx_room() const { return room; }
  bool xmit(Packet& p, bool m) {
    if (calls++ == refuse_at) return false;
    sent.push_back(p.cookie);
    more.push_back(m);
    --room;
    return true;
  }
};

struct Harness {
  FqScheduler fq{[] {
    FqConfig c;
    c.compat = Compat::linux_5_7;
    return c;
  }()};
  std::vector<Packet> pkts = std::vector<Packet>(200);
  FlowOwner owner{.id = 1};
  void enqueue(std::size_t n, Time tstamp = 0) {
    for (std::size_t i = 0; i < n; ++i) {
      pkts[i].len = 100;
      pkts[i].cookie = i;
      pkts[i].owner = &owner;
      pkts[i].tstamp = tstamp;
      ASSERT_EQ(fq.enqueue(pkts[i], 0), Verdict::queued);
    }
  }
};

TEST(QdiscRunner, SendsEverythingDueAsOneBulkWithXmitMore) {
  Harness h;
  h.enqueue(5);
  FakeDevice dev;
  QdiscRunner runner(h.fq, dev);
  const RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 5u);
  EXPECT_EQ(r.end, RunEnd::idle);
  EXPECT_EQ(dev.sent, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(dev.more, (std::vector<bool>{true, true, true, true, false}));
  EXPECT_EQ(runner.stats().batch[5], 1u);
  EXPECT_DOUBLE_EQ(runner.stats().mean_batch(), 5.0);
}

// Bulks of one packet (bulk = 1, and a single packet due): each is handed
// over, the run's first as well as the later ones (the loop starts with the
// first bulk in hand).
TEST(QdiscRunner, OnePacketBulksAreEachSent) {
  Harness h;
  h.enqueue(3);
  FakeDevice dev;
  QdiscRunner runner(h.fq, dev, RunnerConfig{.quota = 64, .bulk = 1});
  RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 3u);
  EXPECT_EQ(r.end, RunEnd::idle);
  EXPECT_EQ(dev.sent, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(dev.more, (std::vector<bool>{false, false, false}));
  h.enqueue(1);
  r = runner.run(0);
  EXPECT_EQ(r.sent, 1u);
  EXPECT_EQ(dev.sent.size(), 4u);
  QdiscRunner bulk(h.fq, dev);  // the default bulk, one packet due
  h.enqueue(1);
  r = bulk.run(0);
  EXPECT_EQ(r.sent, 1u);
  EXPECT_EQ(r.end, RunEnd::idle);
  EXPECT_EQ(dev.sent.size(), 5u);
  EXPECT_EQ(bulk.stats().batch[1], 1u);
}

TEST(QdiscRunner, QuotaEndsTheRun) {
  Harness h;
  h.enqueue(100);
  FakeDevice dev;
  QdiscRunner runner(h.fq, dev, RunnerConfig{.quota = 64, .bulk = 16});
  RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 64u);
  EXPECT_EQ(r.end, RunEnd::quota);
  // Bulks of 16: the last packet of each has more = false.
  EXPECT_FALSE(dev.more[15]);
  EXPECT_TRUE(dev.more[14]);
  r = runner.run(0);
  EXPECT_EQ(r.sent, 36u);
  EXPECT_EQ(r.end, RunEnd::idle);
}

// A quota below the bulk size bounds the run's first bulk too (the first
// dequeue asks for min(room, bulk, quota)).
TEST(QdiscRunner, QuotaBelowTheBulkBoundsTheFirstBulk) {
  Harness h;
  h.enqueue(20);
  FakeDevice dev;
  QdiscRunner runner(h.fq, dev, RunnerConfig{.quota = 8, .bulk = 64});
  RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 8u);
  EXPECT_EQ(r.end, RunEnd::quota);
  EXPECT_EQ(dev.sent.size(), 8u);
  EXPECT_FALSE(dev.more[7]);
  EXPECT_EQ(h.fq.qlen(), 12u);  // nothing dequeued beyond the quota
  r = runner.run(0);
  EXPECT_EQ(r.sent, 8u);
  EXPECT_EQ(runner.stats().runs, 2u);
  EXPECT_EQ(runner.stats().packets, 16u);
  EXPECT_EQ(runner.stats().batch[8], 2u);
}

TEST(QdiscRunner, DeviceRoomLimitsTheRun) {
  Harness h;
  h.enqueue(10);
  FakeDevice dev;
  dev.room = 3;
  QdiscRunner runner(h.fq, dev);
  RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 3u);
  EXPECT_EQ(r.end, RunEnd::device);
  EXPECT_EQ(runner.held(), 0u);  // only what fits is dequeued
  dev.room = 100;
  r = runner.run(0);
  EXPECT_EQ(r.sent, 7u);
}

TEST(QdiscRunner, RefusedPacketIsRequeuedInOrder) {
  Harness h;
  h.enqueue(6);
  FakeDevice dev;
  dev.refuse_at = 2;  // the third packet is refused
  QdiscRunner runner(h.fq, dev);
  RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 2u);
  EXPECT_EQ(r.end, RunEnd::device);
  EXPECT_EQ(runner.held(), 4u);  // the refused one and the rest of its bulk
  EXPECT_EQ(runner.stats().requeues, 1u);
  r = runner.run(0);
  EXPECT_EQ(r.sent, 4u);
  EXPECT_EQ(dev.sent, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(runner.held(), 0u);
  // Nothing lost: the scheduler's accounting plus the runner's hold.
  const FqStats st = h.fq.stats(0);
  EXPECT_EQ(st.offered, st.dequeued + st.drops + st.qlen);
}

TEST(QdiscRunner, IdleRunLeavesTheWakeUpInTheWatchdog) {
  Harness h;
  h.enqueue(1, /*tstamp=*/50'000);
  FakeDevice dev;
  QdiscRunner runner(h.fq, dev);
  const RunResult r = runner.run(0);
  EXPECT_EQ(r.sent, 0u);
  EXPECT_EQ(r.end, RunEnd::idle);
  ASSERT_TRUE(h.fq.watchdog().queued());
  EXPECT_EQ(h.fq.watchdog().soft_expiry(), 50'000u);
  EXPECT_EQ(h.fq.watchdog().hard_expiry(), 60'000u);  // + timer_slack 10us
  EXPECT_EQ(runner.stats().batch[0], 1u);
  EXPECT_EQ(runner.stats().runs, 1u);
  EXPECT_EQ(runner.stats().runs_sending, 0u);
  EXPECT_EQ(runner.stats().packets, 0u);
  // The device full: the run ends at once, for the device.
  dev.room = 0;
  EXPECT_EQ(runner.run(60'000).end, RunEnd::device);
  EXPECT_EQ(runner.stats().runs, 2u);
  EXPECT_EQ(runner.stats().batch[0], 2u);
}

}  // namespace
}  // namespace ufq
