// Where every packet went: the identity the pacer's summary proves at exit.
//
//   produced = sent
//            + dropped  (fq: limit, flow_limit, horizon)
//            + failed   (send errors given up, by errno: ECONNREFUSED after its
//                        one retry, EPERM, EMSGSIZE, ...)
//            + unsent   (still queued at exit: held by the producer, in the
//                        ring, in the scheduler, staged in the egress)
//
// `produced` counts packets that exist: for the Pacer alone, those submit()
// accepted; for a `ufq pace` run, also the one packet the producer holds
// because the ring refused it. Refusals that do not destroy a packet (the
// ring full, the pool empty: the producer waits and retries) and sends
// refused with EAGAIN/ENOBUFS/EINTR (kept, retried) are counted elsewhere:
// they delay packets, they do not account for any.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ufq::rt {

// Packets per errno (Linux errno values are below 134; larger ones share
// slot 0, printed as "other").
class ErrnoCounts {
 public:
  static constexpr std::size_t kSlots = 256;
  void add(int error, std::uint64_t n = 1);
  std::uint64_t operator[](int error) const;
  std::uint64_t total() const;
  // "ECONNREFUSED 3, EPERM 1" (empty when all are 0).
  std::string format() const;
  // Calls fn(name, count) for each non-zero errno, in errno order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t e = 0; e < kSlots; ++e)
      if (n_[e]) fn(name(static_cast<int>(e)), n_[e]);
  }
  // "ECONNREFUSED", or "errno N" for values without a name.
  static std::string name(int error);

 private:
  std::array<std::uint64_t, kSlots> n_{};
};

struct PacketAccounting {
  std::uint64_t produced = 0;
  std::uint64_t sent = 0;
  std::uint64_t drop_limit = 0, drop_flow_limit = 0, drop_horizon = 0;
  ErrnoCounts failed;
  std::uint64_t unsent_producer = 0, unsent_ring = 0, unsent_scheduler = 0, unsent_egress = 0;

  std::uint64_t dropped() const { return drop_limit + drop_flow_limit + drop_horizon; }
  std::uint64_t unsent() const {
    return unsent_producer + unsent_ring + unsent_scheduler + unsent_egress;
  }
  std::uint64_t accounted() const { return sent + dropped() + failed.total() + unsent(); }
  bool balanced() const { return produced == accounted(); }
  // One line, every term: "produced 10 = sent 7 + dropped 1 (limit 0,
  // flow_limit 1, horizon 0) + failed 1 (ECONNREFUSED 1) + unsent 1
  // (producer 0, ring 0, fq 1, egress 0): balanced".
  std::string format() const;
};

}  // namespace ufq::rt
