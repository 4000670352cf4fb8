// Room in fq, counted on the producer side: the datagrams of a flow and of a
// band (all of them in 5.7) that are in flight (handed to the pacer, not yet
// back) never exceed flow_limit and limit, so fq never drops for lack of
// room; a send that would exceed them waits for room (a blocking socket,
// honouring SO_SNDTIMEO, EINTR when a signal handler runs as the kernel
// gives it) or fails with EAGAIN (O_NONBLOCK, MSG_DONTWAIT), as a full
// socket send buffer behaves (docs/run.md, "Backpressure").
//
// Flows are counted as fq keys them: a connected socket's own counter; for
// unconnected sockets a counter per (hash & orphan_mask), the very key fq
// uses, so two destinations share a budget exactly when fq puts them in one
// flow. Counters are atomics: no lock on the send path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "ufq/config.hpp"
#include "ufq/time.hpp"

namespace ufq::run {

struct Room {
  std::uint8_t band = 0;
  std::uint32_t slot = kNoSlot;  // hashed flow counter, or kNoSlot (the socket's own)
  static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFU;
};

class Backpressure {
 public:
  explicit Backpressure(const FqConfig& cfg);

  // The band fq puts a packet of this priority in.
  std::uint8_t band_of(std::uint8_t priority) const;
  // Takes room for one datagram: the band's count, and the flow's (the
  // socket's own counter `flow`, or the hashed one for `hash` when flow is
  // null). True when taken.
  bool try_take(std::uint8_t band, std::atomic<std::uint32_t>* flow, std::uint32_t hash, Room& r);
  void give_back(const Room& r, std::atomic<std::uint32_t>* flow);

  // The room sequence: bumped whenever room comes back while someone waits.
  std::uint32_t sequence() const { return seq_.load(std::memory_order_acquire); }
  // Wait until the sequence moves from `seen`, `timeout_ns` (0: forever) or
  // a signal. Returns 0, ETIMEDOUT or EINTR.
  int wait(std::uint32_t seen, Time timeout_ns);
  void add_waiter() { waiters_.fetch_add(1, std::memory_order_acq_rel); }
  void remove_waiter() { waiters_.fetch_sub(1, std::memory_order_acq_rel); }
  // Wakes every waiter (stop, or room back).
  void wake_all();
  // Total datagrams in flight (all bands).
  std::uint32_t in_flight() const;
  // True when a datagram of this band would find room in the band (the
  // flow aside): readiness for POLLOUT.
  bool band_has_room(std::uint8_t band) const;
  bool flow_has_room(const std::atomic<std::uint32_t>& flow) const {
    return flow.load(std::memory_order_relaxed) < flow_limit_;
  }

 private:
  std::uint32_t limit_, flow_limit_, mask_;
  bool per_band_;
  std::array<std::uint8_t, 16> prio2band_{};
  std::atomic<std::uint32_t> band_[3]{};
  std::unique_ptr<std::atomic<std::uint32_t>[]> hashed_;
  std::uint32_t hashed_size_;
  std::atomic<std::uint32_t> seq_{0};
  std::atomic<std::uint32_t> waiters_{0};
};

}  // namespace ufq::run
