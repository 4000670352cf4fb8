// The far end of `ufq pace`: one UDP socket that receives every flow,
// identifies packets by their wire header, and measures per flow what
// arrived, when (kernel receive timestamps, SO_TIMESTAMPNS, converted to
// CLOCK_MONOTONIC), and the gaps between arrivals. It reads in batches
// (recvmmsg) on a coarse poll grid, so the receiver does not wake once per
// packet (which would add its own wake-ups and IPIs to the sender's).
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "ufq/histogram.hpp"
#include "ufq/time.hpp"

namespace ufq::rt {

struct ReceiverConfig {
  sockaddr_in bind{};              // address to bind (port 0: any)
  std::uint32_t flows = 1;
  int rcvbuf = 64 << 20;           // SO_RCVBUFFORCE when allowed
  Time poll_ns = 1 * kNsecPerMsec; // read every poll_ns
  int cpu = -1;
  int nice = 0;                    // the receiver thread's nice value (0: unchanged)
};

struct FlowArrivals {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  Time first = 0, last = 0;      // arrival times (CLOCK_MONOTONIC)
  Time first_intended = 0, last_intended = 0;
  std::uint32_t next_seq = 0;
  std::uint64_t reordered = 0;   // sequence lower than expected
  std::uint64_t gaps_seq = 0;    // sequence numbers skipped (then maybe late)
};

struct ReceiverTotals {
  std::uint64_t packets = 0, bytes = 0, foreign = 0, recv_calls = 0, wakeups = 0;
};

class UdpReceiver {
 public:
  // Opens and binds the socket (in the caller's current network namespace).
  explicit UdpReceiver(const ReceiverConfig& cfg);
  ~UdpReceiver();
  UdpReceiver(const UdpReceiver&) = delete;
  UdpReceiver& operator=(const UdpReceiver&) = delete;

  sockaddr_in local_address() const;
  void start();
  // Stop reading (what is still in the socket is read first).
  void stop();

  // Approximate, from any thread while running.
  std::uint64_t packets_approx() const { return count_.load(std::memory_order_relaxed); }
  // After stop().
  const std::vector<FlowArrivals>& flows() const { return flows_; }
  const Histogram& gaps() const { return gaps_; }           // arrival gaps, all flows
  const Histogram& transit() const { return transit_; }     // arrival - intended
  const ReceiverTotals& totals() const { return totals_; }
  std::uint64_t thread_cpu_ns() const { return cpu_; }

 private:
  void loop();
  void drain();

  ReceiverConfig cfg_;
  int fd_ = -1;
  std::int64_t realtime_minus_mono_ = 0;
  std::vector<FlowArrivals> flows_;
  Histogram gaps_, transit_;
  ReceiverTotals totals_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> count_{0};
  std::uint64_t cpu_ = 0;
};

}  // namespace ufq::rt
