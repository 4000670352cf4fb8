// The fast fq scheduler: the same interface and the same decisions as
// FqScheduler (the reference, kernel-shaped structures), with flat, cache-
// friendly structures underneath. tests/core/test_differential.cpp and
// fuzz/fuzz_scheduler_diff.cpp drive both with the same input and compare every
// dequeued packet, verdict and counter.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "ufq/scheduler.hpp"

namespace ufq {

class FastFqScheduler {
 public:
  explicit FastFqScheduler(const FqConfig& cfg = FqConfig{});
  ~FastFqScheduler();
  FastFqScheduler(const FastFqScheduler&) = delete;
  FastFqScheduler& operator=(const FastFqScheduler&) = delete;

  Verdict enqueue(Packet& pkt, Time now);
  Packet* dequeue(Time now);
  std::size_t change(const FqConfig& cfg, Time now, const PacketSink& trimmed = {});
  void reset(const PacketSink& purged = {});

  FqStats stats(Time now) const;
  const FqConfig& config() const;
  Watchdog& watchdog();
  const Watchdog& watchdog() const;
  std::uint32_t qlen() const;
  Time time_next_delayed_flow() const;
  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const;
  std::uint32_t internal_qlen() const;

  // Bytes the scheduler holds for its flows (flow array, flow table, throttled
  // set), for the memory benchmark.
  std::size_t memory_bytes() const;
  static std::size_t flow_bytes();  // sizeof one flow record

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ufq
