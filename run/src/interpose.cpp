// The libc functions libufq_preload.so puts in front of the program's
// (exports.map lists them; each ends in the real one, real_calls.hpp). The
// sends of IPv4/IPv6 UDP sockets are translated into datagram records and
// handed to the process's pacer; everything else passes through untouched.
// docs/run.md describes what is intercepted and why.
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <linux/net_tstamp.h>
#include <netinet/udp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <vector>

#include "handler_watch.hpp"
#include "notices.hpp"
#include "process_pacer.hpp"
#include "readiness.hpp"
#include "real_calls.hpp"
#include "run_config.hpp"
#include "socket_table.hpp"
#include "translate.hpp"
#include "ufq/rt/clock.hpp"

using namespace ufq;
using namespace ufq::run;

#define UFQ_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// This process's pid, so that a vfork child (same memory, another pid:
// posix_spawn, Python's subprocess) closing descriptors before its exec
// leaves the parent's socket table alone.
pid_t g_pid = 0;
void pid_after_fork() { g_pid = ::getpid(); }
bool vfork_child() { return ::getpid() != g_pid; }

__attribute__((constructor)) void preload_init() {
  (void)real();
  (void)run_config();  // a bad UFQ_RUN_* is said now, not at the first send
  g_pid = ::getpid();
  ::pthread_atfork(nullptr, nullptr, pid_after_fork);
}

// One message of an intercepted socket: paced (the byte count, or -1 with
// errno), or `pass()`: the real call, for what is not ours or not paced.
template <class Pass>
ssize_t send_one(int fd, const msghdr& m, int flags, Pass&& pass);

// `handlers`: interrupting_handlers() when the call began (SendPlan).
template <class Pass>
ssize_t send_once(int fd, const msghdr& m, int flags, Pass&& pass, std::uint64_t handlers) {
  SocketEntry* e = lookup_socket(fd);
  if (!e) return pass();
  SocketOptions o;
  int dupfd = -1;
  {
    std::lock_guard lk(e->mu);
    if (e->closed || e->dupfd < 0) return pass();
    o = e->opt;
    dupfd = e->dupfd;
  }
  SendPlan plan;
  plan.handlers_at_entry = handlers;
  const PassReason why = translate(*e, o, m, flags, plan);
  ProcessPacer* p = ProcessPacer::get();
  if (!p) return pass();
  if (why != PassReason::none) {
    p->count_pass(why);
    if (why == PassReason::corked)
      say_once(Notice::corked, "MSG_MORE / UDP_CORK sends are assembled by the kernel and not paced");
    else if (why == PassReason::unmodelled_cmsg || why == PassReason::unmodelled_flag)
      say_once(Notice::unmodelled_cmsg,
               "a send with a control message or flag the pacer cannot carry (IP_TTL, SO_MARK, a DSCP, "
               "MSG_DONTROUTE, ...) goes to the kernel unpaced");
    return pass();
  }
  {
    std::lock_guard lk(e->mu);
    if (e->closed || e->dupfd != dupfd) return pass();
    e->inflight.fetch_add(1, std::memory_order_acq_rel);  // keeps the duplicate until it comes back
    plan.due_hint = p->due_hint(*e, plan, o);
  }
  const ssize_t r = p->send(*e, dupfd, plan, m.msg_iov, m.msg_iovlen, o);
  if (r == ProcessPacer::kPassThrough) return pass();
  return r;
}

template <class Pass>
ssize_t send_one(int fd, const msghdr& m, int flags, Pass&& pass) {
  const std::uint64_t handlers = interrupting_handlers();
  for (;;) {
    const ssize_t r = send_once(fd, m, flags, pass, handlers);
    if (r != ProcessPacer::kRetry) return r;
  }
}

void socket_option_set(int fd, int level, int name, const void* val, socklen_t len) {
  SocketEntry* e = lookup_socket(fd);
  if (!e) return;
  std::unique_lock lk(e->mu);
  SocketOptions& o = e->opt;
  int v = 0;
  socklen_t l = sizeof(v);
  if (level == SOL_SOCKET && name == SO_MAX_PACING_RATE) {
    Rate rate = kUnlimitedRate;
    if (len >= sizeof(std::uint64_t)) {
      std::uint64_t x = 0;
      std::memcpy(&x, val, sizeof(x));
      rate = x;
    } else {
      std::uint32_t x = 0;
      std::memcpy(&x, val, sizeof(x));
      rate = x == ~0U ? kUnlimitedRate : x;
    }
    o.max_pacing_rate = rate;
    lk.unlock();
    if (ProcessPacer* p = ProcessPacer::get())
      p->set_rate(*e, rate);
    return;
  }
  if (level == SOL_SOCKET && name == SO_TXTIME) {
    sock_txtime t{};
    std::memcpy(&t, val, std::min<std::size_t>(len, sizeof(t)));
    o.txtime = true;
    o.txtime_clock = t.clockid;
  } else if (level == SOL_SOCKET && (name == SO_PRIORITY)) {
    if (::getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &l) == 0) o.priority = static_cast<std::uint32_t>(v);
  } else if (level == SOL_SOCKET && (name == SO_SNDTIMEO_OLD || name == SO_SNDTIMEO_NEW)) {
    timeval tv{};
    l = sizeof(tv);
    if (::getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l) == 0)
      o.sndtimeo_ns = static_cast<Time>(tv.tv_sec) * kNsecPerSec + static_cast<Time>(tv.tv_usec) * 1000;
  } else if ((level == IPPROTO_IP && name == IP_TOS && e->family == AF_INET) ||
             (level == IPPROTO_IPV6 && name == IPV6_TCLASS && e->family == AF_INET6)) {
    if (::getsockopt(fd, level, name, &v, &l) == 0) {
      o.ecn = static_cast<std::uint8_t>(v & 3);
      o.dscp = static_cast<std::uint8_t>(v & ~3);
    }
    l = sizeof(v);
    if (::getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &l) == 0) o.priority = static_cast<std::uint32_t>(v);
  } else if (level == SOL_UDP && name == UDP_SEGMENT) {
    if (::getsockopt(fd, SOL_UDP, UDP_SEGMENT, &v, &l) == 0) o.udp_segment = static_cast<std::uint16_t>(v);
  } else if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY && e->family == AF_INET6) {
    if (::getsockopt(fd, level, name, &v, &l) == 0) o.v6only = v != 0;
  } else if (level == SOL_UDP && name == UDP_CORK) {
    if (::getsockopt(fd, SOL_UDP, UDP_CORK, &v, &l) == 0) o.corked = v != 0;
  }
}

void set_nonblock(int fd, bool on) {
  if (SocketEntry* e = lookup_socket(fd)) {
    std::lock_guard lk(e->mu);
    e->opt.nonblock = on;
  }
}

void refresh_peer(int fd) {
  SocketEntry* e = lookup_socket(fd);
  if (!e) return;
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  const bool connected = ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0;
  std::lock_guard lk(e->mu);
  e->opt.connected = connected;
  e->opt.peer = connected ? rt::Address::from(reinterpret_cast<sockaddr*>(&ss), len) : rt::Address{};
}

void forget(int fd) {
  readiness_forget(fd);
  forget_descriptor(fd);
}

}  // namespace

// --- sends -----------------------------------------------------------------

UFQ_EXPORT ssize_t sendmsg(int fd, const msghdr* m, int flags) {
  if (!m) return real().sendmsg(fd, m, flags);
  return send_one(fd, *m, flags, [&] { return real().sendmsg(fd, m, flags); });
}

UFQ_EXPORT ssize_t sendto(int fd, const void* buf, size_t len, int flags, const sockaddr* to, socklen_t tolen) {
  iovec iov{const_cast<void*>(buf), len};
  msghdr m{};
  m.msg_name = const_cast<sockaddr*>(to);
  m.msg_namelen = to ? tolen : 0;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  return send_one(fd, m, flags, [&] { return real().sendto(fd, buf, len, flags, to, tolen); });
}

UFQ_EXPORT ssize_t send(int fd, const void* buf, size_t len, int flags) {
  iovec iov{const_cast<void*>(buf), len};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  return send_one(fd, m, flags, [&] { return real().send(fd, buf, len, flags); });
}

UFQ_EXPORT ssize_t write(int fd, const void* buf, size_t len) {
  SocketEntry* e = lookup_socket(fd);
  if (!e) return real().write(fd, buf, len);
  iovec iov{const_cast<void*>(buf), len};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  return send_one(fd, m, 0, [&] { return real().write(fd, buf, len); });
}

UFQ_EXPORT ssize_t writev(int fd, const iovec* iov, int n) {
  SocketEntry* e = lookup_socket(fd);
  if (!e || n < 0) return real().writev(fd, iov, n);
  msghdr m{};
  m.msg_iov = const_cast<iovec*>(iov);
  m.msg_iovlen = static_cast<std::size_t>(n);
  return send_one(fd, m, 0, [&] { return real().writev(fd, iov, n); });
}

UFQ_EXPORT int sendmmsg(int fd, mmsghdr* v, unsigned n, int flags) {
  if (!v || n == 0 || !lookup_socket(fd)) return real().sendmmsg(fd, v, n, flags);
  if (n > 1024) n = 1024;  // UIO_MAXIOV, as the kernel clamps
  unsigned done = 0;
  ProcessPacer::begin_burst();
  for (; done < n; ++done) {
    mmsghdr& one = v[done];
    const ssize_t r = send_one(fd, one.msg_hdr, flags, [&] { return real().sendmsg(fd, &one.msg_hdr, flags); });
    if (r < 0) break;  // the kernel reports the ones sent; the error comes back on the next call
    one.msg_len = static_cast<unsigned>(r);
  }
  ProcessPacer::end_burst();
  if (done == 0) return -1;
  return static_cast<int>(done);
}

// --- what a descriptor names --------------------------------------------------

UFQ_EXPORT int socket(int domain, int type, int protocol) {
  const int fd = real().socket(domain, type, protocol);
  if (fd >= 0) on_socket_created(fd, domain, type, protocol);
  return fd;
}

UFQ_EXPORT int connect(int fd, const sockaddr* a, socklen_t len) {
  const int r = real().connect(fd, a, len);
  if (r == 0) refresh_peer(fd);
  return r;
}

UFQ_EXPORT int close(int fd) {
  if (vfork_child()) return real().close(fd);
  forget(fd);
  return real().close(fd);
}

UFQ_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (!(flags & CLOSE_RANGE_CLOEXEC) && !vfork_child()) {
    rlimit r{};
    unsigned top = 1U << 20;
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      top = static_cast<unsigned>(std::min<rlim_t>(r.rlim_cur, 1U << 22));
    for (unsigned fd = first; fd <= last && fd < top; ++fd) forget(static_cast<int>(fd));
  }
  if (!real().close_range) {
    errno = ENOSYS;
    return -1;
  }
  return real().close_range(first, last, flags);
}

UFQ_EXPORT int dup(int fd) {
  const int r = real().dup(fd);
  if (r >= 0) on_descriptor_dup(fd, r);
  return r;
}

UFQ_EXPORT int dup2(int fd, int to) {
  if (fd == to || vfork_child()) return real().dup2(fd, to);
  forget(to);
  const int r = real().dup2(fd, to);
  if (r >= 0) on_descriptor_dup(fd, r);
  return r;
}

UFQ_EXPORT int dup3(int fd, int to, int flags) {
  if (vfork_child()) return real().dup3(fd, to, flags);
  if (fd != to) forget(to);
  const int r = real().dup3(fd, to, flags);
  if (r >= 0) on_descriptor_dup(fd, r);
  return r;
}

namespace {
int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, void* arg) {
  const int r = fn(fd, cmd, arg);
  if (r < 0) return r;
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) on_descriptor_dup(fd, r);
  if (cmd == F_SETFL) set_nonblock(fd, (reinterpret_cast<std::uintptr_t>(arg) & O_NONBLOCK) != 0);
  return r;
}
}  // namespace

UFQ_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(real().fcntl, fd, cmd, arg);
}

UFQ_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(real().fcntl64, fd, cmd, arg);
}

UFQ_EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  const int r = real().ioctl(fd, req, arg);
  if (r == 0 && req == FIONBIO && arg) set_nonblock(fd, *static_cast<int*>(arg) != 0);
  return r;
}

UFQ_EXPORT int setsockopt(int fd, int level, int name, const void* val, socklen_t len) {
  // The kernel checks and keeps every option (and getsockopt reads it back
  // from there); we copy what fq and the translation need.
  const int r = real().setsockopt(fd, level, name, val, len);
  if (r == 0 && val) socket_option_set(fd, level, name, val, len);
  return r;
}

// --- readiness --------------------------------------------------------------

UFQ_EXPORT int poll(pollfd* fds, nfds_t n, int timeout) {
  if (!ProcessPacer::current()) return real().poll(fds, n, timeout);
  return readiness_poll(fds, n, nullptr, nullptr, false, timeout);
}

UFQ_EXPORT int ppoll(pollfd* fds, nfds_t n, const timespec* t, const sigset_t* mask) {
  if (!ProcessPacer::current()) return real().ppoll(fds, n, t, mask);
  return readiness_poll(fds, n, t, mask, true, -1);
}

UFQ_EXPORT int select(int nfds, fd_set* r, fd_set* w, fd_set* e, timeval* tv) {
  if (!ProcessPacer::current() || !w) return real().select(nfds, r, w, e, tv);
  return readiness_select(nfds, r, w, e, nullptr, nullptr, false, tv);
}

UFQ_EXPORT int pselect(int nfds, fd_set* r, fd_set* w, fd_set* e, const timespec* t, const sigset_t* mask) {
  if (!ProcessPacer::current() || !w) return real().pselect(nfds, r, w, e, t, mask);
  return readiness_select(nfds, r, w, e, t, mask, true, nullptr);
}

UFQ_EXPORT int epoll_ctl(int epfd, int op, int fd, epoll_event* ev) { return readiness_epoll_ctl(epfd, op, fd, ev); }

namespace {
// Waits again for the rest of the timeout when filtering left nothing.
template <class Wait>
int epoll_loop(int epfd, epoll_event* evs, Time timeout_ns, bool infinite, Wait&& wait) {
  const Time deadline = infinite ? 0 : rt::mono_now() + timeout_ns;
  for (;;) {
    Time left = 0;
    if (!infinite) {
      const Time now = rt::mono_now();
      left = deadline > now ? deadline - now : 0;
    }
    const int r = wait(infinite, left);
    if (r <= 0) return r;
    const int n = readiness_filter_epoll(epfd, evs, r);
    if (n > 0) return n;
    if (!infinite && rt::mono_now() >= deadline) return 0;
  }
}
}  // namespace

UFQ_EXPORT int epoll_wait(int epfd, epoll_event* evs, int max, int timeout) {
  if (!ProcessPacer::current()) return real().epoll_wait(epfd, evs, max, timeout);
  return epoll_loop(epfd, evs, static_cast<Time>(timeout < 0 ? 0 : timeout) * kNsecPerMsec, timeout < 0,
                    [&](bool inf, Time left) {
                      return real().epoll_wait(epfd, evs, max, inf ? -1 : static_cast<int>((left + 999999) / 1000000));
                    });
}

UFQ_EXPORT int epoll_pwait(int epfd, epoll_event* evs, int max, int timeout, const sigset_t* mask) {
  if (!ProcessPacer::current()) return real().epoll_pwait(epfd, evs, max, timeout, mask);
  return epoll_loop(epfd, evs, static_cast<Time>(timeout < 0 ? 0 : timeout) * kNsecPerMsec, timeout < 0,
                    [&](bool inf, Time left) {
                      return real().epoll_pwait(epfd, evs, max, inf ? -1 : static_cast<int>((left + 999999) / 1000000),
                                                mask);
                    });
}

UFQ_EXPORT int epoll_pwait2(int epfd, epoll_event* evs, int max, const timespec* t, const sigset_t* mask) {
  if (!real().epoll_pwait2) {
    errno = ENOSYS;
    return -1;
  }
  if (!ProcessPacer::current()) return real().epoll_pwait2(epfd, evs, max, t, mask);
  const Time ns = t ? static_cast<Time>(t->tv_sec) * kNsecPerSec + static_cast<Time>(t->tv_nsec) : 0;
  return epoll_loop(epfd, evs, ns, t == nullptr, [&](bool inf, Time left) {
    timespec ts{static_cast<time_t>(left / kNsecPerSec), static_cast<long>(left % kNsecPerSec)};
    return real().epoll_pwait2(epfd, evs, max, inf ? nullptr : &ts, mask);
  });
}

// --- exec, exit, what cannot be paced ---------------------------------------

UFQ_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  ProcessPacer::before_exec();
  const int r = real().execve(path, argv, envp);
  ProcessPacer::after_exec_failed();
  return r;
}

UFQ_EXPORT int execv(const char* path, char* const argv[]) { return execve(path, argv, environ); }

UFQ_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  ProcessPacer::before_exec();
  const int r = real().execvpe(file, argv, envp);
  ProcessPacer::after_exec_failed();
  return r;
}

UFQ_EXPORT int execvp(const char* file, char* const argv[]) { return execvpe(file, argv, environ); }

namespace {
std::vector<char*> collect(const char* first, va_list ap, char*** envp) {
  std::vector<char*> args{const_cast<char*>(first)};
  while (char* a = va_arg(ap, char*)) args.push_back(a);
  args.push_back(nullptr);
  if (envp) *envp = va_arg(ap, char**);
  return args;
}
}  // namespace

UFQ_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = collect(arg, ap, nullptr);
  va_end(ap);
  return execve(path, args.data(), environ);
}

UFQ_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = collect(arg, ap, nullptr);
  va_end(ap);
  return execvpe(file, args.data(), environ);
}

UFQ_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** envp = nullptr;
  std::vector<char*> args = collect(arg, ap, &envp);
  va_end(ap);
  return execve(path, args.data(), envp);
}

UFQ_EXPORT void _exit(int status) {
  if (ProcessPacer* p = ProcessPacer::current()) p->finish("exit");
  real().exit_now(status);
  __builtin_unreachable();
}

UFQ_EXPORT void _Exit(int status) { _exit(status); }

UFQ_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return watched_sigaction(sig, act, old);
}

UFQ_EXPORT sighandler_t signal(int sig, sighandler_t handler) { return watched_signal(sig, handler); }

UFQ_EXPORT long syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
#ifdef SYS_io_uring_setup
  if (n == SYS_io_uring_setup)
    say_once(Notice::io_uring, "io_uring is in use: what it submits is not paced (its sends do not pass through libc)");
#endif
  return real().syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
