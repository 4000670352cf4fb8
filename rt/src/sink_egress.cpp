#include "ufq/rt/sink_egress.hpp"

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

bool SinkEgress::xmit(Packet& p, bool more) {
  bytes_ += p.len;
  ++stats_.packets;
  ++stats_.messages;
  ++bulk_;
  if (!more) {
    ++stats_.send_calls;  // one "doorbell" per bulk
    bulk_ = 0;
  }
  complete(p, TxResult::sent, mono_now());
  return true;
}

}  // namespace ufq::rt
