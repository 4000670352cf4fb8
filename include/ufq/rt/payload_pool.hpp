// Copy mode for datagram payloads: fixed-size slots allocated once, so an
// application that does not want to keep its buffer until the completion
// copies the bytes into a slot and reuses its buffer at once. No allocation
// per packet; any thread may acquire or release (a lock-free ring of free
// slots). The slot goes back to the pool when the datagram comes back
// (release(d) in the completion).
#pragma once

#include <cstdint>
#include <memory>

#include "ufq/rt/datagram.hpp"
#include "ufq/rt/mpmc_ring.hpp"

namespace ufq::rt {

class PayloadPool {
 public:
  // `slots` buffers of `slot_size` bytes each. Throws std::invalid_argument
  // when either is 0 or slot_size exceeds 65535.
  PayloadPool(std::uint32_t slots, std::uint32_t slot_size);
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;

  // Copies `n` bytes into a free slot and points d.data/d.size at it. False
  // (d unchanged) when n exceeds the slot size or no slot is free: the
  // caller still has its bytes and may retry after a release.
  bool copy_in(Datagram& d, const void* bytes, std::uint32_t n);
  // Gives d's slot back (d.data must be one of this pool's slots, or
  // nullptr: then nothing happens). Clears d.data.
  void release(Datagram& d);
  bool owns(const std::uint8_t* p) const;

  std::uint32_t slot_size() const { return slot_size_; }
  std::uint32_t slots() const { return slots_; }
  std::uint32_t in_use_approx() const;

 private:
  std::uint32_t slots_, slot_size_;
  std::unique_ptr<std::uint8_t[]> arena_;
  MpmcRing<std::uint32_t> free_;
};

}  // namespace ufq::rt
