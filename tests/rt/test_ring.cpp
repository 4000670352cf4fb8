#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ufq/rt/mpmc_ring.hpp"
#include "pace/packet_pool.hpp"

using ufq::rt::MpmcRing;

TEST(MpmcRing, FifoAndCapacity) {
  MpmcRing<int> r(5);  // rounded up to 8
  EXPECT_EQ(r.capacity(), 8U);
  int v = 0;
  EXPECT_FALSE(r.try_pop(v));
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(r.try_push(i));
  EXPECT_FALSE(r.try_push(99));  // full: refused, not overwritten
  EXPECT_EQ(r.size_approx(), 8U);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(r.try_pop(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(r.try_pop(v));
  // Wrap around many times.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(r.try_push(i));
    ASSERT_TRUE(r.try_pop(v));
    ASSERT_EQ(v, i);
  }
}

TEST(MpmcRing, ManyProducersOneConsumerLoseNothing) {
  constexpr int kProducers = 4;
  constexpr std::uint64_t kEach = 200'000;
  MpmcRing<std::uint64_t> r(1024);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&r, p] {
      for (std::uint64_t i = 0; i < kEach; ++i) {
        const std::uint64_t v = (static_cast<std::uint64_t>(p) << 32) | i;
        while (!r.try_push(v)) std::this_thread::yield();
      }
    });
  std::vector<std::uint64_t> next(kProducers, 0);
  std::uint64_t got = 0;
  while (got < kProducers * kEach) {
    std::uint64_t v = 0;
    if (!r.try_pop(v)) {
      std::this_thread::yield();
      continue;
    }
    const auto p = static_cast<std::size_t>(v >> 32);
    ASSERT_LT(p, next.size());
    ASSERT_EQ(v & 0xFFFFFFFFU, next[p]) << "each producer's values arrive in order, once";
    ++next[p];
    ++got;
  }
  for (auto& t : producers) t.join();
  std::uint64_t v = 0;
  EXPECT_FALSE(r.try_pop(v));
}

TEST(PacketPool, AcquireReleaseAll) {
  ufq::rt::PacketPool pool(16);
  std::vector<ufq::Packet*> got;
  while (ufq::Packet* p = pool.acquire()) got.push_back(p);
  EXPECT_EQ(got.size(), 16U);
  EXPECT_EQ(pool.in_use_approx(), 16U);
  for (auto* p : got) {
    pool.meta(*p).seq = static_cast<std::uint32_t>(p->cookie);
    pool.release(*p);
  }
  EXPECT_EQ(pool.in_use_approx(), 0U);
  ufq::Packet* p = pool.acquire();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->tstamp, 0U);
  EXPECT_EQ(p->owner, nullptr);
}
