// The reference fq scheduler: the kernel's data structures (a hash table of
// ordered trees for flow lookup, per-flow FIFO plus ordered tree for packets,
// an ordered throttled set, singly linked round-robin lists), kept so that the
// public ufq::FqScheduler can be proven to decide the same (the differential
// test and the scheduler fuzzer). Not installed and not linked by the runtime:
// only tests, fuzzers, benchmarks and `ufq sim --scheduler reference` use it
// (target ufq_reference). Same interface and contracts as ufq::FqScheduler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "ufq/config.hpp"
#include "ufq/flow_info.hpp"
#include "ufq/packet.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

namespace ufq::reference {

class FqScheduler {
 public:
  explicit FqScheduler(const FqConfig& cfg = FqConfig{});
  ~FqScheduler();
  FqScheduler(const FqScheduler&) = delete;
  FqScheduler& operator=(const FqScheduler&) = delete;

  Verdict enqueue(Packet& pkt, Time now);
  Packet* dequeue(Time now);
  // The single calls in a plain loop: the batched calls' oracle.
  std::size_t enqueue_burst(std::span<Packet* const> packets, Time now, std::span<Verdict> verdicts);
  std::size_t dequeue_burst(Time now, std::span<Packet*> out);
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

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ufq::reference
