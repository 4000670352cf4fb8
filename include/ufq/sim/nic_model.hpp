// A model of one NIC transmit queue: a descriptor ring, serialisation at line
// rate, and transmit-completion interrupts with coalescing (ethtool's tx-usecs
// and tx-frames). It is the device a QdiscRunner hands packets to.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <vector>

#include "ufq/packet.hpp"
#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/hook.hpp"
#include "ufq/time.hpp"

namespace ufq::sim {

struct NicConfig {
  std::uint64_t line_rate_bps = 100'000'000'000;  // 100 Gbit/s
  std::uint32_t ring_size = 1024;                 // descriptors
  Time tx_usecs = 16'000;     // completion interrupt this long after the first completion
  std::uint32_t tx_frames = 64;  // ... or as soon as this many completions are pending
  Time irq_latency = 1'000;   // from the interrupt to its handler (NAPI poll)
  std::uint32_t wire_overhead = 24;  // preamble, FCS, inter-frame gap: serialisation only
  // Linux's dummy device (the kernel-fq harness): a packet is freed as soon as
  // it is posted, no wire, no interrupt; its owner hears of it `irq_latency`
  // later (the sender's wake-up).
  bool dummy = false;
};

struct NicStats {
  std::uint64_t packets = 0;      // descriptors posted (completions + those in the ring)
  std::uint64_t bytes = 0;
  std::uint64_t doorbells = 0;    // xmit with more = false: one MMIO write each
  std::uint64_t interrupts = 0;   // completion interrupts
  std::uint64_t completions = 0;  // descriptors reclaimed
  std::uint64_t ring_full = 0;    // xmit refused: no free descriptor
};

class NicModel {
 public:
  // Called for each reclaimed packet, in transmit order, from the completion
  // handler (the packet is the caller's again). A lambda, or (function,
  // context) for the cheaper direct call.
  using CompleteFn = Hook<Packet&>;
  // Called once at the end of each completion handler (NAPI poll done): the
  // environment runs the qdisc there, as the TX softirq would.
  using PollDoneFn = Hook<>;

  NicModel(EventQueue& queue, NicConfig config, CompleteFn on_complete, PollDoneFn on_poll_done);
  NicModel(const NicModel&) = delete;
  NicModel& operator=(const NicModel&) = delete;

  // The TxDevice interface of QdiscRunner.
  std::uint32_t tx_room() const { return config_.ring_size - used_; }
  // Post one packet at the queue's current time. Its serialisation starts when
  // the wire is free. Refused (false) only when the ring is full.
  bool xmit(Packet& pkt, bool more) { return xmit(pkt, more, queue_->now()); }
  // The same, for a caller that has the queue's current time at hand.
  // Precondition: now == the queue's now().
  bool xmit(Packet& pkt, bool more, Time now);

  // When the wire finishes the last posted packet.
  Time wire_free() const { return wire_free_; }
  // `packets` is not counted per xmit: every posted descriptor is either
  // reclaimed (a completion) or still in the ring.
  NicStats stats() const {
    NicStats s = stats_;
    s.packets = stats_.completions + used_;
    // Interrupts are counted by their handlers (the relay runs no code at
    // the interrupt), so one that has fired and whose handler is armed
    // counts too.
    s.interrupts = config_.dummy ? 0 : stats_.interrupts + (handler_.armed() && !handler_.relay_pending());
    return s;
  }
  const NicConfig& config() const { return config_; }

 private:
  struct Slot {
    Packet* pkt;
    Time done;  // serialisation end
  };
  void raise_irq();     // irq_, a plain event (moved by xmit, or no latency): arms the handler
  void handle_irq();    // the handler: reclaim completed descriptors
  void schedule_irq();  // next interrupt from the pending completions
  [[gnu::noinline]] void schedule_dummy_handler(Time now);  // the dummy device's next handler
  // The tx-frames-th pending completion before the interrupt: the interrupt
  // moves to it, as irq_ (a plain event) instead of the relay.
  [[gnu::noinline]] void move_irq(Time now);
  // Ring index `i` (< 2 * ring_size) wrapped: a compare, not a division.
  std::uint32_t wrap(std::uint32_t i) const { return i >= config_.ring_size ? i - config_.ring_size : i; }
  void post(Slot s) {   // at the ring's tail (there is room)
    ring_[wrap(head_ + used_)] = s;
    ++used_;
  }

  EventQueue* queue_;
  NicConfig config_;
  CompleteFn on_complete_;
  PollDoneFn on_poll_done_;
  std::vector<Slot> ring_;  // circular, ring_size entries
  std::uint32_t head_ = 0;  // oldest posted
  std::uint32_t used_ = 0;
  std::uint32_t unreported_ = 0;  // posted since the last interrupt was scheduled for them
  Time wire_free_ = 0;
  // The device interrupt at irq_at_ and its handler irq_latency later: a
  // relay of handler_ (EventQueue::schedule_unarmed_relay), which the queue
  // runs as if the interrupt's event armed the handler, without the call.
  // Moved earlier by xmit, the interrupt is a plain event of its own (irq_),
  // and raise_irq() arms the handler.
  Event irq_;
  Event handler_;
  // Which stage is next: the interrupt (the relay's first stage, or irq_),
  // the handler, or neither. Kept by the arms and the runs, so no event is
  // read. Once the interrupt has fired it still says irq: xmit's move test
  // then fails, since wire_free_ >= now >= irq_at_, as with handler.
  enum class Armed : std::uint8_t { none, irq, handler };
  Armed armed_ = Armed::none;
  Time irq_at_ = 0;  // while armed_ is irq: the interrupt's time
  std::uint64_t ns_per_byte_x1000_;  // serialisation time, in ps per byte
  // The last length's serialisation time: most runs have one packet size.
  std::uint32_t ser_len_ = 0;
  Time ser_ns_ = 0;
  NicStats stats_;
};

// Inline: the qdisc run calls it once per packet.
inline bool NicModel::xmit(Packet& pkt, bool more, Time now) {
  assert(now == queue_->now());
  if (used_ == config_.ring_size) {
    ++stats_.ring_full;
    return false;
  }
  if (config_.dummy) {
    post(Slot{&pkt, now});
    stats_.bytes += pkt.len;
    if (!more) ++stats_.doorbells;
    if (armed_ == Armed::none) {
      armed_ = Armed::handler;
      queue_->schedule_unarmed(handler_, now + config_.irq_latency);
    }
    return true;
  }
  const Time start = std::max(now, wire_free_);
  if (pkt.len != ser_len_) [[unlikely]] {
    ser_len_ = pkt.len;
    ser_ns_ = (static_cast<Time>(pkt.len + config_.wire_overhead) * ns_per_byte_x1000_ + 999) / 1000;
  }
  wire_free_ = start + ser_ns_;
  post(Slot{&pkt, wire_free_});
  ++unreported_;
  stats_.bytes += pkt.len;
  if (!more) ++stats_.doorbells;
  // Coalescing: the first pending completion starts the tx-usecs clock; the
  // tx-frames-th pending completion fires at once.
  if (armed_ == Armed::none) {
    schedule_irq();
  } else if (armed_ == Armed::irq && unreported_ >= config_.tx_frames && wire_free_ < irq_at_) [[unlikely]] {
    move_irq(now);
  }
  return true;
}

}  // namespace ufq::sim
