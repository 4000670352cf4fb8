#include "guest_sender.hpp"

namespace ufq::sim::detail {

GuestSender::GuestSender(EventQueue& q, const GuestConfig& cfg, Rng& rng, Host& host, std::uint32_t flows)
    : q_(q),
      cfg_(cfg),
      rng_(rng),
      host_(host),
      state_(flows, 0),
      ring_(flows ? flows : 1, 0),
      step_(q, [this] { step(); }),
      wake_(q, [this] { wake(); }),
      stop_(q, [this] { finish(); }) {
  ready_.reserve(flows);
}

void GuestSender::finish() {
  if (finished_) return;
  finished_ = true;
  host_.stopped();
}

void GuestSender::start(Time at, Time stop_at) {
  if (stop_at != kNever) q_.schedule(stop_, stop_at);
  for (std::uint32_t i = 0; i < state_.size(); ++i) {
    ring_push(i);
    state_[i] = kQueued;
  }
  started_ = true;
  q_.schedule(step_, at);
}

void GuestSender::writable(std::uint32_t slot) {
  if (finished_ || !(state_[slot] & kFull)) return;
  state_[slot] = static_cast<std::uint8_t>(state_[slot] & ~kFull);
  ready_.push_back(slot);
  if (asleep_ && !wake_.armed()) {
    // The write-space wake-up runs after the qdisc run that freed the
    // datagrams; the task gets the CPU a drawn latency later.
    const Time spread = cfg_.wake_latency_mean > cfg_.wake_latency_min ? cfg_.wake_latency_mean - cfg_.wake_latency_min : 0;
    const Time lat = cfg_.wake_latency_min + (spread ? rng_.exponential(static_cast<double>(spread)) - 1 : 0);
    q_.schedule(wake_, q_.now() + lat);
  }
}

void GuestSender::wake() {
  asleep_ = false;
  ++wakeups_;
  host_.woke();
  step();
}

void GuestSender::step() {
  if (finished_) return;
  if (!in_visit_ && ring_count_ == 0) {
    if (ready_.empty()) {
      asleep_ = true;  // epoll_wait blocks
      return;
    }
    for (const std::uint32_t s : ready_) {
      if (state_[s] & (kQueued | kDone)) continue;
      state_[s] = static_cast<std::uint8_t>(state_[s] | kQueued);
      ring_push(s);
    }
    ready_.clear();
    q_.schedule(step_, q_.now() + cfg_.epoll_cost);
    return;
  }
  if (!in_visit_) {
    visiting_ = ring_pop();
    state_[visiting_] = static_cast<std::uint8_t>(state_[visiting_] & ~kQueued);
    in_visit_ = true;
    visit_sends_ = 0;
  }
  const std::uint32_t slot = visiting_;
  const Send r = host_.send(slot);
  ++visit_sends_;
  if (r == Send::sent) ++sends_;
  if (r == Send::full) state_[slot] = static_cast<std::uint8_t>(state_[slot] | kFull);
  if (r == Send::done) {
    state_[slot] = static_cast<std::uint8_t>(state_[slot] | kDone);
    if (++done_ == state_.size()) {
      finish();
      return;
    }
  }
  if (r != Send::sent || visit_sends_ == cfg_.burst) {
    in_visit_ = false;
    if (r == Send::sent) {
      state_[slot] = static_cast<std::uint8_t>(state_[slot] | kQueued);
      ring_push(slot);
    }
  }
  // What a send costs varies (caches, the interrupts taken meanwhile): it is
  // drawn, exponential around send_cost, so that the flows' phases, set by
  // when the task first reaches them, mix as the harness's do.
  q_.schedule(step_, q_.now() + rng_.exponential(static_cast<double>(cfg_.send_cost)));
}

}  // namespace ufq::sim::detail
