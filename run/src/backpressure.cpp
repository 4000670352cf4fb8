#include "backpressure.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace ufq::run {

Backpressure::Backpressure(const FqConfig& cfg)
    : limit_(cfg.limit),
      flow_limit_(cfg.flow_limit),
      mask_(cfg.orphan_mask),
      per_band_(cfg.compat != Compat::linux_5_7),
      prio2band_(cfg.priomap) {
  // One counter per fq key (hash & orphan_mask), at most 64K of them (a
  // larger mask folds keys together: they then share a budget, which only
  // makes a sender wait earlier, never lets fq drop).
  std::uint32_t n = 1;
  while (n < 65536 && n <= mask_) n <<= 1;
  hashed_size_ = n;
  hashed_ = std::make_unique<std::atomic<std::uint32_t>[]>(n);
  for (std::uint32_t i = 0; i < n; ++i) hashed_[i].store(0, std::memory_order_relaxed);
}

std::uint8_t Backpressure::band_of(std::uint8_t priority) const {
  if (!per_band_) return 0;
  return static_cast<std::uint8_t>(prio2band_[priority & 15] % 3);
}

namespace {
bool take(std::atomic<std::uint32_t>& c, std::uint32_t limit) {
  std::uint32_t v = c.load(std::memory_order_relaxed);
  do {
    if (v >= limit) return false;
  } while (!c.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
  return true;
}
}  // namespace

bool Backpressure::try_take(std::uint8_t band, std::atomic<std::uint32_t>* flow, std::uint32_t hash,
                            Room& r) {
  r.band = band;
  r.slot = Room::kNoSlot;
  std::atomic<std::uint32_t>* fc = flow;
  if (!fc) {
    r.slot = (hash & mask_) & (hashed_size_ - 1);
    fc = &hashed_[r.slot];
  }
  if (!take(*fc, flow_limit_)) return false;
  if (!take(band_[band], limit_)) {
    fc->fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  return true;
}

void Backpressure::give_back(const Room& r, std::atomic<std::uint32_t>* flow) {
  std::atomic<std::uint32_t>* fc = r.slot == Room::kNoSlot ? flow : &hashed_[r.slot];
  if (fc) fc->fetch_sub(1, std::memory_order_acq_rel);
  band_[r.band].fetch_sub(1, std::memory_order_acq_rel);
  if (waiters_.load(std::memory_order_acquire) > 0) wake_all();
}

void Backpressure::wake_all() {
  seq_.fetch_add(1, std::memory_order_acq_rel);
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
            nullptr, 0);
}

int Backpressure::wait(std::uint32_t seen, Time timeout_ns) {
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout_ns > 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / kNsecPerSec);
    ts.tv_nsec = static_cast<long>(timeout_ns % kNsecPerSec);
    tp = &ts;
  }
  // FUTEX_WAIT is restarted after a handler with SA_RESTART and fails with
  // EINTR otherwise, which is what a blocked UDP send does.
  const long r = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, seen,
                           tp, nullptr, 0);
  if (r == 0) return 0;
  if (errno == ETIMEDOUT) return ETIMEDOUT;
  if (errno == EINTR) return EINTR;
  return 0;  // EAGAIN: the sequence already moved
}

std::uint32_t Backpressure::in_flight() const {
  return band_[0].load(std::memory_order_relaxed) + band_[1].load(std::memory_order_relaxed) +
         band_[2].load(std::memory_order_relaxed);
}

bool Backpressure::band_has_room(std::uint8_t band) const {
  return band_[band].load(std::memory_order_relaxed) < limit_;
}

}  // namespace ufq::run
