// Every installed runtime header (ufq/rt/), then one packet through a pacer
// thread into the sink egress: what a user of ufq::rt alone compiles and links.
#include "rt_headers.hpp"

#include <cstdio>

int main() {
  ufq::rt::SinkEgress sink;
  int sent = 0;
  ufq::rt::Pacer pacer(ufq::rt::PacerConfig{}, sink, [&](ufq::Packet&, ufq::rt::PacketFate f, ufq::Time) {
    sent += f == ufq::rt::PacketFate::sent;
  });
  ufq::FlowOwner owner{.id = 1};
  ufq::Packet p;
  p.len = 1000;
  p.owner = &owner;
  pacer.start();
  const bool accepted = pacer.submit(p);
  pacer.stop(/*drain_ns=*/1'000'000'000);
  std::printf("submitted %d, sent %d\n", accepted ? 1 : 0, sent);
  return accepted && sent == 1 ? 0 : 1;
}
