// Priority handling: the 5.7 high-priority queue and the latest 3-band WRR
// (docs/fq-rules.md#classification step 1, #internal-queue, #choosing-a-flow): edge cases 29, 30, 31, 32.
#include "harness.hpp"

namespace ufq::test {
namespace {

TYPED_TEST_SUITE(EdgeCases, Schedulers);

// E29 (5.7): priority 7 (TC_PRIO_CONTROL) goes to the internal queue: served
// before all flows, not paced, not limited by flow_limit, highprio +1 each.
// Owner at 50 000 B/s (low-rate pacing), flow_limit 2: 2 priority-0 packets
// fill the flow (a third is dropped); 3 priority-7 packets are queued anyway and
// leave first, back to back, without touching the flow's pacing state; then p1,
// then the flow is paced.
TYPED_TEST(EdgeCases, E29_Priority7_S) {
  FqConfig cfg = make_cfg(Compat::linux_5_7);
  cfg.flow_limit = 2;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner o = rated_owner(1, 50000);
  std::vector<Packet*> normal, control;
  enqueue_n(q, pool, 2, {.len = 1514, .owner = &o}, kT0, &normal);
  EXPECT_EQ(enqueue_n(q, pool, 1, {.len = 1514, .owner = &o}, kT0)[0], Verdict::drop_flow_limit);
  enqueue_n(q, pool, 3, {.len = 1514, .owner = &o, .priority = 7}, kT0, &control);
  ASSERT_EQ(control.size(), 3U);
  EXPECT_EQ(q.internal_qlen(), 3U);
  EXPECT_EQ(q.stats(kT0).highprio_packets, 3U);
  // priority & 15 == 7 is what counts: 0x17 too.
  enqueue_n(q, pool, 1, {.len = 1514, .owner = &o, .priority = 0x17}, kT0, &control);
  EXPECT_EQ(q.internal_qlen(), 4U);

  auto out = drain(q, kT0);
  ASSERT_EQ(out.size(), 5U);
  EXPECT_EQ(std::vector<Packet*>(out.begin(), out.begin() + 4), control);
  EXPECT_EQ(out[4], normal[0]);
  const auto f = find_flow(q, owner_key(1));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->state, FlowState::throttled);
  EXPECT_EQ(f->time_next_packet, kT0 + 30'280'000);  // set by p1 only
  const FqStats st = q.stats(kT0);
  EXPECT_EQ(st.highprio_packets, 4U);
  EXPECT_EQ(st.flows_plimit, 1U);
  expect_consistent(q, kT0);
}

// E29 (latest): priority 7 maps to band 0 of the default priomap and is handled
// like any packet of its flow: counted by flow_limit, paced, highprio 0.
TYPED_TEST(EdgeCases, E29_Priority7_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.flow_limit = 2;
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner o = rated_owner(1, 50000);
  std::vector<Packet*> in;
  enqueue_n(q, pool, 2, {.len = 1514, .owner = &o}, kT0, &in);
  EXPECT_EQ(enqueue_n(q, pool, 1, {.len = 1514, .owner = &o, .priority = 7}, kT0)[0],
            Verdict::drop_flow_limit);
  FqStats st = q.stats(kT0);
  EXPECT_EQ(st.highprio_packets, 0U);
  EXPECT_EQ(q.internal_qlen(), 0U);

  TypeParam q2(make_cfg(Compat::latest));
  std::vector<Packet*> c;
  enqueue_n(q2, pool, 3, {.len = 1514, .owner = &o, .priority = 7}, kT0, &c);
  st = q2.stats(kT0);
  EXPECT_EQ(st.band_pkt_count, (std::array<std::uint32_t, kBands>{3, 0, 0}));
  EXPECT_EQ(find_flow(q2, owner_key(1))->band, 0U);
  EXPECT_EQ(drain(q2, kT0).size(), 1U);  // paced: 30.28 ms after each packet
  EXPECT_EQ(q2.stats(kT0).highprio_packets, 0U);
  expect_consistent(q2, kT0);
}

// Run `n` dequeues at one instant with two flows kept backlogged (each refilled
// to 20 packets of 1514 B), return bytes per flow.
template <Scheduler S>
std::pair<std::uint64_t, std::uint64_t> saturate(S& q, std::uint8_t prio_a,
                                                 std::uint8_t prio_b, int n) {
  PacketPool pool;
  FlowOwner a = slow_owner(1), b = slow_owner(2);
  std::uint64_t bytes_a = 0, bytes_b = 0;
  enqueue_n(q, pool, 20, {.len = 1514, .owner = &a, .priority = prio_a}, kT0);
  enqueue_n(q, pool, 20, {.len = 1514, .owner = &b, .priority = prio_b}, kT0);
  for (int i = 0; i < n; ++i) {
    Packet* p = q.dequeue(kT0);
    if (p == nullptr) {
      ADD_FAILURE() << "nothing to send at step " << i;
      break;
    }
    const bool is_a = p->owner == &a;
    (is_a ? bytes_a : bytes_b) += p->len;
    pool.release(*p);
    enqueue_n(q, pool, 1, {.len = 1514, .owner = is_a ? &a : &b, .priority = is_a ? prio_a : prio_b},
              kT0);
  }
  return {bytes_a, bytes_b};
}

// E30 (latest): two saturating unpaced flows, priority 6 (band 0) vs 1 (band 2):
// byte share = weights 589824 : 65536 = 9 : 1; band 0 vs band 1 (priority 0):
// 589824 : 196608 = 3 : 1. A full WRR cycle moves 655 360 (resp. 786 432) bytes;
// the share can be off by at most about one weight + one packet per band at
// the point where the run stops: over 100 000 packets (~230 resp. ~190 cycles)
// that is < 1 %; tolerance 2 %. 5.7 has no bands: plain DRR, 1 : 1.
TYPED_TEST(EdgeCases, E30_WrrShares) {
  {
    TypeParam q(make_cfg(Compat::latest));
    const auto [a, b] = saturate(q, 6, 1, 100000);
    EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(b), 9.0, 9.0 * 0.02);
  }
  {
    TypeParam q(make_cfg(Compat::latest));
    const auto [a, b] = saturate(q, 6, 0, 100000);
    EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(b), 3.0, 3.0 * 0.02);
  }
  {
    TypeParam q(make_cfg(Compat::linux_5_7));
    const auto [a, b] = saturate(q, 6, 1, 20000);
    EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(b), 1.0, 0.01);
  }
}

// E31 (latest, derived): brand-new flows are linked on band 0's new list
// whatever their packet's band (the flow's band is recorded after linking);
// the packet's band is recorded in the flow. On a fresh qdisc the first dequeue
// refills and examines band 1, then 2 (both without flows), then band 0.
// A (priority 6, band 0) then B (priority 1, band 2): both on band 0's new list
// -> A then B. (Had B been linked on band 2's list, band 2 would be examined
// before band 0 and B would leave first.)
TYPED_TEST(EdgeCases, E31_FirstBandServed_L) {
  TypeParam q(make_cfg(Compat::latest));
  PacketPool pool;
  FlowOwner a = slow_owner(1), b = slow_owner(2);
  std::vector<Packet*> in;
  enqueue_n(q, pool, 1, {.len = 1000, .owner = &a, .priority = 6}, kT0, &in);
  enqueue_n(q, pool, 1, {.len = 1000, .owner = &b, .priority = 1}, kT0, &in);
  ASSERT_EQ(in.size(), 2U);
  EXPECT_EQ(find_flow(q, owner_key(1))->band, 0U);
  EXPECT_EQ(find_flow(q, owner_key(2))->band, 2U);
  EXPECT_EQ(find_flow(q, owner_key(2))->state, FlowState::new_list);
  EXPECT_EQ(q.stats(kT0).band_pkt_count, (std::array<std::uint32_t, kBands>{1, 0, 1}));
  EXPECT_EQ(q.dequeue(kT0), in[0]);
  EXPECT_EQ(q.dequeue(kT0), in[1]);
  expect_consistent(q, kT0);
}

// E31, second half of the rule (derived): a detached flow is re-linked on the
// new list of the band of its *previous* packet (0 for a brand-new flow); only
// then is its band set to the new packet's band.
// Y (priority 1, band 2, 30 packets) then X (priority 6, band 0, 1 packet),
// both brand new, so both on band 0's new list:
//   calls 1-10: Y sends 10 x 1514 (credit 15140 -> 0)
//   call 11:    Y has credit 0 -> +3028, to band 2's old list; X sends
//   call 12:    X empty -> band 0 old list -> detached; band 0 has no flow ->
//               band 1 (none) -> band 2: Y sends (band 2 credit 65536 - 1514)
// Now X gets a band-2 packet: it must go to band 0's new list (X's previous
// band). Band 2 still has credit, so call 13 serves band 2: Y. (On band 2's new
// list X would come first.)
TYPED_TEST(EdgeCases, E31_RelinkOnPreviousBand_L) {
  TypeParam q(make_cfg(Compat::latest));
  PacketPool pool;
  FlowOwner x = slow_owner(1), y = slow_owner(2);
  enqueue_n(q, pool, 30, {.len = 1514, .owner = &y, .priority = 1}, kT0);
  enqueue_n(q, pool, 1, {.len = 1514, .owner = &x, .priority = 6}, kT0);
  for (int i = 0; i < 10; ++i) {
    Packet* p = q.dequeue(kT0);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->owner, &y) << i;
  }
  Packet* p = q.dequeue(kT0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->owner, &x);
  p = q.dequeue(kT0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->owner, &y);
  EXPECT_EQ(find_flow(q, owner_key(1))->state, FlowState::detached);
  EXPECT_EQ(find_flow(q, owner_key(1))->band, 0U);

  enqueue_n(q, pool, 1, {.len = 1514, .owner = &x, .priority = 1}, kT0);
  EXPECT_EQ(find_flow(q, owner_key(1))->band, 2U);
  EXPECT_EQ(find_flow(q, owner_key(1))->state, FlowState::new_list);
  p = q.dequeue(kT0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->owner, &y) << "X was linked on band 2's new list";
  expect_consistent(q, kT0);
}

// E32 (latest >= 6.11): weights 589824 196608 16384 and only 64 KB GSO packets
// (65226 B) in band 2. Band 2's credit goes to 16384 - 65226 = -48842 and needs
// three refills that leave it <= 0 (-32458, -16074, then +310): such refills do
// not count towards the "three empty bands" stop, so dequeue must never return
// nothing while band 2 has eligible packets.
TYPED_TEST(EdgeCases, E32_SmallWeightNoStall_L) {
  FqConfig cfg = make_cfg(Compat::latest);
  cfg.weights = {589824, 196608, 16384};
  TypeParam q(cfg);
  PacketPool pool;
  FlowOwner o = slow_owner(1);
  std::vector<Packet*> in;
  enqueue_n(q, pool, 30, {.len = 65226, .owner = &o, .priority = 1, .segments = 44}, kT0, &in);
  ASSERT_EQ(in.size(), 30U);
  for (std::size_t i = 0; i < in.size(); ++i) {
    Packet* p = q.dequeue(kT0);
    ASSERT_NE(p, nullptr) << "stalled at packet " << i;
    EXPECT_EQ(p, in[i]);
  }
  EXPECT_EQ(q.dequeue(kT0), nullptr);
  // Two flows, band 0 (small packets) and band 2 (64 KB): both keep moving.
  FlowOwner big = slow_owner(2), small = slow_owner(3);
  int got_big = 0, got_small = 0;
  enqueue_n(q, pool, 20, {.len = 65226, .owner = &big, .priority = 1, .segments = 44}, kT0);
  enqueue_n(q, pool, 20, {.len = 1514, .owner = &small, .priority = 6}, kT0);
  for (int i = 0; i < 40; ++i) {
    Packet* p = q.dequeue(kT0);
    ASSERT_NE(p, nullptr) << "stalled at " << i;
    (p->owner == &big ? got_big : got_small)++;
  }
  EXPECT_EQ(got_big, 20);
  EXPECT_EQ(got_small, 20);
  expect_consistent(q, kT0);
}

}  // namespace
}  // namespace ufq::test
