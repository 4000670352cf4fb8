// A program of ours that the run tests start under `ufq run` (and, for
// comparison, without it): plain libc socket calls, as any program makes
// them. One scenario per invocation; results as "key=value" lines on stdout.
//
//   run_probe pace RATE N SIZE       SO_MAX_PACING_RATE, N datagrams to a receiver of its own
//   run_probe nonblock N_EXPECT      O_NONBLOCK until EAGAIN, poll/epoll readiness while full
//   run_probe blocking               blocking waits, SO_SNDTIMEO, EINTR
//   run_probe close N                close with datagrams queued
//   run_probe fork N                 parent and child each send N
//   run_probe dup2 N                 dup2 over a socket with datagrams queued
//   run_probe cmsg                   the malformed-input table (errno per case)
//   run_probe forever RATE           send until killed
//   run_probe txtime                 SO_TXTIME + SCM_TXTIME departures
//   run_probe gso                    a UDP_SEGMENT train
//   run_probe threads                four threads, own and shared sockets
//   run_probe exec                   send, then exec itself (gso)
//   run_probe mmsg                   sendmmsg bursts
//   run_probe ecn                    ECT(0) and not-ECT sockets, CE counted at the receiver
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

int die(const char* what) {
  std::fprintf(stdout, "error=%s: %s\n", what, std::strerror(errno));
  return 1;
}

// A receiver on 127.0.0.1; returns its descriptor and fills `to`.
int receiver(sockaddr_in& to) {
  const int r = socket(AF_INET, SOCK_DGRAM, 0);
  to = sockaddr_in{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int big = 8 << 20;
  setsockopt(r, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
  bind(r, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  socklen_t len = sizeof(to);
  getsockname(r, reinterpret_cast<sockaddr*>(&to), &len);
  return r;
}

// Receives up to n datagrams (each waits at most `timeout_s`); arrival times.
std::vector<double> receive(int r, int n, double timeout_s) {
  std::vector<double> t;
  char buf[65536];
  for (int i = 0; i < n; ++i) {
    pollfd p{r, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) <= 0) break;
    if (recv(r, buf, sizeof(buf), 0) < 0) break;
    t.push_back(now_s());
  }
  return t;
}

int sender(const sockaddr_in& to, bool connect_it) {
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (connect_it) connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  return s;
}

int pace(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::uint64_t rate = std::strtoull(argv[2], nullptr, 10);
  const int n = std::atoi(argv[3]);
  const int size = std::atoi(argv[4]);
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, false);
  if (setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate)) != 0) return die("SO_MAX_PACING_RATE");
  std::uint64_t back = 0;
  socklen_t len = sizeof(back);
  getsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &back, &len);
  std::printf("readback=%llu\n", static_cast<unsigned long long>(back));
  std::vector<char> buf(static_cast<std::size_t>(size), 'p');
  const double t0 = now_s();
  for (int i = 0; i < n; ++i)
    if (sendto(s, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) return die("sendto");
  std::printf("send_seconds=%.6f\n", now_s() - t0);
  const std::vector<double> t = receive(r, n, 5.0);
  std::printf("received=%zu\n", t.size());
  // The rate over the second half (past the initial quantum's burst), in
  // the bytes fq charges per datagram (payload + UDP 8 + IP 20 + Ethernet 14).
  if (t.size() >= 4) {
    const std::size_t a = t.size() / 2, b = t.size() - 1;
    std::printf("rate_seen=%.0f\n", static_cast<double>(b - a) * (size + 42) / (t[b] - t[a]));
  }
  return 0;
}

int nonblock(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
  const std::uint64_t rate = 2000;  // 2 datagrams/s of 958 + 42 bytes
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  int ok = 0, err = 0;
  for (int i = 0; i < 1000; ++i) {
    if (send(s, buf, sizeof(buf), 0) < 0) {
      err = errno;
      break;
    }
    ++ok;
  }
  // The flow's first datagram leaves at once, its next 0.5 s later: give the
  // pacer time to send the first, fill again, and the next room is ~0.5 s away.
  usleep(100000);
  while (send(s, buf, sizeof(buf), 0) >= 0) ++ok;
  std::printf("accepted=%d\nerrno=%s\n", ok, err == EAGAIN ? "EAGAIN" : std::strerror(err));
  // MSG_DONTWAIT on a blocking socket behaves the same.
  const int s2 = sender(to, true);
  setsockopt(s2, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  int ok2 = 0;
  for (int i = 0; i < 1000 && send(s2, buf, sizeof(buf), MSG_DONTWAIT) >= 0; ++i) ++ok2;
  while (send(s, buf, sizeof(buf), 0) >= 0) ++ok;  // s stays full
  std::printf("accepted_dontwait=%d\nerrno_dontwait=%s\n", ok2, errno == EAGAIN ? "EAGAIN" : std::strerror(errno));
  // Readiness: not writable while full, writable once a datagram has left.
  pollfd p{s, POLLOUT, 0};
  std::printf("poll_now=%d\n", poll(&p, 1, 0));
  fd_set w;
  FD_ZERO(&w);
  FD_SET(s, &w);
  timeval tv{0, 0};
  std::printf("select_now=%d\n", select(s + 1, nullptr, &w, nullptr, &tv));
  const int ep = epoll_create1(0);
  epoll_event ev{};
  ev.events = EPOLLOUT;  // level-triggered
  ev.data.fd = s;
  epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
  epoll_event out[4];
  std::printf("epoll_now=%d\n", epoll_wait(ep, out, 4, 0));
  const double t0 = now_s();
  const int e = epoll_wait(ep, out, 4, 3000);
  std::printf("epoll_later=%d\nepoll_wait_seconds=%.3f\n", e, now_s() - t0);
  const double t1 = now_s();
  p.revents = 0;
  // The room just found may be taken again (the pacer sends one per 0.5 s):
  // fill it, then wait with poll.
  while (send(s, buf, sizeof(buf), 0) >= 0) {
  }
  const int pl = poll(&p, 1, 3000);
  std::printf("poll_later=%d\npoll_wait_seconds=%.3f\n", pl, now_s() - t1);
  std::printf("send_after=%d\n", send(s, buf, sizeof(buf), 0) >= 0 ? 1 : 0);
  // Edge-triggered: full again, then one EPOLLOUT edge when room returns.
  const int ep2 = epoll_create1(0);
  epoll_event et{};
  et.events = EPOLLOUT | EPOLLET;
  et.data.fd = s;
  epoll_ctl(ep2, EPOLL_CTL_ADD, s, &et);
  epoll_wait(ep2, out, 4, 0);  // the first edge (writable when added), if any
  while (send(s, buf, sizeof(buf), 0) >= 0) {
  }
  const double t2 = now_s();
  const int e2 = epoll_wait(ep2, out, 4, 3000);
  std::printf("epoll_et_later=%d\nepoll_et_seconds=%.3f\n", e2, now_s() - t2);
  close(r);
  return 0;
}

void on_alarm(int) {}
std::atomic<int> g_alarms{0};
void on_alarm_count(int) { ++g_alarms; }

int blocking(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  const std::uint64_t rate = 20000;  // 20 datagrams/s
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  double t0 = now_s();
  int ok = 0;
  for (int i = 0; i < 30; ++i)
    if (send(s, buf, sizeof(buf), 0) == static_cast<ssize_t>(sizeof(buf))) ++ok;
  std::printf("sent=%d\nblocked_seconds=%.3f\n", ok, now_s() - t0);
  // SO_SNDTIMEO: a full flow gives EAGAIN after the timeout.
  const int s2 = sender(to, true);
  const std::uint64_t slow = 100;
  setsockopt(s2, SOL_SOCKET, SO_MAX_PACING_RATE, &slow, sizeof(slow));
  timeval tv{0, 200000};
  setsockopt(s2, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int err = 0;
  t0 = now_s();
  for (int i = 0; i < 1000; ++i)
    if (send(s2, buf, sizeof(buf), 0) < 0) {
      err = errno;
      break;
    }
  std::printf("sndtimeo_errno=%s\nsndtimeo_seconds=%.3f\n", err == EAGAIN ? "EAGAIN" : std::strerror(err), now_s() - t0);
  // A signal handler without SA_RESTART: EINTR.
  const int s3 = sender(to, true);
  setsockopt(s3, SOL_SOCKET, SO_MAX_PACING_RATE, &slow, sizeof(slow));
  struct sigaction sa{};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, nullptr);
  // First at 1 s, then every 300 ms: a signal handled before a send blocks
  // interrupts nothing (in the kernel too), so on a loaded machine the one
  // that lands between the first ten sends must not be the only one.
  itimerval every{{0, 300000}, {1, 0}};
  setitimer(ITIMER_REAL, &every, nullptr);
  err = 0;
  for (int i = 0; i < 1000; ++i)
    if (send(s3, buf, sizeof(buf), 0) < 0) {
      err = errno;
      break;
    }
  itimerval stop{};
  setitimer(ITIMER_REAL, &stop, nullptr);
  std::printf("signal_errno=%s\n", err == EINTR ? "EINTR" : std::strerror(err));
  // A handler with SA_RESTART (and signal(), which sets it): the blocked
  // send goes on, as the kernel restarts it.
  const int s4 = sender(to, true);
  const std::uint64_t two_per_s = 2000;
  setsockopt(s4, SOL_SOCKET, SO_MAX_PACING_RATE, &two_per_s, sizeof(two_per_s));
  signal(SIGALRM, on_alarm_count);
  itimerval it{{0, 150000}, {0, 150000}};
  setitimer(ITIMER_REAL, &it, nullptr);
  err = 0;
  int sent4 = 0;
  for (int i = 0; i < 14; ++i) {
    if (send(s4, buf, sizeof(buf), 0) < 0) {
      err = errno;
      break;
    }
    ++sent4;
  }
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  std::printf("restart_sent=%d\nrestart_errno=%s\nrestart_signals=%d\n", sent4, err ? strerrorname_np(err) : "none",
              g_alarms.load());
  struct sigaction back{};
  sigaction(SIGALRM, nullptr, &back);
  std::printf("sigaction_reads_back_own=%d\n", back.sa_handler == on_alarm_count ? 1 : 0);
  close(r);
  return 0;
}

int close_queued(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[2]) : 20;
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  const std::uint64_t rate = 50000;  // 50 datagrams/s
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  for (int i = 0; i < n; ++i) send(s, buf, sizeof(buf), 0);
  close(s);  // queued datagrams must still leave
  // The number is free again: a new socket may take it at once.
  const int again = socket(AF_INET, SOCK_DGRAM, 0);
  std::printf("reused_number=%d\n", again == s ? 1 : 0);
  std::printf("received=%zu\n", receive(r, n, 3.0).size());
  return 0;
}

int fork_both(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[2]) : 10;
  sockaddr_in to{};
  const int r = receiver(to);
  const std::uint64_t rate = 100000;
  char buf[958] = {};
  const int s = sender(to, true);
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  send(s, buf, sizeof(buf), 0);  // the parent's pacer exists before fork
  const pid_t pid = fork();
  if (pid == 0) {
    const int c = sender(to, true);
    setsockopt(c, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
    for (int i = 0; i < n; ++i) send(c, buf, sizeof(buf), 0);
    for (int i = 0; i < n; ++i) send(s, buf, sizeof(buf), 0);  // the inherited socket too
    exit(0);
  }
  for (int i = 1; i < n; ++i) send(s, buf, sizeof(buf), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  std::printf("child_status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  std::printf("received=%zu\n", receive(r, 3 * n, 3.0).size());
  return 0;
}

int dup2_over(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[2]) : 10;
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  const std::uint64_t rate = 50000;
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  for (int i = 0; i < n; ++i) send(s, buf, sizeof(buf), 0);
  const int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, s);  // s now names /dev/null; the socket's queued datagrams still leave
  const ssize_t w = write(s, buf, 10);
  std::printf("write_after_dup2=%zd\n", w);
  // A dup of a socket is the same socket (one flow).
  const int s2 = sender(to, true);
  const int s3 = dup(s2);
  send(s3, buf, sizeof(buf), 0);
  close(s2);
  send(s3, buf, sizeof(buf), 0);
  std::printf("received=%zu\n", receive(r, n + 2, 3.0).size());
  return 0;
}

// --- the malformed-input table: errno per case, compared with the kernel's --

struct Case {
  const char* name;
  int family;
  bool txtime;      // set SO_TXTIME first
  bool connected;
  int flags;
  std::size_t size;
  // control message: level, type, data length, cmsg_len adjustment
  int level = -1, type = 0;
  std::size_t dlen = 0;
  long len_adjust = 0;
  long controllen_adjust = 0;
  long value = 0;
  bool null_control = false;
  int name_kind = 0;  // 0 destination, 1 none, 2 short, 3 other family, 4 port 0, 5 IPv4 on IPv6
  bool v6only = false;
};

std::string run_case(const Case& c) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = socket(c.family, SOCK_DGRAM, 0);
  if (c.v6only) {
    int on = 1;
    setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  }
  if (c.txtime) {
    sock_txtime t{};
    t.clockid = CLOCK_MONOTONIC;
    setsockopt(s, SOL_SOCKET, SO_TXTIME, &t, sizeof(t));
  }
  sockaddr_in6 to6{};
  to6.sin6_family = AF_INET6;
  to6.sin6_port = to.sin_port;
  to6.sin6_addr.s6_addr[10] = to6.sin6_addr.s6_addr[11] = 0xFF;
  std::memcpy(&to6.sin6_addr.s6_addr[12], &to.sin_addr, 4);
  const sockaddr* dest = c.family == AF_INET6 ? reinterpret_cast<sockaddr*>(&to6) : reinterpret_cast<sockaddr*>(&to);
  socklen_t dlen = c.family == AF_INET6 ? sizeof(to6) : sizeof(to);
  if (c.connected) connect(s, dest, dlen);
  std::vector<char> payload(c.size, 'c');
  iovec iov{payload.data(), payload.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  sockaddr_in6 other{};
  sockaddr_in port0 = to;
  port0.sin_port = 0;
  switch (c.name_kind) {
    case 0: m.msg_name = const_cast<sockaddr*>(dest); m.msg_namelen = dlen; break;
    case 1: break;
    case 2: m.msg_name = const_cast<sockaddr*>(dest); m.msg_namelen = 4; break;
    case 3: other.sin6_family = AF_INET6; other.sin6_port = to.sin_port; other.sin6_addr = in6addr_loopback;
            m.msg_name = &other; m.msg_namelen = sizeof(other); break;
    case 4: m.msg_name = &port0; m.msg_namelen = sizeof(port0); break;
    case 5: m.msg_name = &to; m.msg_namelen = sizeof(to); break;
  }
  alignas(cmsghdr) unsigned char ctl[256] = {};
  if (c.level >= 0 || c.null_control) {
    cmsghdr* h = reinterpret_cast<cmsghdr*>(ctl);
    h->cmsg_level = c.level;
    h->cmsg_type = c.type;
    h->cmsg_len = static_cast<std::size_t>(static_cast<long>(CMSG_LEN(c.dlen)) + c.len_adjust);
    std::memcpy(CMSG_DATA(h), &c.value, std::min<std::size_t>(c.dlen, sizeof(c.value)));
    m.msg_control = c.null_control ? nullptr : ctl;
    m.msg_controllen = static_cast<std::size_t>(static_cast<long>(CMSG_SPACE(c.dlen)) + c.controllen_adjust);
  }
  errno = 0;
  const ssize_t n = sendmsg(s, &m, c.flags);
  const int e = errno;
  close(s);
  close(r);
  return n < 0 ? std::string("-1 ") + (strerrorname_np(e) ? strerrorname_np(e) : "?") : std::to_string(n);
}

int cmsg(int, char**) {
  const std::uint64_t soon = now_ns() + 1000000;
  const Case cases[] = {
      {"plain", AF_INET, false, false, 0, 100},
      {"plain_v6_mapped", AF_INET6, false, false, 0, 100},
      {"no_destination", AF_INET, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 1},
      {"connected_no_name", AF_INET, false, true, 0, 100, -1, 0, 0, 0, 0, 0, false, 1},
      {"short_name", AF_INET, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 2},
      {"ipv6_name_on_ipv4", AF_INET, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 3},
      {"port_zero", AF_INET, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 4},
      {"msg_oob", AF_INET, false, false, MSG_OOB, 100},
      {"too_big", AF_INET, false, false, 0, 70000},
      {"v6_too_big", AF_INET6, false, false, 0, 70000},
      {"cmsg_len_below_header", AF_INET, false, false, 0, 100, SOL_SOCKET, SCM_TXTIME, 8, -20},
      {"cmsg_len_beyond_control", AF_INET, false, false, 0, 100, SOL_UDP, UDP_SEGMENT, 2, 64},
      {"control_null", AF_INET, false, false, 0, 100, SOL_UDP, UDP_SEGMENT, 2, 0, 0, 0, true},
      {"control_short_ignored", AF_INET, false, false, 0, 100, SOL_UDP, UDP_SEGMENT, 2, 0,
       -static_cast<long>(CMSG_SPACE(2)) + 4},
      {"txtime_without_so_txtime", AF_INET, false, false, 0, 100, SOL_SOCKET, SCM_TXTIME, 8, 0, 0,
       static_cast<long>(soon)},
      {"txtime_wrong_length", AF_INET, true, false, 0, 100, SOL_SOCKET, SCM_TXTIME, 4},
      {"txtime_ok", AF_INET, true, false, 0, 100, SOL_SOCKET, SCM_TXTIME, 8, 0, 0, static_cast<long>(soon)},
      {"udp_segment_wrong_length", AF_INET, false, false, 0, 3000, SOL_UDP, UDP_SEGMENT, 4, 0, 0, 1000},
      {"udp_segment_ok", AF_INET, false, false, 0, 3000, SOL_UDP, UDP_SEGMENT, 2, 0, 0, 1000},
      {"udp_unknown_type", AF_INET, false, false, 0, 100, SOL_UDP, 999, 4},
      {"udp_segment_too_many", AF_INET, false, false, 0, 60000, SOL_UDP, UDP_SEGMENT, 2, 0, 0, 100},
      {"ip_tos_int", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_TOS, 4, 0, 0, 2},
      {"ip_tos_byte", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_TOS, 1, 0, 0, 1},
      {"ip_tos_wrong_length", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_TOS, 2},
      {"ip_tos_out_of_range", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_TOS, 4, 0, 0, 256},
      {"ip_pktinfo_wrong_length", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_PKTINFO, 4},
      {"ip_unknown_type", AF_INET, false, false, 0, 100, IPPROTO_IP, 9999, 4},
      {"ip_ttl", AF_INET, false, false, 0, 100, IPPROTO_IP, IP_TTL, 4, 0, 0, 7},
      {"socket_unknown_type", AF_INET, false, false, 0, 100, SOL_SOCKET, 9999, 4},
      {"socket_mark_unprivileged_or_ok", AF_INET, false, false, 0, 100, SOL_SOCKET, SO_MARK, 4, 0, 0, 1},
      {"other_level_skipped", AF_INET, false, false, 0, 100, 12345, 1, 4},
      {"tclass_ok", AF_INET6, false, false, 0, 100, IPPROTO_IPV6, IPV6_TCLASS, 4, 0, 0, 1},
      {"tclass_wrong_length", AF_INET6, false, false, 0, 100, IPPROTO_IPV6, IPV6_TCLASS, 1},
      {"tclass_out_of_range", AF_INET6, false, false, 0, 100, IPPROTO_IPV6, IPV6_TCLASS, 4, 0, 0, 300},
      {"ipv6_unknown_type", AF_INET6, false, false, 0, 100, IPPROTO_IPV6, 9999, 4},
      {"ipv4_name_on_ipv6", AF_INET6, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 5},
      {"ipv4_name_on_v6only", AF_INET6, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 5, true},
      {"v4_mapped_on_v6only", AF_INET6, false, false, 0, 100, -1, 0, 0, 0, 0, 0, false, 0, true},
  };
  for (const Case& c : cases) std::printf("%s=%s\n", c.name, run_case(c).c_str());
  // Options in unusual orders: SO_MAX_PACING_RATE before connect, 4-byte
  // form, read back; SO_TXTIME twice.
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  std::uint32_t r32 = 5000;
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &r32, sizeof(r32));
  std::uint32_t back32 = 0;
  socklen_t len = sizeof(back32);
  getsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &back32, &len);
  std::printf("rate32_readback=%u\n", back32);
  std::uint64_t back = 0;
  len = sizeof(back);
  const int s2 = socket(AF_INET, SOCK_DGRAM, 0);
  getsockopt(s2, SOL_SOCKET, SO_MAX_PACING_RATE, &back, &len);
  std::printf("rate_default=%llu len=%u\n", static_cast<unsigned long long>(back), len);
  return 0;
}

int forever(int argc, char** argv) {
  const std::uint64_t rate = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20000;
  sockaddr_in to{};
  const int r = receiver(to);
  (void)r;
  const int s = sender(to, true);
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  std::printf("ready=1\n");
  std::fflush(stdout);
  for (;;) send(s, buf, sizeof(buf), 0);
}

int txtime(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  sock_txtime t{};
  t.clockid = CLOCK_MONOTONIC;
  setsockopt(s, SOL_SOCKET, SO_TXTIME, &t, sizeof(t));
  const int n = 5;
  std::uint64_t due[n];
  const std::uint64_t base = now_ns() + 50000000;  // 50 ms from now
  for (int i = 0; i < n; ++i) {
    due[i] = base + static_cast<std::uint64_t>(i) * 40000000;  // every 40 ms
    char buf[100] = {};
    iovec iov{buf, sizeof(buf)};
    alignas(cmsghdr) unsigned char ctl[CMSG_SPACE(8)] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof(ctl);
    cmsghdr* h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_TXTIME;
    h->cmsg_len = CMSG_LEN(8);
    std::memcpy(CMSG_DATA(h), &due[i], 8);
    if (sendmsg(s, &m, 0) < 0) return die("sendmsg SCM_TXTIME");
  }
  double early = 0, late = 0;
  char buf[200];
  for (int i = 0; i < n; ++i) {
    pollfd p{r, POLLIN, 0};
    if (poll(&p, 1, 2000) <= 0) break;
    recv(r, buf, sizeof(buf), 0);
    const double d = (static_cast<double>(now_ns()) - static_cast<double>(due[i])) * 1e-6;
    if (d < early) early = d;
    if (d > late) late = d;
  }
  std::printf("earliest_ms=%.3f\nlatest_ms=%.3f\n", early, late);
  return 0;
}

int gso(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, true);
  std::vector<char> buf(3000, 'g');
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) unsigned char ctl[CMSG_SPACE(2)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof(ctl);
  cmsghdr* h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_UDP;
  h->cmsg_type = UDP_SEGMENT;
  h->cmsg_len = CMSG_LEN(2);
  const std::uint16_t seg = 1000;
  std::memcpy(CMSG_DATA(h), &seg, 2);
  std::printf("sendmsg=%zd\n", sendmsg(s, &m, 0));
  std::printf("received=%zu\n", receive(r, 4, 1.0).size());
  return 0;
}

// Threads: each its own connected socket, and all of them one unconnected
// socket (the socket table and the pacer are shared).
int threads(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int shared = sender(to, false);
  const std::uint64_t rate = 200000;
  setsockopt(shared, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  constexpr int kThreads = 4, kOwn = 50, kShared = 20;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      const int s = sender(to, true);
      setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
      char buf[958] = {};
      for (int i = 0; i < kOwn; ++i) send(s, buf, sizeof(buf), 0);
      for (int i = 0; i < kShared; ++i) sendto(shared, buf, sizeof(buf), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
      close(s);
    });
  for (auto& t : ts) t.join();
  std::printf("received=%zu\n", receive(r, kThreads * (kOwn + kShared), 3.0).size());
  return 0;
}

// Sends, then execs itself into another scenario: the first image drains
// and reports before exec.
int exec_self(int, char** argv) {
  sockaddr_in to{};
  receiver(to);
  const int s = sender(to, true);
  const std::uint64_t rate = 50000;
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  for (int i = 0; i < 10; ++i) send(s, buf, sizeof(buf), 0);
  char* next[] = {argv[0], const_cast<char*>("gso"), nullptr};
  execv(argv[0], next);
  return die("execv");
}

// sendmmsg: a burst of 64 through one call, on a full flow (it blocks in
// the middle), then a refused first message.
int mmsg(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  const int s = sender(to, false);
  const std::uint64_t rate = 500000;
  setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  constexpr int kN = 64;
  char buf[kN][500];
  iovec iov[kN];
  mmsghdr m[kN] = {};
  for (int i = 0; i < kN; ++i) {
    iov[i] = {buf[i], sizeof(buf[i])};
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
    m[i].msg_hdr.msg_name = &to;
    m[i].msg_hdr.msg_namelen = sizeof(to);
  }
  std::printf("sendmmsg=%d\n", sendmmsg(s, m, kN, 0));
  std::printf("msg_len=%u\n", m[kN - 1].msg_len);
  m[0].msg_hdr.msg_namelen = 3;  // the kernel refuses the first: -1 EINVAL
  const int bad = sendmmsg(s, m, 2, 0);
  std::printf("sendmmsg_bad=%d %s\n", bad, bad < 0 ? strerrorname_np(errno) : "");
  std::printf("received=%zu\n", receive(r, kN + 1, 2.0).size());
  return 0;
}

// ECN: a socket with IP_TOS ECT(0) and one without; the receiver reads each
// datagram's TOS byte (IP_RECVTOS) and counts CE.
int ecn(int, char**) {
  sockaddr_in to{};
  const int r = receiver(to);
  int on = 1;
  setsockopt(r, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
  const int ect = sender(to, true), plain = sender(to, true);
  int tos = 2;  // ECT(0)
  setsockopt(ect, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  const std::uint64_t rate = 100000;
  for (int s : {ect, plain}) setsockopt(s, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  char buf[958] = {};
  constexpr int kN = 40;
  for (int i = 0; i < kN; ++i) {
    send(ect, buf, sizeof(buf), 0);
    send(plain, buf, sizeof(buf), 0);
  }
  int ce = 0, ect0 = 0, not_ect = 0;
  for (int i = 0; i < 2 * kN; ++i) {
    pollfd p{r, POLLIN, 0};
    if (poll(&p, 1, 3000) <= 0) break;
    char data[2000];
    alignas(cmsghdr) unsigned char ctl[64];
    iovec iov{data, sizeof(data)};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof(ctl);
    if (recvmsg(r, &m, 0) < 0) break;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
        const int v = *CMSG_DATA(c) & 3;
        if (v == 3) ++ce; else if (v == 2) ++ect0; else if (v == 0) ++not_ect;
      }
  }
  std::printf("ce=%d\nect0=%d\nnot_ect=%d\n", ce, ect0, not_ect);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) return 2;
  const std::string what = argv[1];
  if (what == "pace") return pace(argc, argv);
  if (what == "nonblock") return nonblock(argc, argv);
  if (what == "blocking") return blocking(argc, argv);
  if (what == "close") return close_queued(argc, argv);
  if (what == "fork") return fork_both(argc, argv);
  if (what == "dup2") return dup2_over(argc, argv);
  if (what == "cmsg") return cmsg(argc, argv);
  if (what == "forever") return forever(argc, argv);
  if (what == "txtime") return txtime(argc, argv);
  if (what == "gso") return gso(argc, argv);
  if (what == "threads") return threads(argc, argv);
  if (what == "exec") return exec_self(argc, argv);
  if (what == "mmsg") return mmsg(argc, argv);
  if (what == "ecn") return ecn(argc, argv);
  return 2;
}
