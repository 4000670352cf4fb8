// The burst harness of the paced benchmarks (BM_PacedBurst,
// BM_PacedShuffledBurst in bench_scheduler.cpp; bench/probe_burst.cpp counts
// instructions and cache misses of the same code under callgrind): BM_Paced's
// flows and arrivals (one packet per microsecond, flow i's packets due every
// `flows` microseconds by EDT, flows visited round robin or in a new random
// order every round) as a pacer thread with a burst interface sees them. It
// wakes every `burst` arrivals, enqueues them in one enqueue_burst and sends
// what is due in dequeue_burst calls of up to 64 packets (the driver loop's
// bulk). The binary heap and the FIFO floor have no batched calls: the same
// harness runs their single calls in a plain loop. The per-flow floor
// (flow_floor.hpp) has batched calls that prefetch, as the fast scheduler's do.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include "app_memory.hpp"
#include "bench_config.hpp"
#include "fifo_floor.hpp"
#include "flow_floor.hpp"
#include "heap_pacer.hpp"
#include "page_size_env.hpp"
#include "ufq/packet.hpp"
#include "ufq/verdict.hpp"

namespace ufq::bench {

// The baselines (binary heap, FIFO floor, per-flow floor) take no fq configuration and say
// when they are next due themselves.
template <class S>
constexpr bool kBaseline =
    std::is_same_v<S, HeapPacer> || std::is_same_v<S, FifoFloor> || std::is_same_v<S, FlowFloor>;

template <class S>
S make(const FqConfig& cfg) {
  if constexpr (kBaseline<S>)
    return S{};
  else
    return S(cfg);
}

// A scheduler seen through its single calls only: the harness then loops over
// them as for the baselines, which shows what the batched calls themselves
// gain (BM_PacedBurst<FastSingleCalls> against BM_PacedBurst<Fast>).
template <class S>
class SingleCalls {
 public:
  explicit SingleCalls(const FqConfig& cfg) : s_(cfg) {}
  Verdict enqueue(Packet& p, Time now) { return s_.enqueue(p, now); }
  Packet* dequeue(Time now) { return s_.dequeue(now); }

 private:
  S s_;
};

// Has enqueue_burst and dequeue_burst (ufq::Scheduler).
template <class S>
constexpr bool kBatched = requires(S& s, Time t, std::span<Packet*> out) { s.dequeue_burst(t, out); };

// Keeps a result alive without a library (benchmark::DoNotOptimize's trick).
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

template <class S>
void enqueue_burst(S& fq, std::span<Packet* const> in, Time now, std::span<Verdict> verdicts) {
  if constexpr (!kBatched<S>) {
    for (Packet* p : in) keep(fq.enqueue(*p, now));
  } else {
    keep(fq.enqueue_burst(in, now, verdicts));
  }
}

template <class S>
std::size_t dequeue_burst(S& fq, Time now, std::span<Packet*> out) {
  if constexpr (!kBatched<S>) {
    std::size_t n = 0;
    for (; n < out.size(); ++n) {
      Packet* p = fq.dequeue(now);
      if (!p) break;
      out[n] = p;
    }
    return n;
  } else {
    return fq.dequeue_burst(now, out);
  }
}

template <class S, bool kShuffled>
class PacedBurst {
 public:
  PacedBurst(std::size_t flows, std::size_t burst)
      : flows_(flows),
        burst_(burst),
        fq_(make<S>(config_for(flows, 10000))),
        owners_(flows),
        ring_((kShuffled ? 3 : 2) * flows + 2 * burst + 16),  // shuffled: a flow may hold 2
        in_(burst),
        verdicts_(burst),
        gap_(flows * 1000) {
    for (std::size_t i = 0; i < flows; ++i) owners_[i].id = i + 1;
    if constexpr (kShuffled) {
      std::mt19937_64 rng(42);
      for (auto& o : order_) {
        o.resize(flows);
        std::iota(o.begin(), o.end(), 0U);
        std::shuffle(o.begin(), o.end(), rng);
      }
    }
  }

  // To the steady state: every flow created and holding a packet.
  void warm_up() {
    for (std::size_t i = 0; i < (2 * flows_ + 1000) / burst_; ++i) wake();
  }

  // One wake-up: `burst` arrivals enqueued, everything due sent.
  void wake() {
    for (std::size_t k = 0; k < burst_; ++k) {
      Packet& p = ring_[next_];
      next_ = next_ + 1 == ring_.size() ? 0 : next_ + 1;
      fill(p, 1514, kShuffled ? &owners_[order_[round_ & 1][f_]] : &owners_[f_], now_ + k * 1000 + gap_);
      if (++f_ == flows_) {
        f_ = 0;
        ++round_;
      }
      in_[k] = &p;
    }
    now_ += burst_ * 1000;
    enqueue_burst(fq_, in_, now_, verdicts_);
    while (dequeue_burst(fq_, now_, out_) == out_.size()) {
    }
    keep(out_.data());
  }

  std::size_t burst() const { return burst_; }

 private:
  std::size_t flows_, burst_;
  S fq_;
  AppVector<FlowOwner> owners_;
  std::array<std::vector<std::uint32_t>, 2> order_;
  AppVector<Packet> ring_;
  std::vector<Packet*> in_;
  std::vector<Verdict> verdicts_;
  std::array<Packet*, 64> out_{};
  std::size_t next_ = 0, f_ = 0, round_ = 0;
  Time now_ = 1'000'000'000;
  Time gap_;
};

}  // namespace ufq::bench
