// Per-descriptor state of the program's UDP sockets: what the kernel would
// keep in the socket and fq reads from it (docs/run.md, "Socket table").
//
// The table maps a program descriptor to a SocketEntry (several descriptors
// map to one entry after dup), to "not ours" (a file, a TCP or unix socket:
// every call passes through) or to "unknown" (classified with getsockopt on
// first use, then remembered). socket() and the calls that change what a
// number names (close, close_range, dup2, dup3, fcntl F_DUPFD) keep it
// current. Lookups take no lock (two atomic loads); an entry's options are
// read and written under its own mutex.
//
// Each entry holds its own duplicate of the socket (`dupfd`, close-on-exec,
// far above the program's numbers): the pacer sends on it, so datagrams
// queued when the program closes its descriptor or dup2()s another over it
// still leave from the same socket (same source port, same options). The
// duplicate is let go when the program no longer names the socket and
// nothing of it is in flight. Entries are never freed, only recycled, so a
// pointer read from the table stays valid memory.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ufq/packet.hpp"
#include "ufq/rt/datagram.hpp"
#include "ufq/time.hpp"

namespace ufq::run {

// The options fq (and our translation) reads, copied out under the lock.
struct SocketOptions {
  bool connected = false;
  rt::Address peer;
  Rate max_pacing_rate = kUnlimitedRate;  // SO_MAX_PACING_RATE (bytes/s)
  bool txtime = false;                    // SO_TXTIME set: SCM_TXTIME allowed
  clockid_t txtime_clock = CLOCK_MONOTONIC;
  std::uint32_t priority = 0;  // SO_PRIORITY
  std::uint8_t ecn = 0;        // the ECN bits of IP_TOS / IPV6_TCLASS
  std::uint8_t dscp = 0;       // the rest of that byte (kept by the socket, see translate.cpp)
  std::uint16_t udp_segment = 0;  // UDP_SEGMENT socket option
  bool nonblock = false;          // O_NONBLOCK of the open file description
  bool corked = false;            // UDP_CORK: the kernel assembles, we pass through
  bool v6only = false;            // IPV6_V6ONLY: no IPv4 destinations (ENETUNREACH, the kernel's)
  Time sndtimeo_ns = 0;           // SO_SNDTIMEO (0: wait forever)
};

struct EpollReg {  // one epoll set that watches this socket (readiness.cpp)
  int epfd = -1;
  int fd = -1;              // the program's descriptor in that set
  std::uint32_t events = 0; // what the program asked for
  std::uint64_t data = 0;
  bool out_dropped = false; // EPOLLOUT removed from the real interest while full
};

struct SocketEntry {
  std::mutex mu;
  std::uint64_t id = 0;  // unique per entry use (flow hash seed, owner id)
  int family = 0;        // AF_INET or AF_INET6
  int dupfd = -1;        // ours: the pacer sends on it
  SocketOptions opt;
  FlowOwner owner_connected;    // one flow per connected socket
  FlowOwner owner_unconnected;  // datagrams hashed per destination, the socket's rate
  int program_fds = 0;          // program descriptors naming this socket
  bool closed = false;          // the program names it no more
  std::vector<EpollReg> epoll;
  // Datagrams of this socket handed to the pacer and not yet back; of those,
  // on the connected owner's flow (counted against flow_limit).
  std::atomic<std::uint32_t> inflight{0};
  std::atomic<std::uint32_t> inflight_flow{0};
};

// The entry for a program descriptor, classifying an unknown one; nullptr
// when it is not an IPv4/IPv6 UDP socket (or not open).
SocketEntry* lookup_socket(int fd);
// A descriptor returned by socket(domain, type, protocol).
void on_socket_created(int fd, int domain, int type, int protocol);
// `newfd` now names what `oldfd` names (dup, dup2, dup3, F_DUPFD), after the
// real call succeeded. Call forget_descriptor(newfd) before dup2/dup3.
void on_descriptor_dup(int oldfd, int newfd);
// The program is about to close `fd` (or replace it): it no longer names the
// socket. Queued datagrams of the socket are still sent.
void forget_descriptor(int fd);
// One datagram of `e` came back from the pacer (any thread): lets the
// duplicate go when the program closed the socket and nothing is left.
void socket_datagram_done(SocketEntry& e, bool on_flow);
// In a fork child: every mutex re-made, nothing in flight (the parent's
// datagrams are the parent's), closed sockets let go.
void socket_table_after_fork();
// Calls fn(entry) for every entry in use (cold path: readiness, fork).
void for_each_socket(void (*fn)(SocketEntry&, void*), void* arg);

}  // namespace ufq::run
