// One send call of the program (msghdr, flags, the socket's options) into
// what an rt::Datagram needs: destination, source, ECN codepoint, GSO
// segment size, departure time, priority, the flow. Nothing else: the
// payload is copied by process_pacer.cpp, room is found by backpressure.cpp.
//
// What the translation cannot represent exactly, and every call the kernel
// would refuse, is handed to the kernel untouched ("pass through"): the
// kernel then sends it (unpaced, counted) or refuses it with its own errno.
// So a malformed control message gets exactly the kernel's answer, by
// construction (docs/run.md, "Errors").
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "socket_table.hpp"
#include "ufq/rt/datagram.hpp"

namespace ufq::run {

enum class PassReason : std::uint8_t {
  none,
  kernel_decides,   // the kernel refuses it (or we cannot tell): its errno
  corked,           // MSG_MORE / UDP_CORK: the kernel assembles the datagram
  unmodelled_cmsg,  // IP_TTL, SO_MARK, IPV6_HOPLIMIT, ...: not in the record
  unmodelled_flag,  // MSG_DONTROUTE, MSG_ZEROCOPY, ...
  no_room,          // payload memory exhausted for a large datagram
  count,
};
const char* to_string(PassReason r);

struct SendPlan {
  rt::Address dest;
  rt::Address source;
  std::uint32_t source_ifindex = 0;
  rt::Ecn ecn = rt::Ecn::not_ect;
  std::uint16_t gso_size = 0;
  Time tstamp = 0;  // CLOCK_MONOTONIC departure time, 0: none
  std::uint8_t priority = 0;
  bool connected_flow = false;  // on the socket's own flow (else hashed by destination)
  std::uint32_t hash = 0;       // flow hash for the unconnected case
  std::size_t size = 0;         // payload bytes
  bool dontwait = false;        // MSG_DONTWAIT
  // interrupting_handlers() when the send call began: a handler without
  // SA_RESTART that runs after that, before the send would block, ends the
  // wait with EINTR, as a signal pending when the kernel's send blocks does
  // (the kernel runs no handler inside the call; we run in user space, where
  // the handler runs at once).
  std::uint64_t handlers_at_entry = 0;
  // The earliest the datagram can possibly leave, for the doorbell (0: now,
  // ring whenever the pacer sleeps): filled by the caller (due_hint()).
  Time due_hint = 0;
};

// Fills `plan` from one message; PassReason::none when it can be paced.
// `o` is the socket's options (a copy taken under its lock).
PassReason translate(const SocketEntry& e, const SocketOptions& o, const msghdr& m, int flags,
                     SendPlan& plan);

// Total bytes of an iovec array; false when it cannot be read as one (NULL
// with a length, more than IOV_MAX entries, a sum above SSIZE_MAX).
bool iov_total(const iovec* iov, std::size_t n, std::size_t& total);

}  // namespace ufq::run
