// What enqueue() decided about a packet.
#pragma once

#include <cstdint>

namespace ufq {

// Anything but `queued` means the scheduler refused the packet: it stays the
// caller's and is counted in the stats. Its caller-set fields are as given,
// except that a packet refused for `flow_limit` may carry a `tstamp` already
// capped to now + horizon (horizon_drop off), as the kernel rewrites the
// skb's time stamp before it looks up the flow.
enum class Verdict : std::uint8_t {
  queued,
  drop_limit,       // `limit` reached (global in 5.7, per band in latest): drops / band_drops
  drop_flow_limit,  // the flow holds `flow_limit` packets: flows_plimit
  drop_horizon,     // departure time beyond now + horizon with horizon_drop: horizon_drops
};

const char* to_string(Verdict v);

}  // namespace ufq
