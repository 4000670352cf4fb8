// The process's one pacer: an rt::Pacer over an rt::UdpEgress that sends on
// the sockets' own duplicates (socket_table.hpp), created on the first
// datagram the process hands over and fed by every thread of the program.
// It owns the datagram records and their payload memory (the datagram is
// copied, as the kernel copies it into an skb, so the call returns at once)
// and the producer-side room (backpressure.hpp).
//
// Life cycle (docs/run.md, "Processes"):
//  - fork: the child forgets the parent's pacer (its thread is not in the
//    child; the parent's queued datagrams are the parent's) and makes its own
//    on its first datagram (pthread_atfork).
//  - exit (exit(), return from main, _exit) and exec: drain for at most
//    UFQ_RUN_DRAIN, then count what is left as unsent and report.
//  - a termination signal with the default action (SIGTERM, SIGINT,
//    SIGHUP): the same, on a thread of ours, then the signal's default
//    action. UFQ_RUN_STATS_SIGNAL: a report while running. The handlers only
//    write one byte to a pipe; the reporting thread does the rest.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backpressure.hpp"
#include "socket_table.hpp"
#include "translate.hpp"
#include "ufq/rt/mpmc_ring.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/rt/udp_egress.hpp"

namespace ufq::run {

// Producer-side counts: calls that did not hand a datagram over, and why.
struct ProducerCounts {
  std::atomic<std::uint64_t> handed_over{0};  // datagrams given to the pacer
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> eagain{0};       // full, non-blocking: EAGAIN
  std::atomic<std::uint64_t> timed_out{0};    // full, SO_SNDTIMEO passed: EAGAIN
  std::atomic<std::uint64_t> interrupted{0};  // full, a signal: EINTR
  std::atomic<std::uint64_t> waits{0};        // blocking sends that waited for room
  std::atomic<std::uint64_t> large_payloads{0};  // payloads above the slot size (heap)
  std::atomic<std::uint64_t> held_at_stop{0};    // calls that came while the pacer stopped
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(PassReason::count)> passed{};
};

class ProcessPacer {
 public:
  // The pacer of this process, made on first use; nullptr when it cannot be
  // made (said once on stderr; the process's datagrams then pass through).
  static ProcessPacer* get();
  // The pacer if one exists (no creation).
  static ProcessPacer* current();

  // Return values of send(): hand the call to the kernel; or the pacer was
  // replaced (an exec that failed) while the call waited: try again with
  // the new one.
  static constexpr ssize_t kPassThrough = -2;
  static constexpr ssize_t kRetry = -3;

  // Hands one datagram over (the caller has taken a reference on `e`:
  // e.inflight incremented; it is given back here on every outcome but a
  // handed-over datagram, whose completion gives it back). Returns the bytes
  // queued, -1 with errno (EAGAIN, EINTR), kPassThrough or kRetry. Once the
  // pacer is stopping (exit, exec, a termination signal), a blocking call
  // waits (the process is about to end or exec: its datagrams would not be
  // paced, so they are not sent at all; counted as held_at_stop) and a
  // non-blocking one gets EAGAIN.
  ssize_t send(SocketEntry& e, int dupfd, const SendPlan& plan, const iovec* iov, std::size_t n,
               const SocketOptions& o);
  // For a datagram of `e` about to be handed over: the earliest it can
  // leave, so that the send rings the pacer's doorbell only when the pacer
  // may sleep past it. Connected flows with a rate only: N datagrams of the
  // flow surely ahead of it in fq or the ring (in flight, less a bulk of 64
  // that fq may have released already and one more) take at least
  // (N x len - two quanta of credit) / rate to leave, and the pacer wakes
  // for each of them; less 1 ms.
  // While a sender is ahead of its rate (blocked at flow_limit, iperf3 -b 0)
  // the pacer wakes for the flow's earlier datagrams before this one can
  // leave anyway: no doorbell, half the wake-ups. 0: ring if the pacer sleeps.
  Time due_hint(SocketEntry& e, const SendPlan& plan, const SocketOptions& o) const;
  // A burst of datagrams from one call (sendmmsg): one doorbell for all of
  // them instead of one per datagram. The calling thread's burst ends with
  // end_burst(), which rings once if anything was handed over.
  static void begin_burst();
  static void end_burst();
  // SO_MAX_PACING_RATE on a socket's owners, ordered with its datagrams.
  void set_rate(SocketEntry& e, Rate rate);
  void count_pass(PassReason r) {
    counts_.passed[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  Backpressure& room() { return bp_; }
  // Would a datagram sent on `e` now find room (readiness)?
  bool has_room(const SocketEntry& e, std::uint8_t priority, bool connected) const {
    return bp_.band_has_room(bp_.band_of(priority)) && (!connected || bp_.flow_has_room(e.inflight_flow));
  }

  // Drain (bounded), stop, report. Idempotent; a second caller waits for the
  // first. `why`: "exit", "exec", "SIGTERM", ...
  void finish(const std::string& why);
  // A report while running (the stats signal).
  void report_now();
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }

  // For every process: the fork and exec hooks (interpose.cpp calls
  // before_exec; pthread_atfork calls the rest).
  static void before_exec();
  static void after_exec_failed();

 private:
  struct Record {
    rt::Datagram d;  // first: Record from Datagram::of()
    SocketEntry* entry = nullptr;
    Room room;
    std::uint8_t* heap = nullptr;  // a payload above the slot size
  };
  static constexpr std::uint32_t kSlot = 2048;  // payload bytes kept in the record's slot

  ProcessPacer();
  ~ProcessPacer() = delete;  // lives as long as the process (and is left behind in a fork child)
  void done(Packet& p, rt::PacketFate fate);
  bool take(std::uint32_t& rec, std::uint8_t band, std::atomic<std::uint32_t>* flow, std::uint32_t hash,
            Room& room);
  void write_report(bool final, const std::string& why, const rt::PacerStats* live);
  ssize_t hold_at_stop(SocketEntry& e, bool nonblock);

  pid_t pid_;
  Backpressure bp_;
  std::uint32_t records_;
  std::unique_ptr<Record[]> recs_;
  std::uint8_t* slab_ = nullptr;  // records_ * kSlot bytes, mmap'd: touched only as used
  rt::MpmcRing<std::uint32_t> free_;
  rt::UdpEgress egress_;
  rt::Pacer pacer_;
  ProducerCounts counts_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_{0};  // producers inside send()
  std::mutex finish_mu_;
  bool finished_ = false;
};

}  // namespace ufq::run
