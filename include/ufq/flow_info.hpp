// What every fq scheduler implementation shares with its callers besides
// packets and configuration: the per-flow view for inspection and the sink
// that receives packets handed back outside dequeue().
#pragma once

#include <cstdint>
#include <functional>

#include "ufq/packet.hpp"
#include "ufq/time.hpp"

namespace ufq {

// Where a flow is, for inspection.
enum class FlowState : std::uint8_t {
  detached,   // on no list: idle (a GC candidate after 3 s)
  new_list,   // on a band's new_flows list
  old_list,   // on a band's old_flows list
  throttled,  // in the throttled set until time_next_packet
};

const char* to_string(FlowState s);

struct FlowInfo {
  std::uint64_t key;       // owner id << 1, or (hash & orphan_mask) << 1 | 1
  std::uint32_t qlen;
  std::int32_t credit;
  Time time_next_packet;   // 0 = never paced
  FlowState state;
  std::uint8_t band;       // band of the flow's last packet (latest), 0 in 5.7
};

// Called with each packet the scheduler hands back outside dequeue(): packets
// removed by change() lowering the limit, and by reset().
using PacketSink = std::function<void(Packet&)>;

}  // namespace ufq
