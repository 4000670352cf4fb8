// The fq scheduler interface as a concept: what the driver loop, the
// simulator, the runtime and the tests need from a scheduler. Satisfied by
// ufq::FqScheduler (the public, fast one) and ufq::reference::FqScheduler (the
// kernel-shaped oracle); see ufq/scheduler.hpp for the contract of each call.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "ufq/config.hpp"
#include "ufq/flow_info.hpp"
#include "ufq/packet.hpp"
#include "ufq/stats.hpp"
#include "ufq/time.hpp"
#include "ufq/verdict.hpp"
#include "ufq/watchdog.hpp"

namespace ufq {

template <class S>
concept Scheduler = std::constructible_from<S, const FqConfig&> &&
    requires(S s, const S cs, Packet& p, Time now, const FqConfig& cfg, const PacketSink& sink,
             std::span<Packet* const> in, std::span<Packet*> out, std::span<Verdict> verdicts) {
      { s.enqueue(p, now) } -> std::same_as<Verdict>;
      { s.dequeue(now) } -> std::same_as<Packet*>;
      { s.enqueue_burst(in, now, verdicts) } -> std::same_as<std::size_t>;
      { s.dequeue_burst(now, out) } -> std::same_as<std::size_t>;
      { s.change(cfg, now, sink) } -> std::same_as<std::size_t>;
      { s.reset(sink) } -> std::same_as<void>;
      { cs.stats(now) } -> std::same_as<FqStats>;
      { cs.config() } -> std::same_as<const FqConfig&>;
      { s.watchdog() } -> std::same_as<Watchdog&>;
      { cs.watchdog() } -> std::same_as<const Watchdog&>;
      { cs.qlen() } -> std::same_as<std::uint32_t>;
      { cs.time_next_delayed_flow() } -> std::same_as<Time>;
      { cs.internal_qlen() } -> std::same_as<std::uint32_t>;
      cs.for_each_flow([](const FlowInfo&) {});
    };

}  // namespace ufq
