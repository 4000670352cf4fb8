// Packets that are datagrams, for the tests that give them to a UdpEgress:
// indexed and iterated as ufq::Packet (what the pacer sees), each the
// `packet` of an rt::Datagram with a destination and a payload (zeros
// unless the test writes its own), charged as Datagram::charge() says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ufq/rt/datagram.hpp"

namespace ufq::rt {

inline const std::uint8_t kZeroPayload[65536] = {};

class Datagrams {
 public:
  explicit Datagrams(std::size_t n, Address dest = Address::loopback_v4(9), std::uint32_t payload = 1200)
      : d_(n) {
    for (std::size_t i = 0; i < n; ++i) {
      Datagram& d = d_[i];
      d.dest = dest;
      d.data = kZeroPayload;
      d.size = payload;
      d.charge();
      d.packet.cookie = i;
    }
  }
  Packet& operator[](std::size_t i) { return d_[i].packet; }
  const Packet& operator[](std::size_t i) const { return d_[i].packet; }
  Datagram& datagram(std::size_t i) { return d_[i]; }
  std::size_t size() const { return d_.size(); }

  struct iterator {
    Datagram* p;
    Packet& operator*() const { return p->packet; }
    iterator& operator++() {
      ++p;
      return *this;
    }
    bool operator!=(const iterator& o) const { return p != o.p; }
  };
  iterator begin() { return {d_.data()}; }
  iterator end() { return {d_.data() + d_.size()}; }

 private:
  std::vector<Datagram> d_;
};

}  // namespace ufq::rt
