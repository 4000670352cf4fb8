#include "ufq/sim/nic_model.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <utility>

namespace ufq::sim {

NicModel::NicModel(EventQueue& queue, NicConfig config, CompleteFn on_complete,
                   PollDoneFn on_poll_done)
    : queue_(&queue),
      config_(config),
      on_complete_(std::move(on_complete)),
      on_poll_done_(std::move(on_poll_done)),
      ring_(config.ring_size),
      irq_(queue, [](void* nic) { static_cast<NicModel*>(nic)->raise_irq(); }, this),
      handler_(queue, [](void* nic) { static_cast<NicModel*>(nic)->handle_irq(); }, this),
      ns_per_byte_x1000_(config.line_rate_bps ? 8'000'000'000'000ULL / config.line_rate_bps : 0) {
  if (config.ring_size == 0) throw std::invalid_argument("NIC ring_size must be at least 1");
  if (config.line_rate_bps == 0) throw std::invalid_argument("NIC line rate must be positive");
  ser_ns_ = (static_cast<Time>(config_.wire_overhead) * ns_per_byte_x1000_ + 999) / 1000;  // for ser_len_ 0
}

void NicModel::schedule_irq() {
  // used_ > 0: xmit calls it after posting, handle_irq only when
  // descriptors remain.
  assert(used_ > 0);
  const Slot& first = ring_[head_];
  Time at = first.done + config_.tx_usecs;
  if (used_ >= config_.tx_frames) {
    const Slot& nth = ring_[wrap(head_ + config_.tx_frames - 1)];  // tx_frames <= used_ <= ring_size
    at = std::min(at, nth.done);
  }
  // Called only while neither irq_ nor handler_ is armed (xmit, handle_irq).
  armed_ = Armed::irq;
  irq_at_ = std::max(at, queue_->now());
  if (config_.irq_latency == 0) [[unlikely]]
    queue_->schedule_unarmed(irq_, irq_at_);  // the relay of no delay: a plain event
  else
    queue_->schedule_unarmed_relay(handler_, irq_at_, config_.irq_latency);
}

void NicModel::raise_irq() {
  // The interrupt is counted by its handler (stats()). unreported_ is read
  // only while irq_ is armed, and the handler sets it before it arms irq_
  // again: no reset here. irq_ has just run, and handler_ is armed only from
  // here: neither is armed.
  armed_ = Armed::handler;
  queue_->schedule_unarmed(handler_, queue_->now() + config_.irq_latency);
}

void NicModel::handle_irq() {
  armed_ = Armed::none;  // the handler has just run
  ++stats_.interrupts;   // read by stats() only off the dummy device
  const Time now = queue_->now();
  while (used_ > 0) {
    const Slot s = ring_[head_];
    if (s.done > now) break;
    head_ = head_ + 1 == config_.ring_size ? 0 : head_ + 1;
    --used_;
    ++stats_.completions;
    on_complete_(*s.pkt);
  }
  unreported_ = used_;
  on_poll_done_();
  // Completions still on the wire raise the next interrupt.
  if (used_ == 0 || armed_ != Armed::none) return;
  if (config_.dummy) [[unlikely]]
    schedule_dummy_handler(now);
  else
    schedule_irq();
}

void NicModel::move_irq(Time now) {
  irq_at_ = std::max(now, wire_free_);
  queue_->cancel(handler_);  // the relay, when it is that (its first stage is still due)
  queue_->schedule(irq_, irq_at_);
}

void NicModel::schedule_dummy_handler(Time now) {
  armed_ = Armed::handler;
  queue_->schedule_unarmed(handler_, std::max(now, ring_[head_].done) + config_.irq_latency);
}

}  // namespace ufq::sim
