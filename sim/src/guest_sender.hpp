// The kernel-fq guest's sender (ufq/sim/guest.hpp, docs/simulator.md "The
// guest model"): one task that serves every flow from a ring of ready flows,
// sends until a socket is full, sleeps in epoll_wait when no flow is ready
// and is woken, after a drawn latency, when a qdisc run freed enough
// datagrams of a full socket. Private to sim/src.
#pragma once

#include <cstdint>
#include <vector>

#include "ufq/sim/event_queue.hpp"
#include "ufq/sim/guest.hpp"
#include "ufq/sim/traffic.hpp"

namespace ufq::sim::detail {

class GuestSender {
 public:
  enum class Send : std::uint8_t {
    sent,  // queued in fq (the socket may now be full)
    full,  // EAGAIN: the socket holds sndbuf datagrams
    done,  // the flow has nothing more to send (EDT: its next departure is past the end)
  };
  // What the simulation does for the sender. Called from the sender's events.
  class Host {
   public:
    virtual Send send(std::uint32_t slot) = 0;  // one sendmsg of the flow in `slot`
    virtual void woke() = 0;                    // the task runs again (idle exit)
    virtual void stopped() = 0;                 // it has sent its last datagram
   protected:
    ~Host() = default;
  };

  // `host` and `rng` must outlive the sender. Starts no event until start().
  GuestSender(EventQueue& q, const GuestConfig& cfg, Rng& rng, Host& host, std::uint32_t flows);

  // At `at`, every flow is ready, in slot order (the harness opens them so).
  // At `stop_at` (kNever: when every flow is done) the task stops sending.
  void start(Time at, Time stop_at);
  // The socket of `slot` has room again (at most wake_at in flight). Wakes a
  // sleeping sender; a flow that was not full is already in the ring.
  void writable(std::uint32_t slot);
  // The task is running or runnable (not asleep in epoll_wait, not finished).
  bool running() const { return !asleep_ && !finished_ && started_; }
  bool finished() const { return finished_; }
  std::uint64_t wakeups() const { return wakeups_; }
  std::uint64_t sends() const { return sends_; }

 private:
  void step();   // one send of the flow being visited, or the next visit, or epoll_wait
  void wake();   // the woken task gets the CPU
  void finish();

  enum : std::uint8_t { kQueued = 1, kFull = 2, kDone = 4 };
  EventQueue& q_;
  GuestConfig cfg_;
  Rng& rng_;
  Host& host_;
  std::vector<std::uint8_t> state_;
  // Ready flows, in the order the task serves them: a ring over all flows
  // (each is in it at most once), so that serving them allocates nothing.
  std::vector<std::uint32_t> ring_;
  std::size_t ring_head_ = 0, ring_count_ = 0;
  void ring_push(std::uint32_t slot) { ring_[(ring_head_ + ring_count_++) % ring_.size()] = slot; }
  std::uint32_t ring_pop() {
    const std::uint32_t s = ring_[ring_head_];
    ring_head_ = (ring_head_ + 1) % ring_.size();
    --ring_count_;
    return s;
  }
  std::vector<std::uint32_t> ready_; // made writable since the last epoll_wait (reserved for all flows)
  std::uint32_t done_ = 0;
  std::uint32_t visiting_ = 0, visit_sends_ = 0;  // the flow being visited and its sends so far
  bool in_visit_ = false;
  bool started_ = false, asleep_ = false, finished_ = false;
  std::uint64_t wakeups_ = 0, sends_ = 0;
  Event step_, wake_, stop_;
};

}  // namespace ufq::sim::detail
