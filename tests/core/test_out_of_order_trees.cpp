// The fast scheduler's pool of out-of-order trees (src/core/out_of_order_trees.hpp)
// against a std::map model: random acquire/release over flow indices whose
// home slots in the index collide,
// checking that every flow keeps its own tree and packets, and that the pool
// stops growing once it holds the most trees ever in use at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "out_of_order_trees.hpp"

namespace {

using ufq::Packet;
using ufq::detail::OutOfOrderTrees;
using ufq::detail::PacketTree;

TEST(OutOfOrderTrees, EachFlowKeepsItsTree) {
  std::mt19937_64 rng(7);
  OutOfOrderTrees trees;
  // flow -> the packets in its tree (by time_to_send_, unique here).
  std::map<std::uint32_t, std::vector<Packet*>> model;
  std::vector<Packet> packets(4000);
  std::vector<Packet*> free;
  for (Packet& p : packets) free.push_back(&p);
  // Flow indices scattered over a million flows (so that their home slots
  // collide), a run of neighbours, and the internal queue's index.
  std::vector<std::uint32_t> flows;
  for (std::uint32_t i = 0; i < 150; ++i)
    flows.push_back(std::uniform_int_distribution<std::uint32_t>(0, 1U << 20)(rng));
  for (std::uint32_t i = 0; i < 50; ++i) flows.push_back(5000 + i);
  flows.push_back(0xFFFFFFFEU);
  std::size_t most = 0, bytes_at_most = 0;
  for (int step = 0; step < 200000; ++step) {
    const std::uint32_t f = flows[std::uniform_int_distribution<std::size_t>(0, flows.size() - 1)(rng)];
    auto it = model.find(f);
    if (it == model.end() || (std::bernoulli_distribution(0.6)(rng) && !free.empty())) {
      if (free.empty()) continue;
      Packet* p = free.back();
      free.pop_back();
      *p = Packet{};
      p->time_to_send_ = static_cast<ufq::Time>(step);
      trees.acquire(f).insert(*p);
      model[f].push_back(p);
    } else {
      // Take one packet out (the earliest, or any); the last one releases the tree.
      PacketTree& t = trees.get(f);
      std::vector<Packet*>& v = it->second;
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng);
      Packet* p = v[k];
      t.erase(t.iterator_to(*p));
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(k));
      free.push_back(p);
      if (v.empty()) {
        ASSERT_TRUE(t.empty());
        trees.release(f);
        model.erase(it);
      }
    }
    if (step % 997 == 0) {
      for (const auto& [flow, v] : model) {
        PacketTree& t = trees.get(flow);
        std::vector<Packet*> got;
        for (Packet& p : t) got.push_back(&p);
        ASSERT_EQ(got, v) << "flow " << flow << " at step " << step;
      }
    }
    if (model.size() > most) {
      most = model.size();
      bytes_at_most = trees.bytes();
    }
  }
  EXPECT_GT(most, 150U);
  // Grown to the most trees in use at once (the index to twice that), no further.
  EXPECT_EQ(trees.bytes(), bytes_at_most);
}

}  // namespace
