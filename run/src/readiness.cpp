#include "readiness.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>

#include "process_pacer.hpp"
#include "real_calls.hpp"
#include "socket_table.hpp"
#include "ufq/rt/clock.hpp"

namespace ufq::run {
namespace {

constexpr Time kSlice = kNsecPerMsec;  // poll/select: look again this often while full

// Is `fd` an intercepted socket that has no room now?
bool full(int fd) {
  ProcessPacer* p = ProcessPacer::current();
  if (!p || p->stopping()) return false;
  SocketEntry* e = lookup_socket(fd);
  if (!e) return false;
  std::uint32_t prio = 0;
  bool connected = false;
  {
    std::lock_guard lk(e->mu);
    prio = e->opt.priority;
    connected = e->opt.connected;
  }
  return !p->has_room(*e, static_cast<std::uint8_t>(prio > 255 ? 255 : prio), connected);
}

// The wait's deadline (0: forever; `now` for a zero timeout).
Time deadline_of(const timespec* t) {
  if (!t) return 0;
  const Time now = rt::mono_now();
  return now + static_cast<Time>(t->tv_sec) * kNsecPerSec + static_cast<Time>(t->tv_nsec);
}

// The next slice: up to the deadline, at most kSlice.
timespec slice(Time deadline, bool& last) {
  Time left = kSlice;
  last = false;
  if (deadline) {
    const Time now = rt::mono_now();
    left = deadline > now ? deadline - now : 0;
    if (left <= kSlice) last = true;
    left = std::min(left, kSlice);
  }
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(left / kNsecPerSec);
  ts.tv_nsec = static_cast<long>(left % kNsecPerSec);
  return ts;
}

struct Reg {
  int epfd, fd;
  std::uint32_t events;
  epoll_data_t data;
  bool dropped;
};
std::mutex g_mu;
std::vector<Reg>& g_regs = *new std::vector<Reg>();  // never destroyed (sends during exit)
std::atomic<int> g_dropped{0};
std::atomic<std::size_t> g_reg_count{0};  // g_regs.size(), read without the lock

}  // namespace

int readiness_poll(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask, bool ppoll_call,
                   int timeout_ms) {
  auto real_wait = [&](const timespec* t) -> int {
    if (ppoll_call) return real().ppoll(fds, n, t, mask);
    const int ms = t ? static_cast<int>((t->tv_sec * 1000) + (t->tv_nsec + 999999) / 1000000) : -1;
    return real().poll(fds, n, ms);
  };
  timespec from_ms{};
  if (!ppoll_call && timeout_ms >= 0) {
    from_ms.tv_sec = timeout_ms / 1000;
    from_ms.tv_nsec = static_cast<long>(timeout_ms % 1000) * 1000000;
    timeout = &from_ms;
  }
  // Which entries want POLLOUT of a full socket?
  std::vector<nfds_t> held;
  for (nfds_t i = 0; i < n; ++i)
    if ((fds[i].events & POLLOUT) && full(fds[i].fd)) held.push_back(i);
  if (held.empty()) return real_wait(timeout);
  const Time deadline = deadline_of(timeout);
  for (;;) {
    for (nfds_t i : held) fds[i].events = static_cast<short>(fds[i].events & ~POLLOUT);
    bool last = false;
    const timespec ts = slice(deadline, last);
    const int r = real_wait(&ts);
    for (nfds_t i : held) fds[i].events = static_cast<short>(fds[i].events | POLLOUT);
    if (r < 0) return r;
    // Sockets that have room again report POLLOUT.
    int extra = 0;
    for (nfds_t i : held)
      if (!full(fds[i].fd)) {
        if (!fds[i].revents) ++extra;
        fds[i].revents = static_cast<short>(fds[i].revents | POLLOUT);
      }
    if (r + extra > 0 || last) return r + extra;
    std::erase_if(held, [&](nfds_t i) { return !full(fds[i].fd); });
    if (held.empty()) return real_wait(deadline ? &ts : nullptr);
  }
}

int readiness_select(int nfds, fd_set* r, fd_set* w, fd_set* e, const timespec* timeout, const sigset_t* mask,
                     bool pselect_call, timeval* tv) {
  auto real_wait = [&](fd_set* rr, fd_set* ww, fd_set* ee, const timespec* t) -> int {
    if (pselect_call) return real().pselect(nfds, rr, ww, ee, t, mask);
    timeval v{};
    if (t) {
      v.tv_sec = t->tv_sec;
      v.tv_usec = t->tv_nsec / 1000;
    }
    return real().select(nfds, rr, ww, ee, t ? &v : nullptr);
  };
  timespec from_tv{};
  if (!pselect_call && tv) {
    from_tv.tv_sec = tv->tv_sec;
    from_tv.tv_nsec = tv->tv_usec * 1000;
    timeout = &from_tv;
  }
  std::vector<int> held;
  if (w && nfds <= FD_SETSIZE)
    for (int fd = 0; fd < nfds; ++fd)
      if (FD_ISSET(fd, w) && full(fd)) held.push_back(fd);
  if (held.empty())  // the real call, with its own timeout (select writes the time left into it)
    return pselect_call ? real().pselect(nfds, r, w, e, timeout, mask) : real().select(nfds, r, w, e, tv);
  const Time deadline = deadline_of(timeout);
  const fd_set r0 = r ? *r : fd_set{}, w0 = *w, e0 = e ? *e : fd_set{};
  for (;;) {
    if (r) *r = r0;
    *w = w0;
    if (e) *e = e0;
    for (int fd : held) FD_CLR(fd, w);
    bool last = false;
    const timespec ts = slice(deadline, last);
    int res = real_wait(r, w, e, &ts);
    if (res < 0) return res;
    for (int fd : held)
      if (!full(fd)) {
        FD_SET(fd, w);
        ++res;
      }
    if (res > 0 || last) {
      if (tv && !pselect_call) {  // Linux's select writes the time left
        const Time now = rt::mono_now();
        const Time left = deadline > now ? deadline - now : 0;
        tv->tv_sec = static_cast<time_t>(left / kNsecPerSec);
        tv->tv_usec = static_cast<suseconds_t>((left % kNsecPerSec) / 1000);
      }
      return res;
    }
  }
}

int readiness_epoll_ctl(int epfd, int op, int fd, epoll_event* ev) {
  const int r = real().epoll_ctl(epfd, op, fd, ev);
  if (r != 0) return r;
  if (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD || op == EPOLL_CTL_DEL) {
    const bool ours = op != EPOLL_CTL_DEL && lookup_socket(fd) != nullptr;
    std::lock_guard lk(g_mu);
    auto it = std::find_if(g_regs.begin(), g_regs.end(), [&](const Reg& x) { return x.epfd == epfd && x.fd == fd; });
    if (it != g_regs.end()) {
      if (it->dropped) g_dropped.fetch_sub(1);
      g_regs.erase(it);
    }
    if (ours && ev) g_regs.push_back(Reg{epfd, fd, ev->events, ev->data, false});
    g_reg_count.store(g_regs.size(), std::memory_order_release);
  }
  return r;
}

// Gives EPOLLOUT back to every registration it was dropped from whose socket
// has room again. Pre: g_mu held.
static void restore_dropped_locked() {
  for (Reg& x : g_regs)
    if (x.dropped && !full(x.fd)) {
      epoll_event m{};
      m.events = x.events;
      m.data = x.data;
      real().epoll_ctl(x.epfd, EPOLL_CTL_MOD, x.fd, &m);
      x.dropped = false;
      g_dropped.fetch_sub(1);
    }
}

int readiness_filter_epoll(int epfd, epoll_event* evs, int n) {
  if (n <= 0 || !ProcessPacer::current()) return n;
  std::lock_guard lk(g_mu);
  if (g_regs.empty()) return n;
  int out = 0;
  for (int i = 0; i < n; ++i) {
    epoll_event ev = evs[i];
    if (ev.events & EPOLLOUT) {
      for (Reg& x : g_regs) {
        if (x.epfd != epfd || x.data.u64 != ev.data.u64) continue;
        if (full(x.fd)) {
          ev.events &= ~static_cast<std::uint32_t>(EPOLLOUT);
          if (!x.dropped) {
            epoll_event m{};
            m.events = x.events & ~static_cast<std::uint32_t>(EPOLLOUT);
            m.data = x.data;
            if (real().epoll_ctl(epfd, EPOLL_CTL_MOD, x.fd, &m) == 0) {
              x.dropped = true;
              g_dropped.fetch_add(1);
            }
          }
        }
        break;
      }
    }
    if (ev.events) evs[out++] = ev;
  }
  // Room may have come back between the check and the drop: look once more.
  if (g_dropped.load() > 0) restore_dropped_locked();
  return out;
}

void readiness_room_back() {
  if (g_dropped.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lk(g_mu);
  restore_dropped_locked();
}

void readiness_refused(const SocketEntry& e) {
  if (g_reg_count.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lk(g_mu);
  for (Reg& x : g_regs)
    if (!x.dropped && (x.events & EPOLLOUT) && lookup_socket(x.fd) == &e) {
      x.dropped = true;  // the interest is unchanged; room_back re-arms it
      g_dropped.fetch_add(1);
    }
}

void readiness_forget(int fd) {
  if (g_reg_count.load(std::memory_order_acquire) == 0) return;  // every close() comes here
  std::lock_guard lk(g_mu);
  std::erase_if(g_regs, [&](const Reg& x) {
    const bool gone = x.fd == fd || x.epfd == fd;
    if (gone && x.dropped) g_dropped.fetch_sub(1);
    return gone;
  });
  g_reg_count.store(g_regs.size(), std::memory_order_release);
}

void readiness_after_fork() {
  new (&g_mu) std::mutex();
  // The epoll sets are shared with the parent; the child's room is its own.
  for (Reg& x : g_regs) x.dropped = false;
  g_dropped.store(0);
}

}  // namespace ufq::run
