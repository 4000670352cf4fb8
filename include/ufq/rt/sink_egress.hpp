// An egress that counts and discards: measures the scheduler and the wake-up
// strategy alone, without the cost of the network stack.
#pragma once

#include "ufq/rt/egress.hpp"

namespace ufq::rt {

class SinkEgress final : public Egress {
 public:
  std::uint32_t tx_room() override { return 64; }
  bool xmit(Packet& p, bool more) override;
  std::uint32_t flush() override { return 0; }
  std::uint32_t pending() const override { return 0; }
  void abandon(const std::function<void(Packet&)>&) override {}
  const char* describe() const override { return "sink"; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_ = 0;
  std::uint32_t bulk_ = 0;
};

}  // namespace ufq::rt
