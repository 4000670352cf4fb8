#include "ufq/sim/hrtimer_model.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace ufq::sim {

Hrtimer::Hrtimer(HrtimerModel& cpu, Callback callback) : cpu_(&cpu), callback_(std::move(callback)) {}

Hrtimer::~Hrtimer() {
  if (queued()) cpu_->cancel(*this);
}

HrtimerModel::HrtimerModel(EventQueue& queue, HrtimerConfig config)
    : queue_(&queue),
      config_(config),
      event_(queue, [](void* cpu) { static_cast<HrtimerModel*>(cpu)->handle_interrupt(); }, this) {
  // The device is reprogrammed between firings (a third of its arms are
  // moves): in the relay list each move would take it out and place it again,
  // which costs more than the explicit form's first-stage entry.
  event_.set_explicit_relay(true);
}

HrtimerModel::~HrtimerModel() {
  while (!empty()) unlink(front());
}


void HrtimerModel::bad_start(const Hrtimer& timer) const {
  if (timer.cpu_ != this) throw std::logic_error("HrtimerModel::start: timer bound to another model");
  throw std::logic_error("HrtimerModel::start: soft expiry after hard expiry");
}

void HrtimerModel::start_range(Hrtimer& timer, Time soft, Time slack) {
  const Time hard = soft + slack < soft ? kNever : soft + slack;
  start(timer, soft, hard);
}


bool HrtimerModel::cancel(Hrtimer& timer) {
  if (!timer.queued() || timer.cpu_ != this) return false;
  unlink(timer);
  if (&timer == next_timer_ && !in_irq_) force_reprogram();
  return true;
}

Time HrtimerModel::overhead() const {
  return stats_.interrupts * config_.interrupt_cost +
         (stats_.reprograms + stats_.device_stops) * config_.reprogram_cost;
}

void HrtimerModel::handle_interrupt() {
  ++stats_.interrupts;
  in_irq_ = true;
  expires_next_ = kNever;
  next_timer_ = nullptr;
  const Time now = queue_->now();  // read once
  // Re-read the front each time: a callback may queue a timer that is due
  // before the current front, and it then runs in this same walk.
  while (!empty()) {
    Hrtimer& timer = front();
    if (timer.soft_ > now) break;  // blocks the walk, even if later ones are due
    unlink(timer);
    ++stats_.timers_run;
    timer.callback_();
  }
  in_irq_ = false;
  next_timer_ = empty() ? nullptr : &front();
  // The device is written here and often again in irq_exit (the qdisc run
  // restarts the watchdog): only the last write reaches the queue, with the
  // sequence number it would have taken, so the run is the same with one
  // queue operation fewer. Nothing in irq_exit reads the device event.
  defer_writes_ = true;
  program(earliest_hard_expiry());
  irq_exit_();
  defer_writes_ = false;
  // The device's event has just run (its handler's stage) and every write
  // since was deferred: it is not armed.
  if (deferred_arm_)
    queue_->schedule_relay_reserved_unarmed(event_, deferred_at_, config_.entry_latency, deferred_seq_);
}

void HrtimerModel::force_reprogram() {
  next_timer_ = empty() ? nullptr : &front();
  const Time next = earliest_hard_expiry();
  if (next != expires_next_) program(next);
}


}  // namespace ufq::sim
