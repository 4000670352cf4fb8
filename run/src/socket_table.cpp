#include "socket_table.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <linux/net_tstamp.h>
#include <netinet/udp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <new>

#include "notices.hpp"
#include "real_calls.hpp"

namespace ufq::run {
namespace {

// Slot values: 0 unknown, 1 not ours, else a SocketEntry*.
constexpr std::uintptr_t kUnknown = 0, kOther = 1;
constexpr int kChunkBits = 12, kChunk = 1 << kChunkBits, kChunks = 1024;  // 4M descriptors

struct Chunk {
  std::atomic<std::uintptr_t> slot[kChunk];
};
std::atomic<Chunk*> g_chunks[kChunks];

std::atomic<std::uintptr_t>* slot_of(int fd, bool create) {
  if (fd < 0) return nullptr;
  const unsigned c = static_cast<unsigned>(fd) >> kChunkBits;
  if (c >= kChunks) return nullptr;
  Chunk* ch = g_chunks[c].load(std::memory_order_acquire);
  if (!ch) {
    if (!create) return nullptr;
    Chunk* fresh = new Chunk();
    for (auto& s : fresh->slot) s.store(kUnknown, std::memory_order_relaxed);
    if (g_chunks[c].compare_exchange_strong(ch, fresh, std::memory_order_acq_rel))
      ch = fresh;
    else
      delete fresh;
  }
  return &ch->slot[static_cast<unsigned>(fd) & (kChunk - 1)];
}

// Every entry ever made (never freed: pointers read from the table stay
// valid memory) and the recycled ones.
// Never destroyed: threads of the program may still send while exit() runs
// the static destructors.
std::mutex g_entries_mu;
std::vector<SocketEntry*>& g_entries = *new std::vector<SocketEntry*>();
std::vector<SocketEntry*>& g_free = *new std::vector<SocketEntry*>();
std::atomic<std::uint64_t> g_next_id{1};

// Released duplicates: each number keeps naming a socket of its family (a
// placeholder), so the egress's memory of "this descriptor is IPv4/IPv6"
// (docs/send-path.md) stays true when we reuse the number for another socket.
std::vector<int>* g_spare_numbers = new std::vector<int>[2];
int g_placeholder[2] = {-1, -1};

int family_index(int family) { return family == AF_INET6 ? 1 : 0; }

int dup_high(int fd) {
  rlimit r{};
  int base = 3;
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur > 64)
    base = static_cast<int>(r.rlim_cur / 2);
  int d = real().fcntl(fd, F_DUPFD_CLOEXEC, base);
  if (d < 0) d = real().fcntl(fd, F_DUPFD_CLOEXEC, 3);
  return d;
}

// Under g_entries_mu.
int take_duplicate(int fd, int family) {
  auto& spare = g_spare_numbers[family_index(family)];
  while (!spare.empty()) {
    const int n = spare.back();
    spare.pop_back();
    if (real().dup3(fd, n, O_CLOEXEC) == n) return n;
  }
  return dup_high(fd);
}

// Under g_entries_mu.
void give_back_duplicate(int dupfd, int family) {
  const int i = family_index(family);
  if (g_placeholder[i] < 0) {
    const int s = real().socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
    if (s >= 0) {
      g_placeholder[i] = dup_high(s);
      real().close(s);
    }
  }
  if (g_placeholder[i] >= 0 && real().dup3(g_placeholder[i], dupfd, O_CLOEXEC) == dupfd)
    g_spare_numbers[i].push_back(dupfd);
  else
    real().close(dupfd);
}

Time timeval_ns(const timeval& tv) {
  return static_cast<Time>(tv.tv_sec) * kNsecPerSec + static_cast<Time>(tv.tv_usec) * 1000;
}

// The options of a socket we did not see created (inherited, or created
// before we were loaded): read from the kernel.
void read_kernel_options(int fd, SocketEntry& e) {
  SocketOptions& o = e.opt;
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    o.connected = true;
    o.peer = rt::Address::from(reinterpret_cast<sockaddr*>(&ss), len);
  }
  const int fl = real().fcntl(fd, F_GETFL);
  o.nonblock = fl >= 0 && (fl & O_NONBLOCK);
  std::uint64_t rate = 0;
  len = sizeof(rate);
  if (::getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, &len) == 0)
    o.max_pacing_rate = len == 4 && static_cast<std::uint32_t>(rate) == ~0U ? kUnlimitedRate : rate;
  int v = 0;
  len = sizeof(v);
  if (::getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &len) == 0) o.priority = static_cast<std::uint32_t>(v);
  len = sizeof(v);
  if (e.family == AF_INET6 ? ::getsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, &len) == 0
                           : ::getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len) == 0)
    o.ecn = static_cast<std::uint8_t>(v & 3), o.dscp = static_cast<std::uint8_t>(v & ~3);
  len = sizeof(v);
  if (::getsockopt(fd, SOL_UDP, UDP_SEGMENT, &v, &len) == 0) o.udp_segment = static_cast<std::uint16_t>(v);
  len = sizeof(v);
  if (::getsockopt(fd, SOL_UDP, UDP_CORK, &v, &len) == 0) o.corked = v != 0;
  sock_txtime t{};
  len = sizeof(t);
  if (::getsockopt(fd, SOL_SOCKET, SO_TXTIME, &t, &len) == 0 && len == sizeof(t) && (t.flags || t.clockid)) {
    // The kernel reports clockid 0 (REALTIME) when SO_TXTIME is off; a socket
    // with it on has a clock we take as given.
    o.txtime = true;
    o.txtime_clock = t.clockid;
  }
  timeval tv{};
  len = sizeof(tv);
  if (::getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) == 0) o.sndtimeo_ns = timeval_ns(tv);
}

SocketEntry* make_entry(int fd, int family, bool fresh, int type_flags) {
  SocketEntry* e = nullptr;
  {
    std::lock_guard lk(g_entries_mu);
    if (!g_free.empty()) {
      e = g_free.back();
      g_free.pop_back();
    } else {
      e = new SocketEntry();
      g_entries.push_back(e);
    }
    e->dupfd = take_duplicate(fd, family);
  }
  if (e->dupfd < 0) {  // out of descriptors: leave this socket unpaced
    std::lock_guard lk(g_entries_mu);
    g_free.push_back(e);
    return nullptr;
  }
  e->id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  e->family = family;
  e->opt = SocketOptions{};
  e->closed = false;
  e->program_fds = 1;
  e->epoll.clear();
  e->inflight.store(0, std::memory_order_relaxed);
  e->inflight_flow.store(0, std::memory_order_relaxed);
  e->owner_connected = FlowOwner{};
  e->owner_connected.id = e->id << 1;
  e->owner_connected.kind = FlowOwner::Kind::connected;
  e->owner_unconnected = FlowOwner{};
  e->owner_unconnected.id = (e->id << 1) | 1;
  e->owner_unconnected.kind = FlowOwner::Kind::unconnected;
  if (fresh)
    e->opt.nonblock = (type_flags & SOCK_NONBLOCK) != 0;
  else
    read_kernel_options(fd, *e);
  if (family == AF_INET6) {  // the default follows net.ipv6.bindv6only
    int v = 0;
    socklen_t len = sizeof(v);
    if (::getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0) e->opt.v6only = v != 0;
  }
  e->owner_connected.max_pacing_rate = e->owner_unconnected.max_pacing_rate = e->opt.max_pacing_rate;
  return e;
}

void install(int fd, SocketEntry* e) {
  auto* s = slot_of(fd, true);
  if (!s) return;
  const std::uintptr_t old = s->exchange(e ? reinterpret_cast<std::uintptr_t>(e) : kOther,
                                         std::memory_order_acq_rel);
  if (old > kOther && old != reinterpret_cast<std::uintptr_t>(e)) {
    // A number we thought named another socket (closed behind our back,
    // e.g. by fclose inside libc): that socket no longer has this name.
    SocketEntry* prev = reinterpret_cast<SocketEntry*>(old);
    std::unique_lock lk(prev->mu);
    if (--prev->program_fds <= 0) prev->closed = true;
  }
}

// Under e.mu: let the duplicate go when nothing needs it.
void maybe_release(SocketEntry& e) {
  if (!e.closed || e.dupfd < 0 || e.inflight.load(std::memory_order_acquire) != 0) return;
  std::lock_guard lk(g_entries_mu);
  give_back_duplicate(e.dupfd, e.family);
  e.dupfd = -1;
  e.epoll.clear();
  g_free.push_back(&e);
}

}  // namespace

SocketEntry* lookup_socket(int fd) {
  auto* s = slot_of(fd, false);
  std::uintptr_t v = s ? s->load(std::memory_order_acquire) : kUnknown;
  if (v > kOther) return reinterpret_cast<SocketEntry*>(v);
  if (v == kOther) return nullptr;
  // Unknown: ask the kernel what it is.
  int type = 0, proto = 0, domain = 0;
  socklen_t len = sizeof(int);
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
    // Not a socket (remember), or not open (remember nothing).
    if (errno == ENOTSOCK) install(fd, nullptr);
    return nullptr;
  }
  len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
  len = sizeof(int);
  ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
  if (type != SOCK_DGRAM || proto != IPPROTO_UDP || (domain != AF_INET && domain != AF_INET6)) {
    install(fd, nullptr);
    return nullptr;
  }
  SocketEntry* e = make_entry(fd, domain, false, 0);
  if (!e) return nullptr;
  auto* slot = slot_of(fd, true);
  std::uintptr_t expect = kUnknown;
  if (slot && !slot->compare_exchange_strong(expect, reinterpret_cast<std::uintptr_t>(e),
                                              std::memory_order_acq_rel)) {
    // Another thread classified it first: use theirs.
    std::unique_lock lk(e->mu);
    e->closed = true;
    maybe_release(*e);
    return expect > kOther ? reinterpret_cast<SocketEntry*>(expect) : nullptr;
  }
  return e;
}

void on_socket_created(int fd, int domain, int type, int protocol) {
  const int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (base == SOCK_RAW)
    say_once(Notice::raw_socket, "a raw socket (SOCK_RAW) is not paced: its packets go straight to the kernel");
  if (domain == AF_PACKET)
    say_once(Notice::packet_socket, "a packet socket (AF_PACKET) is not paced: its frames go straight to the kernel");
  const bool udp = base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP) &&
                   (domain == AF_INET || domain == AF_INET6);
  install(fd, udp ? make_entry(fd, domain, true, type) : nullptr);
}

void on_descriptor_dup(int oldfd, int newfd) {
  SocketEntry* e = lookup_socket(oldfd);
  if (!e) {
    auto* s = slot_of(newfd, false);
    if (s) s->store(kUnknown, std::memory_order_release);
    return;
  }
  {
    std::lock_guard lk(e->mu);
    ++e->program_fds;
  }
  install(newfd, e);
}

void forget_descriptor(int fd) {
  auto* s = slot_of(fd, false);
  if (!s) return;
  const std::uintptr_t old = s->exchange(kUnknown, std::memory_order_acq_rel);
  if (old <= kOther) return;
  SocketEntry& e = *reinterpret_cast<SocketEntry*>(old);
  std::lock_guard lk(e.mu);
  // An epoll registration names the program's descriptor: gone with it.
  std::erase_if(e.epoll, [fd](const EpollReg& r) { return r.fd == fd; });
  if (--e.program_fds > 0) return;
  e.closed = true;
  maybe_release(e);
}

void socket_datagram_done(SocketEntry& e, bool on_flow) {
  if (on_flow) e.inflight_flow.fetch_sub(1, std::memory_order_acq_rel);
  if (e.inflight.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard lk(e.mu);
    maybe_release(e);
  }
}

void socket_table_after_fork() {
  new (&g_entries_mu) std::mutex();
  std::vector<SocketEntry*> closed;
  for (SocketEntry* e : g_entries) {
    new (&e->mu) std::mutex();
    e->inflight.store(0, std::memory_order_relaxed);
    e->inflight_flow.store(0, std::memory_order_relaxed);
    // The parent's pacer applied the rates; the child starts from the options.
    e->owner_connected.max_pacing_rate = e->owner_unconnected.max_pacing_rate = e->opt.max_pacing_rate;
    e->owner_connected.flow_hint_ = e->owner_unconnected.flow_hint_ = 0xFFFFFFFFU;
    for (auto& r : e->epoll) r.out_dropped = false;
    if (e->closed && e->dupfd >= 0) closed.push_back(e);
  }
  for (SocketEntry* e : closed) {
    std::lock_guard lk(e->mu);
    maybe_release(*e);
  }
}

void for_each_socket(void (*fn)(SocketEntry&, void*), void* arg) {
  std::vector<SocketEntry*> all;
  {
    std::lock_guard lk(g_entries_mu);
    all = g_entries;
  }
  for (SocketEntry* e : all) fn(*e, arg);
}

}  // namespace ufq::run
