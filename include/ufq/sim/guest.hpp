// The kernel-fq guest as the simulator can be set up to run it
// (docs/simulator.md, "The guest model"): the machine parts the recorded
// Linux 6.1 runs showed missing from the default model (docs/results.md §3).
// Both parts are opt-in; with their defaults the simulator is unchanged.
//  * The sender as the guest runs it (`sender`): one task for all flows, as the
//    harness's UDP sender: non-blocking sockets that hold `sndbuf` datagrams
//    each, the socket made writable again (an edge-triggered epoll event) only
//    when at most `wake_at` remain in flight, `burst` sends per visit of a
//    ready flow, each send taking an exponential draw of mean `send_cost` of
//    the CPU, and a sleeping task
//    woken `wake_latency_min` + an exponential draw of mean
//    `wake_latency_mean - wake_latency_min` after the qdisc run that freed the
//    datagrams. Replaces the refill on completion (SimConfig::inflight).
//  * A tick that stops on an idle CPU (`nohz_idle`): the tick keeps running
//    while the CPU is busy; when it expires on an idle CPU it is stopped (the
//    idle governor then expects a long idle), re-armed only for the next
//    timer-wheel timer (`wheel_timers_per_s`, Poisson, on a jiffy), and
//    restarted at the next jiffy when a task runs again.
#pragma once

#include <cstdint>
#include <string>

#include "ufq/time.hpp"

namespace ufq::sim {

struct GuestConfig {
  // The sender.
  bool sender = false;
  std::uint32_t sndbuf = 6;     // datagrams a socket holds before a send fails (EAGAIN)
  std::uint32_t wake_at = 2;    // writable again at or below this many in flight
  std::uint32_t burst = 8;      // sends per visit of a ready flow
  Time send_cost = 16'000;      // CPU per send (mean of an exponential draw), as virtual time the task runs
  Time epoll_cost = 2'000;      // CPU per epoll_wait that returns ready flows
  Time wake_latency_min = 5'000;    // a sleeping sender: from the freeing qdisc run to running, at least
  Time wake_latency_mean = 10'000;  // and on average
  Time lead = 0;                // EDT traffic: the sender starts this long before the first departure
  Time send_for = 0;            // stop sending this long after the start (rate) or the first departure (EDT); 0 = never
  // The idle tick.
  bool nohz_idle = false;
  double wheel_timers_per_s = 0;  // timer-wheel timers that fire the stopped tick
  Time softirq_cost = 7'000;      // CPU of one qdisc run in softirq, per packet sent (the CPU is busy)
  // A text file of the events the kernel's trace shows, one a line, to
  // compare event by event (scripts/event_compare.py): "T wd SOFT HARD" (a
  // watchdog expiry), "T tick", "T xmit softirq|task", "T wake" (the sender
  // runs again), T in ns. Empty: none.
  std::string event_trace;
};

}  // namespace ufq::sim
