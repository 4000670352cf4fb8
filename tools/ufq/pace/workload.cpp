#include "pace/workload.hpp"

#include <pthread.h>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

FlowGenerator::FlowGenerator(const WorkloadConfig& cfg, PacketPool& pool, MultiQueuePacer& pacer)
    : cfg_(cfg), pool_(pool), pacer_(pacer) {
  if (cfg_.flows == 0) throw std::invalid_argument("flows must be > 0");
  if (!cfg_.flow_fds.empty() && cfg_.flow_fds.size() != cfg_.flows)
    throw std::invalid_argument("one socket per flow, or none");
  if (pool_.payload() != 0 && pool_.payload() < cfg_.payload)
    throw std::invalid_argument("the pool's buffers are smaller than the payload");
  if (!(cfg_.rate_pps > 0)) throw std::invalid_argument("rate must be > 0");
  const double period = 1e9 * static_cast<double>(cfg_.flows) / cfg_.rate_pps;
  if (period < 1.0 || period > 1e12) throw std::invalid_argument("per-flow period out of range");
  period_ = static_cast<Time>(std::llround(period));
  if (cfg_.flows_of.empty()) {
    flow_.resize(cfg_.flows);
    std::iota(flow_.begin(), flow_.end(), 0U);
  } else {
    flow_ = cfg_.flows_of;
  }
  // Every flow's phase from one sequence: the same schedule for any subset.
  std::vector<Time> all(cfg_.flows);
  std::mt19937_64 rng(cfg_.seed);
  std::uniform_int_distribution<Time> dist(0, period_ - 1);
  for (auto& t : all) t = dist(rng);
  const std::size_t n = flow_.size();
  owners_.resize(n);
  phase_.resize(n);
  seq_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t f = flow_[i];
    if (f >= cfg_.flows) throw std::invalid_argument("flow index out of range");
    owners_[i].id = f + 1;
    owners_[i].kind = FlowOwner::Kind::connected;
    // EDT packets: fq enforces the timestamps; the rate is informational.
    owners_[i].pacing_rate = static_cast<Rate>(
        std::llround(static_cast<double>(packet_len()) * 1e9 / static_cast<double>(period_)));
    phase_[i] = all[f];
    if (pacer_.queue_of(&owners_[i], 0) != cfg_.queue)
      throw std::invalid_argument("flow " + std::to_string(f) + " is steered to queue " +
                                  std::to_string(pacer_.queue_of(&owners_[i], 0)) + ", not " +
                                  std::to_string(cfg_.queue));
  }
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0U);
  std::sort(order_.begin(), order_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return phase_[a] < phase_[b]; });
}

FlowGenerator::~FlowGenerator() { stop(); }

std::uint32_t FlowGenerator::packet_len() const {
  return cfg_.payload + frame_overhead(cfg_.dest.family());
}

WorkloadCounters FlowGenerator::counters() const {
  WorkloadCounters c;
  c.generated = generated_.load(std::memory_order_relaxed);
  c.pool_empty = pool_empty_.load(std::memory_order_relaxed);
  c.ring_full = ring_full_.load(std::memory_order_relaxed);
  c.late_handover = late_.load(std::memory_order_relaxed);
  c.held_at_exit = held_at_exit_.load(std::memory_order_relaxed);
  return c;
}

void FlowGenerator::start(Time start, Time end) {
  if (thread_.joinable()) return;
  start_ = start;
  end_ = end;
  thread_ = std::thread([this] { loop(); });
}

void FlowGenerator::stop() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void FlowGenerator::loop() {
  ::pthread_setname_np(::pthread_self(), "ufq-producer");
  if (cfg_.cpu >= 0) pin_current_thread(cfg_.cpu);
  const auto n = static_cast<std::uint64_t>(owners_.size());
  if (n == 0) {
    done_.store(true, std::memory_order_release);
    return;
  }
  std::uint64_t k = 0;  // next event: flow order_[k % n], round k / n
  Packet* pending = nullptr;  // a packet the ring refused, retried first
  auto event_time = [&](std::uint64_t e) {
    return start_ + phase_[order_[e % n]] + (e / n) * period_;
  };
  while (!stop_.load(std::memory_order_acquire)) {
    const Time now = mono_now();
    const Time horizon = now + cfg_.lead_ns;
    Time earliest = kNever;  // of this burst: one doorbell for all of it
    for (;;) {
      Packet* p = pending;
      if (!p) {
        const Time t = event_time(k);
        if (t >= end_ || t > horizon) break;
        p = pool_.acquire();
        if (!p) {
          pool_empty_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        const std::uint32_t i = order_[k % n];
        const std::uint32_t f = flow_[i];
        p->len = packet_len();
        p->tstamp = t;
        p->owner = &owners_[i];
        p->hash = f * 2654435761U;
        pool_.fill(*p, f, seq_[i]++, t, cfg_.dest, cfg_.flow_fds.empty() ? -1 : cfg_.flow_fds[f],
                   cfg_.payload);
        ++k;
      }
      const Time due = p->tstamp;
      if (!pacer_.submit(*p, /*notify=*/false)) {
        ring_full_.fetch_add(1, std::memory_order_relaxed);
        pending = p;
        break;
      }
      pending = nullptr;
      earliest = std::min(earliest, due);
      generated_.fetch_add(1, std::memory_order_relaxed);
      if (due < now) late_.fetch_add(1, std::memory_order_relaxed);
    }
    if (earliest != kNever) pacer_.notify(cfg_.queue, earliest);
    if (!pending && event_time(k) >= end_) break;  // all generated
    // Sleep to the next grid point (the producer's coarse tick).
    const Time next = (mono_now() / cfg_.tick_ns + 1) * cfg_.tick_ns;
    const timespec ts = to_timespec(next);
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  }
  if (pending) {
    held_at_exit_.fetch_add(1, std::memory_order_relaxed);
    pool_.release(*pending);
  }
  cpu_.store(ufq::rt::thread_cpu_ns(), std::memory_order_relaxed);
  done_.store(true, std::memory_order_release);
}

}  // namespace ufq::rt
