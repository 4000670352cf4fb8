// Where the pacer's packets go: the device of the driver loop (QdiscRunner's
// TxDevice) for the real-time runtime. An egress accepts packets in bulks
// (xmit with `more` = another follows), hands them to the kernel with as few
// system calls as it can, and reports each packet once through the
// completion callback: sent (with the time the send call returned) or failed
// (a hard error, with the errno). A send refused for lack of buffer space
// (EAGAIN, ENOBUFS) is kept and retried by flush(); meanwhile tx_room() is 0,
// like a stopped device queue.
#pragma once

#include <cstdint>
#include <functional>

#include "ufq/packet.hpp"

namespace ufq::rt {

struct EgressStats {
  std::uint64_t packets = 0;       // handed to the kernel (or discarded by a sink)
  std::uint64_t send_calls = 0;    // system calls that sent (sendmmsg)
  std::uint64_t messages = 0;      // datagram messages (a GSO message carries several packets)
  std::uint64_t gso_messages = 0;  // messages with UDP_SEGMENT
  std::uint64_t gso_packets = 0;   // packets sent inside GSO messages
  std::uint64_t gso_segments = 0;  // segments those messages carried (a train is one packet)
  std::uint64_t gso_fallbacks = 0; // GSO switched off after EIO/EINVAL/EOPNOTSUPP
  std::uint64_t blocked = 0;       // send calls refused with EAGAIN or ENOBUFS
  std::uint64_t eagain = 0;
  std::uint64_t enobufs = 0;
  std::uint64_t retries = 0;       // flush() calls that retried a refused send
  std::uint64_t eintr = 0;         // send calls interrupted by a signal (sent again)
  std::uint64_t econnrefused_retries = 0;  // ECONNREFUSED (an earlier ICMP error) sent again once
  std::uint64_t failed = 0;        // packets given up on a hard error (refused ones included)
  std::uint64_t refused = 0;       // of those, refused before any send (bad datagram or descriptor)
  std::uint64_t ce_marked = 0;     // packets sent with the CE codepoint the scheduler set
  int last_errno = 0;              // of the last hard error
};

enum class TxResult : std::uint8_t { sent, failed };

// Called once per packet, on the thread that calls xmit()/flush().
using TxDone = std::function<void(Packet&, TxResult, Time when, int error)>;

class Egress {
 public:
  virtual ~Egress() = default;

  // Packets xmit() accepts now (0 while a refused send waits for flush()).
  virtual std::uint32_t tx_room() = 0;
  // Accept one packet (false only when tx_room() was 0: the caller keeps it).
  // With more == false (or a full bulk) the staged packets are sent.
  virtual bool xmit(Packet& p, bool more) = 0;
  // Retry staged packets a refused send left behind; returns packets sent.
  virtual std::uint32_t flush() = 0;
  // Packets accepted and not yet handed to the kernel.
  virtual std::uint32_t pending() const = 0;
  // A file descriptor to poll for POLLOUT while blocked (-1: none, retry
  // after a short sleep, as ENOBUFS gives no signal).
  virtual int poll_fd() const { return -1; }
  // Give every pending packet back unsent (stop): each is passed to `fn`.
  virtual void abandon(const std::function<void(Packet&)>& fn) = 0;
  // What the egress is, for reports ("udp shared sendmmsg+gso", "sink").
  virtual const char* describe() const = 0;

  const EgressStats& stats() const { return stats_; }
  void set_tx_done(TxDone fn) { done_ = std::move(fn); }

 protected:
  void complete(Packet& p, TxResult r, Time when, int error = 0) {
    if (done_) done_(p, r, when, error);
  }
  EgressStats stats_;

 private:
  TxDone done_;
};

// The adapter QdiscRunner needs (a TxDevice by value semantics).
struct EgressDevice {
  Egress* egress;
  std::uint32_t tx_room() { return egress->tx_room(); }
  bool xmit(Packet& p, bool more) { return egress->xmit(p, more); }
};

}  // namespace ufq::rt
