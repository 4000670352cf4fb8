// Writable readiness that follows the room in fq (docs/run.md, "Readiness"):
// poll, ppoll, select, pselect and the epoll waits report POLLOUT/EPOLLOUT
// for an intercepted socket only when a datagram sent on it now would find
// room (its flow and its band below flow_limit and limit).
//
// poll and select: a full socket's POLLOUT is taken out of the real wait,
// which then wakes at least every millisecond to look again (room comes back
// on the pacer thread, which cannot wake the program's poll).
// epoll: registrations of intercepted sockets are remembered (epoll_ctl).
// An EPOLLOUT event for a full socket is removed from the result and
// EPOLLOUT is dropped from the real interest set (EPOLL_CTL_MOD), so a
// level-triggered set does not report it again and again; the completion
// side puts it back when room returns, which makes the kernel report
// EPOLLOUT anew (level- and edge-triggered alike).
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "socket_table.hpp"

namespace ufq::run {

int readiness_poll(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask, bool ppoll_call,
                   int timeout_ms);
int readiness_select(int nfds, fd_set* r, fd_set* w, fd_set* e, const timespec* timeout, const sigset_t* mask,
                     bool pselect_call, timeval* tv);
int readiness_epoll_ctl(int epfd, int op, int fd, epoll_event* ev);
// Filters the `n` events an epoll wait returned (EPOLLOUT of full sockets
// removed, and dropped from the interest set); returns how many are left.
// The caller waits again for the rest of its timeout when none is.
int readiness_filter_epoll(int epfd, epoll_event* evs, int n);
// Any thread, after room came back (the completion side).
void readiness_room_back();
// A send on `e` was refused with EAGAIN: its epoll registrations are re-armed
// (EPOLL_CTL_MOD) when room comes back, so an edge-triggered set that saw
// the socket writable in the kernel's terms gets a fresh EPOLLOUT edge.
void readiness_refused(const SocketEntry& e);
// The program closed a descriptor (a socket, or an epoll set).
void readiness_forget(int fd);
void readiness_after_fork();

}  // namespace ufq::run
