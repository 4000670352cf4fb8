// The driver loop: the user-space analog of the kernel's qdisc run. Written
// once, used by the simulator (a modelled NIC) and the real-time pacer (UDP
// sockets): dequeue while the device has room (dequeue_burst), hand the packets over in bulk
// with an xmit_more hint, count each run, and leave the wake-up request in the
// scheduler's watchdog for the environment's timer.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <span>

#include "ufq/scheduler.hpp"
#include "ufq/scheduler_concept.hpp"

namespace ufq {

// What a device must offer the runner.
//   std::uint32_t tx_room();          packets it can take now (ring space)
//   bool xmit(Packet&, bool more);    take one; `more` = another follows in this
//                                     bulk (xmit_more: defer the doorbell or
//                                     flush). false = refused: the runner keeps
//                                     it (and the rest of the bulk) and sends it
//                                     first next time (a requeue).
template <class D>
concept TxDevice = requires(D d, Packet& p) {
  { d.tx_room() } -> std::convertible_to<std::uint32_t>;
  { d.xmit(p, true) } -> std::convertible_to<bool>;
};

inline constexpr std::uint32_t kMaxBulk = 64;

struct RunnerConfig {
  // Packets one run may send before yielding (the kernel's dev_tx_weight, 64);
  // the environment runs again later, as the kernel re-raises NET_TX.
  std::uint32_t quota = 64;
  // Packets dequeued before handing them over as one xmit_more bulk (<= 64).
  std::uint32_t bulk = kMaxBulk;
};

// Why a run ended.
enum class RunEnd : std::uint8_t {
  idle,    // nothing may leave now: the scheduler's watchdog says when to wake
  device,  // the device has no room or refused a packet: run again when it drains
  quota,   // the quota is used up: run again soon
};

struct RunResult {
  std::uint32_t sent = 0;
  RunEnd end = RunEnd::idle;
};

// Bucket i counts runs that sent i packets; the last bucket, that many or more.
inline constexpr std::size_t kBatchHistogramSize = 65;

struct RunnerStats {
  std::uint64_t runs = 0;          // run() calls
  std::uint64_t runs_sending = 0;  // runs that sent at least one packet
  std::uint64_t packets = 0;       // packets the device accepted
  std::uint64_t requeues = 0;      // refusals (the packet is sent again later)
  std::array<std::uint64_t, kBatchHistogramSize> batch{};  // packets per run
  double mean_batch() const {
    return runs_sending ? static_cast<double>(packets) / static_cast<double>(runs_sending) : 0.0;
  }
};

// `Sched` is ufq::FqScheduler, or any ufq::Scheduler (the reference makes the
// same decisions: tests/core/test_differential.cpp).
template <TxDevice Device, Scheduler Sched = FqScheduler>
class QdiscRunner {
 public:
  QdiscRunner(Sched& fq, Device& dev, RunnerConfig cfg = {})
      : fq_(&fq), dev_(&dev), cfg_(cfg) {
    cfg_.bulk = std::clamp<std::uint32_t>(cfg_.bulk, 1, kMaxBulk);
    cfg_.quota = std::max<std::uint32_t>(cfg_.quota, 1);
    first_want_ = std::min(cfg_.bulk, cfg_.quota);
  }

  // One qdisc run at `now`. Never allocates. Inlined whole into its caller
  // (the simulator's one qdisc-run function): one frame per run, not two.
  [[gnu::always_inline]] RunResult run(Time now) {
    ++st_.runs;
    // The common start (nothing held, room in the device): a run that finds
    // nothing due (a quarter of the simulator's) ends here.
    if (held_ == 0) [[likely]] {
      const std::uint32_t room = static_cast<std::uint32_t>(dev_->tx_room());
      if (room != 0) [[likely]] {
        const std::uint32_t want = std::min(room, first_want_);
        const auto n = static_cast<std::uint32_t>(fq_->dequeue_burst(now, std::span<Packet*>(bulk_.data(), want)));
        if (n == 0) {
          ++st_.batch[0];
          return RunResult{0, RunEnd::idle};
        }
        return run_from(now, n, want);
      }
    }
    return run_from(now, 0, 0);
  }

 private:
  // The rest of run(): `n` packets dequeued into bulk_, of `want` asked for
  // (n = 0: none yet). The loop starts with the bulk in hand (run()'s).
  [[gnu::always_inline]] RunResult run_from(Time now, std::uint32_t n, std::uint32_t want) {
    std::uint32_t sent = 0;
    RunEnd end;
    // In registers: the stores of each xmit could alias the members.
    Device* const dev = dev_;
    Sched* const fq = fq_;
    for (;;) {  // sent < quota here
      if (n != 0) {
        std::uint32_t i = 0;
        for (; i < n; ++i)
          if (!dev->xmit(*bulk_[i], i + 1 < n)) break;
        sent += i;
        if (i < n) [[unlikely]] {
          // Keep the refused packet and the rest of the bulk, in order.
          st_.requeues += 1;
          for (std::uint32_t k = n; k-- > i;) held_pkts_[held_++] = bulk_[k];
          end = RunEnd::device;
          break;
        }
        if (n < want) {  // the scheduler ran dry before the bulk was full
          end = RunEnd::idle;
          break;
        }
        if (sent >= cfg_.quota) {
          end = RunEnd::quota;
          break;
        }
      }
      const std::uint32_t room = static_cast<std::uint32_t>(dev->tx_room());
      if (room == 0) {
        end = RunEnd::device;
        break;
      }
      // Bulk dequeue: requeued packets first, then the scheduler's.
      want = std::min({room, cfg_.bulk, cfg_.quota - sent});
      n = 0;
      if (held_ > 0) [[unlikely]]
        for (; n < want && held_ > 0; ++n) bulk_[n] = held_pkts_[--held_];
      if (n < want)
        n += static_cast<std::uint32_t>(fq->dequeue_burst(now, std::span<Packet*>(bulk_).subspan(n, want - n)));
      if (n == 0) {
        end = RunEnd::idle;
        break;
      }
    }
    st_.packets += sent;
    if (sent) ++st_.runs_sending;
    ++st_.batch[std::min<std::size_t>(sent, kBatchHistogramSize - 1)];
    return RunResult{sent, end};
  }

 public:
  // Packets dequeued from the scheduler and refused by the device, waiting to
  // be sent first by the next run (they count as queued for accounting).
  std::uint32_t held() const { return held_; }
  // Give the held packets back, next-to-send first (an environment that
  // stops reports them as still queued).
  template <class Fn>
  void release_held(Fn&& fn) {
    while (held_ > 0) fn(*held_pkts_[--held_]);
  }
  const RunnerStats& stats() const { return st_; }
  Sched& scheduler() const { return *fq_; }

 private:
  Sched* fq_;
  Device* dev_;
  RunnerConfig cfg_;
  std::uint32_t first_want_;  // min(bulk, quota): a run's first bulk, before the device's room
  RunnerStats st_;
  std::array<Packet*, kMaxBulk> bulk_{};
  std::array<Packet*, kMaxBulk> held_pkts_{};  // a stack: the next to send on top
  std::uint32_t held_ = 0;
};

}  // namespace ufq
