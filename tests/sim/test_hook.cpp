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

// A callable hook is called through a trampoline whose context is its own
// copy of the callable: a copy calls its own copy (a mutable lambda's state is
// not shared), a moved hook keeps calling it, and the moved-from one is empty.
TEST(Hook, CallableCopiesAndMovesKeepTheirOwnCallable) {
  int out = 0;
  Hook<> h([n = 0, &out]() mutable { out = ++n; });
  Hook<> copy(h);
  h();
  h();
  EXPECT_EQ(out, 2);
  copy();
  EXPECT_EQ(out, 1);  // its own n
  Hook<> moved(std::move(h));
  EXPECT_FALSE(h);  // NOLINT: the moved-from state is specified
  h();              // does nothing
  EXPECT_EQ(out, 1);
  moved();
  EXPECT_EQ(out, 3);  // h's n, now moved's
  Hook<> assigned;
  assigned = copy;  // copy assignment: a copy of copy's n (1)
  {
    Hook<> gone(std::move(copy));  // copy's callable ends with `gone`
  }
  assigned();
  EXPECT_EQ(out, 2);
  Hook<> target([&] { out = 100; });
  target = std::move(assigned);  // move assignment replaces the callable
  target();
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(assigned);  // NOLINT
}

}  // namespace
}  // namespace ufq::sim
