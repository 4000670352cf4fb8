// What came back through a pacer's PacketDone callback, per packet (indexed
// by Packet::cookie): its fate, when, how many of each fate, and how many
// came back more than once (which must never happen). Shared by the pacer
// tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ufq/rt/pacer.hpp"

namespace ufq::rt {

struct Outcome {
  std::vector<int> fate_of;  // per packet index, -1 = not back yet
  std::vector<Time> when;
  std::array<std::uint64_t, kPacketFates> fates{};
  std::uint64_t twice = 0;
  explicit Outcome(std::size_t n) : fate_of(n, -1), when(n, 0) {}
  PacketDone callback() {
    return [this](Packet& p, PacketFate f, Time t) {
      if (fate_of[p.cookie] != -1) ++twice;
      fate_of[p.cookie] = static_cast<int>(f);
      when[p.cookie] = t;
      ++fates[static_cast<std::size_t>(f)];
    };
  }
  // Packets that came back, whatever their fate.
  std::uint64_t total() const {
    std::uint64_t s = 0;
    for (auto v : fates) s += v;
    return s;
  }
};

}  // namespace ufq::rt
