#include "ufq/rt/payload_pool.hpp"

#include <cstring>
#include <stdexcept>

namespace ufq::rt {

PayloadPool::PayloadPool(std::uint32_t slots, std::uint32_t slot_size)
    : slots_(slots), slot_size_(slot_size), free_(slots) {
  if (slots == 0) throw std::invalid_argument("PayloadPool: slots must be > 0");
  if (slot_size == 0 || slot_size > 65535)
    throw std::invalid_argument("PayloadPool: slot size " + std::to_string(slot_size) + " is outside 1..65535");
  arena_ = std::make_unique<std::uint8_t[]>(std::size_t{slots} * slot_size);
  for (std::uint32_t i = 0; i < slots; ++i) free_.try_push(i);
}

bool PayloadPool::copy_in(Datagram& d, const void* bytes, std::uint32_t n) {
  if (n > slot_size_) return false;
  std::uint32_t i = 0;
  if (!free_.try_pop(i)) return false;
  std::uint8_t* slot = arena_.get() + std::size_t{i} * slot_size_;
  if (n) std::memcpy(slot, bytes, n);
  d.data = slot;
  d.size = n;
  return true;
}

bool PayloadPool::owns(const std::uint8_t* p) const {
  const std::uint8_t* base = arena_.get();
  return p >= base && p < base + std::size_t{slots_} * slot_size_ &&
         static_cast<std::size_t>(p - base) % slot_size_ == 0;
}

void PayloadPool::release(Datagram& d) {
  if (!d.data) return;
  if (!owns(d.data)) throw std::logic_error("PayloadPool: the datagram's payload is not one of this pool's slots");
  free_.try_push(static_cast<std::uint32_t>(static_cast<std::size_t>(d.data - arena_.get()) / slot_size_));
  d.data = nullptr;
}

std::uint32_t PayloadPool::in_use_approx() const {
  const std::size_t free = free_.size_approx();
  return free >= slots_ ? 0 : static_cast<std::uint32_t>(slots_ - free);
}

}  // namespace ufq::rt
