#include "ufq/sim/hook.hpp"

#include <gtest/gtest.h>

#include "alloc_counter.hpp"
#include "ufq/packet.hpp"

namespace ufq::sim {
namespace {

TEST(Hook, PlainFunctionGetsItsContextAndArguments) {
  int calls = 0;
  Packet p;
  p.len = 7;
  Hook<Packet&> h([](void* ctx, Packet& pkt) { *static_cast<int*>(ctx) += static_cast<int>(pkt.len); }, &calls);
  ASSERT_TRUE(h);
  h(p);
  h(p);
  EXPECT_EQ(calls, 14);
}

TEST(Hook, LambdaAndEmpty) {
  int calls = 0;
  Hook<> h([&] { ++calls; });
  ASSERT_TRUE(h);
  h();
  EXPECT_EQ(calls, 1);
  Hook<> empty;
  EXPECT_FALSE(empty);
  empty();  // does nothing
  Hook<> null(nullptr);
  EXPECT_FALSE(null);
  null();
}

// A copy of a plain hook is a plain hook (not a std::function wrapping it):
// copying allocates nothing and the copy calls the same function.
TEST(Hook, CopyKeepsThePlainForm) {
  int calls = 0;
  Hook<> h([](void* ctx) { ++*static_cast<int*>(ctx); }, &calls);
  const std::uint64_t before = test::allocation_count();
  Hook<> copy(h);  // a non-const lvalue: must pick the copy constructor
  Hook<> assigned;
  assigned = h;
  EXPECT_EQ(test::allocation_count(), before);
  copy();
  assigned();
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace ufq::sim
