// Built by the install test with nothing but
//   c++ -std=c++20 pkgconfig_rt.cpp $(pkg-config --cflags --libs ufq-rt)
// against the installed prefix: a pacer thread and the sink egress.
#include <cstdio>

#include <ufq/rt/pacer.hpp>
#include <ufq/rt/sink_egress.hpp>

int main() {
  ufq::rt::SinkEgress sink;
  int done = 0;
  ufq::rt::Pacer pacer(ufq::rt::PacerConfig{}, sink,
                       [&](ufq::Packet&, ufq::rt::PacketFate, ufq::Time) { ++done; });
  ufq::Packet p;
  p.len = 100;
  p.hash = 7;
  pacer.start();
  const bool accepted = pacer.submit(p);
  pacer.stop(/*drain_ns=*/1'000'000'000);
  std::printf("submitted %d, done %d\n", accepted ? 1 : 0, done);
  return accepted && done == 1 ? 0 : 1;
}
