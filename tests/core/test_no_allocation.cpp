// "The hot path allocates nothing per packet" as a test: a global operator new
// counter (tests/support/alloc_counter.hpp) around a long run of ufq::FqScheduler
// that takes every path a steady state can take again and again:
//  * out-of-order packets (a timestamp earlier than its flow's last packet's),
//    which go to the flow's out-of-order tree and leave it;
//  * socket reuse of throttled flows (the owner's hash_generation changes while
//    its flow waits in the throttled set), often enough that the stale entries
//    outnumber the live ones and the throttled set compacts itself;
//  * flows collected after 3 s idle and created again (socket-keyed and hashed);
//  * drops at the limits, change() (limit, quantum and buckets_log back and
//    forth: trimming and the resize's collection of idle flows) and stats();
//  * all of it once with the single calls and once with the burst calls
//    (enqueue_burst of each tick's offers, dequeue_burst), the fast
//    scheduler's prefetching included (its flow-count threshold lowered to 0).
// The pattern repeats every round (5 simulated seconds). After two rounds of
// warm-up (every pool has grown to the flows in use), the next rounds must
// allocate nothing at all: 0 allocations per packet.
//
// Both implementations. The reference (reference::FqScheduler) allocates in
// one place, not per packet: a change() of buckets_log builds its new table of
// 2^buckets_log trees, as the kernel does; its count may go up by that many.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "burst.hpp"
#include "harness.hpp"

namespace ufq::test {
namespace {

// Caller-owned packets with a free list, all allocated before the run.
class FixedPool {
 public:
  explicit FixedPool(std::size_t n) : store_(n) {
    free_.reserve(n);
    for (std::size_t i = n; i-- > 0;) free_.push_back(i);
  }
  Packet* make(std::uint32_t len, FlowOwner* owner, Time tstamp, std::uint32_t hash = 0) {
    if (free_.empty()) return nullptr;
    Packet& p = store_[free_.back()];
    free_.pop_back();
    p = Packet{};
    p.len = len;
    p.owner = owner;
    p.tstamp = tstamp;
    p.hash = hash;
    p.cookie = static_cast<std::uint64_t>(&p - store_.data());
    return &p;
  }
  void release(Packet& p) { free_.push_back(static_cast<std::size_t>(p.cookie)); }

 private:
  std::vector<Packet> store_;
  std::vector<std::size_t> free_;
};

// kBursts: every packet goes through enqueue_burst (the tick's offers in one
// burst) and every dequeue through dequeue_burst, instead of the single calls.
template <Scheduler S>
class Workload {
 public:
  explicit Workload(Compat c, bool bursts = false)
      : cfg_(make_cfg(c)), q_(config(0)), pool_(40000), bursts_(bursts) {
    pending_.reserve(kMaxPending);
    verdicts_.resize(kMaxPending);
    owners_.reserve(kSteady + kChurn + kReused);
    for (std::uint64_t i = 0; i < kSteady; ++i) owners_.push_back(tcp_owner(100 + i));
    for (std::uint64_t i = 0; i < kChurn; ++i) owners_.push_back(rated_owner(1000 + i, 1'000'000));
    for (std::uint64_t i = 0; i < kReused; ++i) owners_.push_back(rated_owner(2000 + i, 10'000'000));
    release_ = [this](Packet& p) {
      ++trimmed_;
      pool_.release(p);
    };
  }

  // One round: 5 simulated seconds, a tick every 100 us. Steady flows all the
  // time; churn, hashed and reused flows in the first second only, so that they
  // are collected (idle > 3 s) before the next round creates them again.
  void round() {
    const Time start = now_;
    for (std::uint64_t tick = 0; tick < 50'000; ++tick) {
      now_ = start + tick * 100 * kUs;
      const bool active = tick < 10'000;
      // A steady (TCP, EDT) flow gets two packets, the second due before the
      // first: an out-of-order packet.
      FlowOwner& s = owners_[tick % kSteady];
      offer(&s, now_ + 3 * kMs);
      offer(&s, now_ + kMs);
      if (active) {
        offer(&owners_[kSteady + tick % kChurn], 0);
        offer(nullptr, 0, static_cast<std::uint32_t>(tick % kHashed));  // a hashed flow
        // Every 10 ms: the reused owners queue a packet due in 800 ms (their
        // flows throttle at the next dequeue), then every 10 ms after the
        // first, each changes generation first: its throttled flow is reused.
        if (tick % 100 == 50) {
          for (std::size_t i = 0; i < kReused; ++i) {
            FlowOwner& o = owners_[kSteady + kChurn + i];
            if (tick != 50) ++o.hash_generation;
            offer(&o, now_ + 800 * kMs);
          }
        }
      }
      // change(): a lower limit and a smaller table after 2 ms without
      // dequeues (a busy driver), so that due packets are trimmed; back at
      // 4.5 s, when the resize collects the churn and hashed flows (idle > 3 s;
      // the reused ones, idle since ~1.8 s, are collected at the next round's
      // first enqueues).
      if (tick == 40'000) change(config(1));
      if (tick == 45'000) change(config(0));
      flush();
      if (tick >= 39'980 && tick < 40'000) continue;
      q_.watchdog().expire();
      drain();
      if (tick % 1000 == 0) stats_sum_ += q_.stats(now_).qlen;
    }
    now_ = start + 5 * kSec;
  }

  std::uint64_t offered() const { return offered_; }
  std::uint64_t refused() const { return refused_; }
  std::uint64_t table_resizes() const { return resizes_; }
  std::uint64_t pool_empty() const { return pool_empty_; }
  std::uint64_t stats_sum() const { return stats_sum_; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t trimmed() const { return trimmed_; }
  const S& scheduler() const { return q_; }
  Time now() const { return now_; }

 private:
  static constexpr std::size_t kSteady = 32, kChurn = 32, kReused = 128;
  static constexpr std::uint64_t kHashed = 16;

  FqConfig config(int which) const {
    FqConfig c = cfg_;
    c.buckets_log = which == 0 ? 6 : 4;
    c.limit = which == 0 ? 10000 : 20;
    c.quantum = which == 0 ? 3028 : 6056;
    return c;
  }

  void drain() {
    if (!bursts_) {
      while (Packet* p = q_.dequeue(now_)) {
        ++sent_;
        pool_.release(*p);
      }
      return;
    }
    for (;;) {
      const std::size_t n = q_.dequeue_burst(now_, out_);
      for (std::size_t i = 0; i < n; ++i) pool_.release(*out_[i]);
      sent_ += n;
      if (n < out_.size()) return;
    }
  }

  // The offers collected in this tick, in one enqueue_burst.
  void flush() {
    if (pending_.empty()) return;
    q_.enqueue_burst(pending_, now_, verdicts_);
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (verdicts_[i] != Verdict::queued) {
        ++refused_;
        pool_.release(*pending_[i]);
      }
    }
    pending_.clear();
  }

  void change(const FqConfig& c) {
    flush();
    resizes_ += c.buckets_log != q_.config().buckets_log ? 1U : 0U;
    q_.change(c, now_, release_);
  }

  void offer(FlowOwner* o, Time tstamp, std::uint32_t hash = 0) {
    Packet* p = pool_.make(1514, o, tstamp, hash);
    if (p == nullptr) {  // the pool is sized so that this never happens
      ++pool_empty_;
      return;
    }
    ++offered_;
    if (bursts_) {
      pending_.push_back(p);
      if (pending_.size() == kMaxPending) flush();
      return;
    }
    if (q_.enqueue(*p, now_) != Verdict::queued) {
      ++refused_;
      pool_.release(*p);
    }
  }

  static constexpr std::size_t kMaxPending = 256;

  FqConfig cfg_;
  S q_;
  FixedPool pool_;
  bool bursts_;
  std::vector<Packet*> pending_;
  std::vector<Verdict> verdicts_;
  std::array<Packet*, 16> out_{};
  std::vector<FlowOwner> owners_;
  PacketSink release_;
  Time now_ = kT0;
  std::uint64_t offered_ = 0, refused_ = 0, sent_ = 0, trimmed_ = 0, stats_sum_ = 0, pool_empty_ = 0, resizes_ = 0;
};

template <Scheduler S>
class NoAllocation : public ::testing::Test {};
TYPED_TEST_SUITE(NoAllocation, Schedulers);

TYPED_TEST(NoAllocation, SteadyStateAllocatesNothingPerPacket) {
  const std::size_t default_prefetch = detail::burst_prefetch_min_flows();
  for (const bool bursts : {false, true}) {
    for (Compat c : kBothCompat) {
      SCOPED_TRACE(std::string(compat_name(c)) + (bursts ? ", burst calls" : ", single calls"));
      detail::set_burst_prefetch_min_flows(bursts ? 0 : default_prefetch);
      Workload<TypeParam> w(c, bursts);
      w.round();
      w.round();
      const std::uint64_t allocations = allocation_count();
      const std::uint64_t offered = w.offered(), resizes = w.table_resizes();
      for (int r = 0; r < 3; ++r) w.round();
      const std::uint64_t during = allocation_count() - allocations;
      const std::uint64_t packets = w.offered() - offered;
      const std::uint64_t allowed = kIsFast<TypeParam> ? 0 : w.table_resizes() - resizes;
      EXPECT_LE(during, allowed) << during << " allocations for " << packets << " packets ("
                                 << static_cast<double>(during) / static_cast<double>(packets)
                                 << " per packet)";
      // The run did what it is meant to.
      const FqStats st = w.scheduler().stats(w.now());
      EXPECT_GT(packets, 300'000U);
      EXPECT_GT(st.gc_flows, 100U) << "flows collected and created again";
      EXPECT_GT(w.trimmed(), 0U) << "change() trimmed";
      EXPECT_GT(w.refused(), 0U) << "drops at the limits";
      EXPECT_GT(w.stats_sum(), 0U);
      EXPECT_EQ(w.pool_empty(), 0U);
      EXPECT_EQ(st.offered, w.offered());
      EXPECT_EQ(st.offered, st.dequeued + st.drops + st.purged + st.qlen);
      EXPECT_EQ(w.offered(), w.sent() + w.trimmed() + w.refused() + st.qlen);
    }
  }
  detail::set_burst_prefetch_min_flows(default_prefetch);
}

}  // namespace
}  // namespace ufq::test
