// What enqueue() decided about a packet.
#pragma once

#include <cstdint>

namespace ufq {

// Anything but `queued` means the scheduler refused the packet: it is handed
// back untouched (still owned by the caller) and counted in the stats.
enum class Verdict : std::uint8_t {
  queued,
  drop_limit,       // `limit` reached (global in 5.7, per band in latest): drops / band_drops
  drop_flow_limit,  // the flow holds `flow_limit` packets: flows_plimit
  drop_horizon,     // departure time beyond now + horizon with horizon_drop: horizon_drops
};

const char* to_string(Verdict v);

}  // namespace ufq
