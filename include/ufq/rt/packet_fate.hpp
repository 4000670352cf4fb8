// Where a packet handed to the runtime ended, and the callback that reports
// it. Every packet given to an EventLoop (enqueue) or a Pacer (submit) comes
// back exactly once through PacketDone with one of these fates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "ufq/packet.hpp"
#include "ufq/time.hpp"

namespace ufq::rt {

enum class PacketFate : std::uint8_t {
  sent,
  drop_limit,       // scheduler: limit (also a packet trimmed by change() lowering it)
  drop_flow_limit,  // scheduler: flow_limit
  drop_horizon,     // scheduler: beyond the horizon
  failed,           // egress: hard send error
  unsent,           // still held when the runtime stopped (give_back(), Pacer::stop())
};
inline constexpr std::size_t kPacketFates = 6;
const char* to_string(PacketFate f);

// The packet is the caller's again when this is called. `when`: for `sent`,
// the time the send call returned; otherwise the runtime's `now`. Called on
// the thread that drives the runtime (docs/embedding.md says what it may do).
using PacketDone = std::function<void(Packet&, PacketFate, Time when)>;

}  // namespace ufq::rt
