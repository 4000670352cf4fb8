#include "ufq/rt/packet_fate.hpp"

namespace ufq::rt {

const char* to_string(PacketFate f) {
  switch (f) {
    case PacketFate::sent: return "sent";
    case PacketFate::drop_limit: return "drop_limit";
    case PacketFate::drop_flow_limit: return "drop_flow_limit";
    case PacketFate::drop_horizon: return "drop_horizon";
    case PacketFate::failed: return "failed";
    case PacketFate::unsent: return "unsent";
  }
  return "?";
}

}  // namespace ufq::rt
