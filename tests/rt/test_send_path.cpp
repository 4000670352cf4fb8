// The send path end to end (docs/send-path.md): an application hands
// datagrams (its own payloads, destinations, sources, sockets, ECN and GSO
// trains) to the runtime, and two receivers on loopback, one IPv4 and one
// IPv6, check what the wire carried: every byte unchanged, each flow at its
// rate, CE where fq marked it, trains as their segments, and no loss under
// an injected EIO on a GSO send or an EAGAIN storm. Bad datagrams come back
// refused with a reason, counted, their buffers returned.
//
// Each test runs once per way of driving the runtime (Mode): the pacer
// thread now; the event-loop mode is a second value of the parameter with
// its own ModeRunner.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/datagram.hpp"
#include "ufq/rt/event_loop.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/rt/payload_pool.hpp"
#include "ufq/rt/udp_egress.hpp"

#include "packet_outcome.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

constexpr Time kGenerous = 20 * kNsecPerSec;  // bounds waits; never reached unless broken

// ---------------------------------------------------------------------------
// Payloads: flow and sequence number, then bytes derived from both, so the
// receiver can tell each datagram's exact content without a copy of it.

std::uint8_t pattern(std::uint32_t flow, std::uint32_t seq, std::uint32_t i) {
  std::uint32_t x = flow * 2654435761U ^ seq * 40503U ^ i * 2246822519U;
  x ^= x >> 13;
  return static_cast<std::uint8_t>(x * 3266489917U >> 24);
}

void fill_payload(std::uint8_t* out, std::uint32_t len, std::uint32_t flow, std::uint32_t seq) {
  std::uint8_t head[8];
  std::memcpy(head, &flow, 4);
  std::memcpy(head + 4, &seq, 4);
  for (std::uint32_t i = 0; i < len; ++i) out[i] = i < 8 ? head[i] : pattern(flow, seq, i);
}

// (flow, seq) of a payload whose every byte is as fill_payload wrote it, else nullopt.
std::optional<std::pair<std::uint32_t, std::uint32_t>> check_payload(const std::uint8_t* in, std::size_t len) {
  if (len < 8) return std::nullopt;
  std::uint32_t flow = 0, seq = 0;
  std::memcpy(&flow, in, 4);
  std::memcpy(&seq, in + 4, 4);
  for (std::size_t i = 8; i < len; ++i)
    if (in[i] != pattern(flow, seq, static_cast<std::uint32_t>(i))) return std::nullopt;
  return std::make_pair(flow, seq);
}

// ---------------------------------------------------------------------------
// A receiver on loopback: every datagram with its length, ECN bits (from
// IP_RECVTOS / IPV6_RECVTCLASS), sender address and kernel receive time.

struct Arrival {
  std::uint32_t flow = 0, seq = 0, len = 0;
  bool intact = false;
  std::uint8_t ecn = 0;
  Address from;
  Time at = 0;  // CLOCK_REALTIME ns (SO_TIMESTAMPNS): only differences are used
};

class Receiver {
 public:
  explicit Receiver(int family) {
    fd_ = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int on = 1, buf = 32 << 20;
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    ::setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
    if (family == AF_INET6) {
      ::setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
      ::setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on));
      addr_ = Address::loopback_v6(0);
    } else {
      ::setsockopt(fd_, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
      addr_ = Address::loopback_v4(0);
    }
    ok_ = ::bind(fd_, addr_.sockaddr_ptr(), addr_.length()) == 0;
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    addr_ = Address::from(reinterpret_cast<sockaddr*>(&ss), len);
    thread_ = std::thread([this] { loop(); });
  }
  ~Receiver() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  bool ok() const { return ok_; }
  const Address& address() const { return addr_; }
  std::size_t count() {
    std::lock_guard<std::mutex> g(mu_);
    return got_.size();
  }
  // Datagrams the kernel dropped at this socket (its receive buffer was full:
  // the receiver thread waited for a CPU while they came). Without
  // CAP_NET_ADMIN the buffer is net.core.rmem_max at most (212992 by
  // default), which a loaded machine overflows with the GSO tests' trains.
  std::size_t dropped() const {
    std::uint32_t mem[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(mem);
    if (::getsockopt(fd_, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0) return 0;
    return mem[SK_MEMINFO_DROPS];
  }
  // Waits until `n` datagrams arrived or were dropped (or a generous bound),
  // then 50 ms more for any extra one, and returns those that arrived.
  std::vector<Arrival> wait_for(std::size_t n) {
    const Time until = mono_now() + kGenerous;
    while (count() + dropped() < n && mono_now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> g(mu_);
    return got_;
  }

 private:
  void loop() {
    std::vector<std::uint8_t> buf(65536);
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5) <= 0) continue;
      for (;;) {
        sockaddr_storage from{};
        iovec iov{buf.data(), buf.size()};
        alignas(cmsghdr) unsigned char ctl[256];
        msghdr m{};
        m.msg_name = &from;
        m.msg_namelen = sizeof(from);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl;
        m.msg_controllen = sizeof(ctl);
        const ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT);
        if (n < 0) break;
        Arrival a;
        a.len = static_cast<std::uint32_t>(n);
        a.from = Address::from(reinterpret_cast<sockaddr*>(&from), m.msg_namelen);
        if (auto fs = check_payload(buf.data(), static_cast<std::size_t>(n))) {
          a.intact = true;
          a.flow = fs->first;
          a.seq = fs->second;
        }
        for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
          if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
            a.ecn = static_cast<std::uint8_t>(*CMSG_DATA(c) & 3);
          } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
            int tc = 0;
            std::memcpy(&tc, CMSG_DATA(c), sizeof(tc));
            a.ecn = static_cast<std::uint8_t>(tc & 3);
          } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            timespec ts{};
            std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
            a.at = static_cast<Time>(ts.tv_sec) * kNsecPerSec + static_cast<Time>(ts.tv_nsec);
          }
        }
        std::lock_guard<std::mutex> g(mu_);
        got_.push_back(a);
      }
    }
  }

  int fd_ = -1;
  bool ok_ = false;
  Address addr_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Arrival> got_;
};

// ---------------------------------------------------------------------------
// How the application drives the runtime. run() hands every packet over and
// returns when each came back (or the drain bound passed); the accounting
// and egress figures are then the runtime's.

enum class Mode { pacer_thread, event_loop };

std::string mode_name(const ::testing::TestParamInfo<Mode>& info) {
  switch (info.param) {
    case Mode::pacer_thread: return "PacerThread";
    case Mode::event_loop: return "EventLoop";
  }
  return "unknown";
}

class ModeRunner {
 public:
  virtual ~ModeRunner() = default;
  virtual void run(const std::vector<Packet*>& pkts) = 0;
  virtual const PacketAccounting& accounting() const = 0;
  virtual const EgressStats& egress() const = 0;
};

// The pacer thread is started with the runner, before the departures are
// stamped: starting a thread takes 14-36 ms under TSan (more on a loaded
// machine), which inside App::kLead made the first departures late and
// every flow's fitted rate 7-11 % fast.
class PacerThreadRunner final : public ModeRunner {
 public:
  PacerThreadRunner(const PacerConfig& cfg, Egress& e, PacketDone done) : pacer_(cfg, e, std::move(done)) {
    pacer_.start();
  }
  void run(const std::vector<Packet*>& pkts) override {
    for (Packet* p : pkts)
      while (!pacer_.submit(*p)) std::this_thread::yield();
    pacer_.stop(kGenerous);
  }
  const PacketAccounting& accounting() const override { return pacer_.result().accounting; }
  const EgressStats& egress() const override { return pacer_.result().egress; }

 private:
  Pacer pacer_;
};

// The application's own loop, no thread of ours: enqueue everything, then
// run at each returned window with epoll_pwait2 (the window's slack as this
// thread's timer slack, POLLOUT on the descriptor after a refused send) until
// nothing is held; what is still held at the bound comes back as unsent.
class EventLoopRunner final : public ModeRunner {
 public:
  EventLoopRunner(const PacerConfig& cfg, Egress& e, PacketDone done)
      : loop_(EventLoopConfig{.fq = cfg.fq, .runner = cfg.runner}, e, std::move(done)) {}
  void run(const std::vector<Packet*>& pkts) override {
    for (Packet* p : pkts) loop_.enqueue(*p, mono_now());
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    const std::uint64_t saved_slack = timer_slack_ns();
    const Time give_up = mono_now() + kGenerous;
    while (!loop_.idle() && mono_now() < give_up) {
      const Wakeup w = loop_.run(mono_now());
      if (w.why == WakeFor::quota || w.why == WakeFor::packet) continue;
      int added = -1;
      if (w.fd >= 0) {
        epoll_event ev{};
        ev.events = EPOLLOUT;
        if (::epoll_ctl(ep, EPOLL_CTL_ADD, w.fd, &ev) == 0) added = w.fd;
      }
      set_timer_slack_ns(w.slack());
      const Time now = mono_now();
      const timespec ts = to_timespec(w.soft > now ? w.soft - now : 0);
      epoll_event ev{};
      ::epoll_pwait2(ep, &ev, 1, &ts, nullptr);
      if (added >= 0) ::epoll_ctl(ep, EPOLL_CTL_DEL, added, nullptr);
    }
    ::close(ep);
    if (saved_slack) set_timer_slack_ns(saved_slack);
    const Time end = mono_now();
    loop_.give_back(end);
    accounting_ = loop_.accounting();
    egress_ = loop_.stats(end).egress;
  }
  const PacketAccounting& accounting() const override { return accounting_; }
  const EgressStats& egress() const override { return egress_; }

 private:
  EventLoop loop_;
  PacketAccounting accounting_;
  EgressStats egress_;
};

std::unique_ptr<ModeRunner> make_runner(Mode m, const PacerConfig& cfg, Egress& e, PacketDone done) {
  switch (m) {
    case Mode::pacer_thread: return std::make_unique<PacerThreadRunner>(cfg, e, std::move(done));
    case Mode::event_loop: return std::make_unique<EventLoopRunner>(cfg, e, std::move(done));
  }
  return nullptr;
}

PacerConfig roomy() {
  PacerConfig cfg;
  cfg.fq.flow_limit = 100'000;  // the tests hand whole flows over at once
  cfg.fq.limit = 100'000;
  return cfg;
}

// ---------------------------------------------------------------------------
// The application: flows of datagrams, each with its own payload buffer
// (borrowed mode: the egress sends from it and hands it back) or a
// PayloadPool slot (copy mode).

struct FlowSpec {
  const Receiver* to = nullptr;
  double rate_pps = 1000;      // EDT stamps: packet k leaves at t0 + k / rate
  std::uint32_t packets = 100;
  std::uint32_t size = 1000;   // payload (a train's whole payload with gso_size)
  std::uint16_t gso_size = 0;
  Ecn ecn = Ecn::not_ect;
  bool copy = false;           // copy the payload into the pool
  int fd = -1;                 // the application's socket (-1: the egress's)
  Address source{};
  Time late = 0;               // stamp departures this far in the past (for CE)
  // The owner's SO_MAX_PACING_RATE: it does not pace EDT-stamped datagrams,
  // but fq's fast path refuses a non-TCP owner that has one.
  Rate max_pacing_rate = kUnlimitedRate;
};

struct App {
  std::vector<FlowSpec> flows;
  std::vector<FlowOwner> owners;
  std::vector<Datagram> dgrams;
  std::vector<std::vector<std::uint8_t>> buffers;  // borrowed mode: the application's buffers
  std::unique_ptr<PayloadPool> pool;
  std::vector<Packet*> order;  // submission order
  Outcome out{0};
  std::uint64_t wrong_buffer = 0;  // came back without its own buffer

  // Departures start kLead after stamp() (called again by run_app() just before
  // the runtime gets the datagrams, so building the App, however slow under a
  // sanitizer, does not make the first ones late).
  static constexpr Time kLead = 50 * kNsecPerMsec;

  explicit App(std::vector<FlowSpec> specs) : flows(std::move(specs)), owners(flows.size()) {
    std::size_t n = 0;
    for (const auto& s : flows) n += s.packets;
    dgrams.resize(n);
    buffers.resize(n);
    out = Outcome(n);
    pool = std::make_unique<PayloadPool>(static_cast<std::uint32_t>(n), 65535);
    std::size_t i = 0;
    std::vector<std::uint8_t> scratch(65536);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const FlowSpec& s = flows[f];
      owners[f].id = f + 1;
      owners[f].max_pacing_rate = s.max_pacing_rate;
      for (std::uint32_t k = 0; k < s.packets; ++k, ++i) {
        Datagram& d = dgrams[i];
        d.packet.cookie = i;
        d.packet.owner = &owners[f];
        d.dest = s.to->address();
        d.source = s.source;
        d.fd = s.fd;
        d.ecn = s.ecn;
        d.gso_size = s.gso_size;
        d.user = f;
        if (s.gso_size) {
          // A train: each segment is a payload of its own (flow, seq = k * 1000 + segment).
          for (std::uint32_t off = 0, seg = 0; off < s.size; off += s.gso_size, ++seg)
            fill_payload(scratch.data() + off, std::min<std::uint32_t>(s.gso_size, s.size - off),
                         static_cast<std::uint32_t>(f), k * 1000 + seg);
        } else {
          fill_payload(scratch.data(), s.size, static_cast<std::uint32_t>(f), k);
        }
        if (s.copy) {
          EXPECT_TRUE(pool->copy_in(d, scratch.data(), s.size));
        } else {
          buffers[i].assign(scratch.begin(), scratch.begin() + s.size);
          d.data = buffers[i].data();
          d.size = s.size;
        }
        d.charge();
      }
    }
    stamp();
    // Submission in departure order (as the application would produce them).
    for (auto& d : dgrams) order.push_back(&d.packet);
    std::stable_sort(order.begin(), order.end(), [](const Packet* a, const Packet* b) { return a->tstamp < b->tstamp; });
  }

  // Each flow's k-th datagram leaves at now + kLead + k / rate, minus its `late`.
  void stamp() {
    const Time t0 = mono_now() + kLead;
    std::size_t i = 0;
    for (const FlowSpec& s : flows)
      for (std::uint32_t k = 0; k < s.packets; ++k, ++i)
        dgrams[i].packet.tstamp = t0 + static_cast<Time>(static_cast<double>(k) * 1e9 / s.rate_pps) - s.late;
  }

  // The completion: the buffer comes back (copy mode: to the pool).
  PacketDone done() {
    auto inner = out.callback();
    return [this, inner](Packet& p, PacketFate f, Time t) {
      Datagram& d = Datagram::of(p);
      const std::size_t i = p.cookie;
      if (flows[d.user].copy) {
        if (!pool->owns(d.data)) ++wrong_buffer;
        pool->release(d);
      } else if (d.data != buffers[i].data()) {
        ++wrong_buffer;
      }
      inner(p, f, t);
    };
  }

  // Datagrams on the wire per flow: trains count their segments.
  std::size_t wire_datagrams(const Receiver& r) const {
    std::size_t n = 0;
    for (const auto& s : flows)
      if (s.to == &r) n += static_cast<std::size_t>(s.packets) * (s.gso_size ? (s.size + s.gso_size - 1) / s.gso_size : 1);
    return n;
  }
};

// Every datagram of every flow to `r` arrived once, intact, and nothing else,
// except those the receiving socket counted as dropped (Receiver::dropped:
// the machine's doing, not the sender's; none when the receiver kept up).
void expect_all_intact(const App& app, const Receiver& r, const std::vector<Arrival>& got) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> seen;
  std::size_t broken = 0;
  for (const Arrival& a : got) {
    if (!a.intact) ++broken;
    else ++seen[{a.flow, a.seq}];
  }
  EXPECT_EQ(broken, 0U) << "datagrams whose bytes changed";
  std::size_t missing = 0, dup = 0;
  for (std::size_t f = 0; f < app.flows.size(); ++f) {
    const FlowSpec& s = app.flows[f];
    if (s.to != &r) continue;
    for (std::uint32_t k = 0; k < s.packets; ++k) {
      const std::uint32_t segs = s.gso_size ? (s.size + s.gso_size - 1) / s.gso_size : 1;
      for (std::uint32_t seg = 0; seg < segs; ++seg) {
        const std::uint32_t seq = s.gso_size ? k * 1000 + seg : k;
        const auto it = seen.find({static_cast<std::uint32_t>(f), seq});
        if (it == seen.end()) ++missing;
        else if (it->second != 1) ++dup;
      }
    }
  }
  const std::size_t dropped = r.dropped();
  if (dropped) std::printf("[ dropped  ] %zu datagrams by the receiving socket (its buffer was full)\n", dropped);
  EXPECT_EQ(missing, dropped) << "missing datagrams are exactly those the receiving socket dropped";
  EXPECT_EQ(dup, 0U);
  EXPECT_EQ(got.size() + dropped, app.wire_datagrams(r));
}

void expect_everything_back(const App& app, const ModeRunner& run) {
  EXPECT_EQ(app.out.twice, 0U);
  EXPECT_EQ(app.out.total(), app.dgrams.size()) << "every datagram comes back";
  EXPECT_EQ(app.wrong_buffer, 0U) << "each comes back with its own buffer";
  EXPECT_EQ(app.pool->in_use_approx(), 0U) << "every pool slot is back";
  EXPECT_TRUE(run.accounting().balanced()) << run.accounting().format();
}

// Stamp the departures afresh, then hand the datagrams to the runtime.
void run_app(ModeRunner& run, App& app) {
  app.stamp();
  run.run(app.order);
}

class SendPath : public ::testing::TestWithParam<Mode> {};

}  // namespace

// Distinct payloads to an IPv4 and an IPv6 receiver, two flows each, in
// both buffer modes, on the egress's sockets and on the application's own,
// with a source address: every byte arrives unchanged, each flow within 1 %
// of its rate (kernel receive timestamps, fitted over the whole flow).
TEST_P(SendPath, TwoReceiversGetEveryByteAtEachFlowsRate) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  if (!r6.ok()) GTEST_SKIP() << "no IPv6 loopback";
  const int own6 = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);  // blocking: the egress must not block on it
  in_addr src4{};
  ::inet_pton(AF_INET, "127.0.0.2", &src4);
  App app({
      {.to = &r4, .rate_pps = 1000, .packets = 1000, .size = 1200},
      {.to = &r4, .rate_pps = 500, .packets = 500, .size = 333, .copy = true, .source = Address::v4(src4, 0)},
      {.to = &r6, .rate_pps = 800, .packets = 800, .size = 1400, .copy = true},
      {.to = &r6, .rate_pps = 400, .packets = 400, .size = 100, .fd = own6, .source = Address::loopback_v6(0)},
  });
  UdpEgress egress;
  auto run = make_runner(GetParam(), roomy(), egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  EXPECT_EQ(run->accounting().sent, app.dgrams.size()) << run->accounting().format();
  const auto got4 = r4.wait_for(app.wire_datagrams(r4));
  const auto got6 = r6.wait_for(app.wire_datagrams(r6));
  expect_all_intact(app, r4, got4);
  expect_all_intact(app, r6, got6);
  // Rates from the receiver's clock: the least-squares slope of arrival
  // time over sequence number (one stall of a loaded machine moves a few
  // points, not the slope, as it would a first-to-last span).
  for (std::size_t f = 0; f < app.flows.size(); ++f) {
    const auto& got = app.flows[f].to == &r4 ? got4 : got6;
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    Time t0 = 0;
    for (const Arrival& a : got)
      if (a.intact && a.flow == f) {
        if (t0 == 0) t0 = a.at;
        const double x = a.seq, y = static_cast<double>(static_cast<std::int64_t>(a.at - t0));
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
      }
    ASSERT_GE(n, 2.0);
    const double slope_ns = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    const double rate = 1e9 / slope_ns;
    EXPECT_NEAR(rate / app.flows[f].rate_pps, 1.0, 0.01) << "flow " << f << ": " << rate << " pkt/s";
  }
  // The source address (IP_PKTINFO) is what the receiver saw.
  for (const Arrival& a : got4)
    if (a.intact && a.flow == 1) {
      EXPECT_EQ(a.from.to_string().substr(0, 10), "127.0.0.2:");
      break;
    }
  ::close(own6);
}

// An IPv4 destination on the application's dual-stack IPv6 socket goes out
// as the kernel sends it (a sockaddr_in on an AF_INET6 socket): every datagram
// arrives at the IPv4 receiver. (On an IPV6_V6ONLY socket it is refused with
// ENETUNREACH: BadDatagramsAreRefusedWithAReasonAndComeBack.)
TEST_P(SendPath, Ipv4DestinationOnADualStackIpv6SocketIsSent) {
  Receiver r4(AF_INET);
  ASSERT_TRUE(r4.ok());
  const int dual = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (dual < 0) GTEST_SKIP() << "no IPv6";
  const int off = 0;
  ::setsockopt(dual, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  App app({{.to = &r4, .rate_pps = 2000, .packets = 200, .size = 400, .fd = dual}});
  UdpEgress egress;
  auto run = make_runner(GetParam(), roomy(), egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  EXPECT_EQ(run->accounting().sent, app.dgrams.size()) << run->accounting().format();
  const auto got = r4.wait_for(app.wire_datagrams(r4));
  expect_all_intact(app, r4, got);
  ::close(dual);
}

// ce_threshold exceeded (the departures stamped 50 ms in the past): fq
// marks the ECT datagrams CE and the receivers see CE (IP_RECVTOS /
// IPV6_RECVTCLASS), datagram by datagram exactly where fq marked; not-ECT
// datagrams are never marked; ECT datagrams on time keep their ECT(0).
// The late ECT owners have a maximum pacing rate, which keeps them off fq's
// fast path (never marked: docs/features.md): how many late datagrams the
// fast path takes depends on how the producer and the pacer thread
// interleave (8 per pass when the pacer finds the scheduler empty; 16 seen
// under TSan on a loaded machine), so without it the number of CE would be
// the machine's. With it every one of the 50 is marked.
TEST_P(SendPath, CeMarksReachTheReceiver) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  if (!r6.ok()) GTEST_SKIP() << "no IPv6 loopback";
  const Time late = 100 * kNsecPerMsec;  // the application's start is App::kLead (50 ms) ahead
  const Rate off_fast_path = 1'000'000'000;  // 1 GB/s: never paces these (EDT), only refuses the fast path
  App app({
      {.to = &r4, .rate_pps = 10000, .packets = 50, .size = 500, .ecn = Ecn::ect0, .late = late,
       .max_pacing_rate = off_fast_path},
      {.to = &r4, .rate_pps = 10000, .packets = 50, .size = 500, .ecn = Ecn::not_ect, .late = late},
      {.to = &r6, .rate_pps = 10000, .packets = 50, .size = 500, .ecn = Ecn::ect1, .late = late,
       .max_pacing_rate = off_fast_path},
      {.to = &r6, .rate_pps = 10000, .packets = 50, .size = 500, .ecn = Ecn::ect0},
  });
  PacerConfig cfg = roomy();
  cfg.fq.ce_threshold_us = 20000;  // 20 ms: the late ones (50 ms) exceed it, the others only in a stall
  UdpEgress egress;
  auto run = make_runner(GetParam(), cfg, egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  const auto got4 = r4.wait_for(app.wire_datagrams(r4));
  const auto got6 = r6.wait_for(app.wire_datagrams(r6));
  expect_all_intact(app, r4, got4);
  expect_all_intact(app, r6, got6);
  // What the wire carried, datagram by datagram, is what fq decided: CE
  // exactly where it marked the packet.
  std::map<std::uint32_t, std::map<int, int>> ecn_by_flow;
  std::size_t mismatched = 0;
  for (const auto* got : {&got4, &got6})
    for (const Arrival& a : *got) {
      ++ecn_by_flow[a.flow][a.ecn];
      const Datagram& d = app.dgrams[a.flow * 50 + a.seq];
      if (a.ecn != static_cast<int>(d.wire_ecn()) || a.ecn != static_cast<int>(d.sent_ecn)) ++mismatched;
    }
  EXPECT_EQ(mismatched, 0U) << "the codepoint on the wire is the datagram's, CE where fq marked it";
  EXPECT_EQ(ecn_by_flow[0][3], 50) << "late ECT(0) over IPv4: CE";
  EXPECT_EQ(ecn_by_flow[1][0], 50) << "late not-ECT: never marked";
  EXPECT_EQ(ecn_by_flow[2][3], 50) << "late ECT(1) over IPv6: CE";
  // On time: ECT(0), unless a stall of the loaded machine made one late
  // enough for fq to mark it (then `mismatched` above holds it to CE).
  EXPECT_EQ(ecn_by_flow[3][2] + ecn_by_flow[3][3], 50) << "on time ECT(0): ECT(0) or fq's CE";
  EXPECT_EQ(run->egress().ce_marked,
            static_cast<std::uint64_t>(ecn_by_flow[0][3] + ecn_by_flow[2][3] + ecn_by_flow[3][3]));
}

// Trains the application built (UDP GSO, gso_size) arrive as their
// segments, the last one shorter, on both families.
TEST_P(SendPath, ApplicationGsoTrainsArriveAsTheirSegments) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  if (!r6.ok()) GTEST_SKIP() << "no IPv6 loopback";
  App app({
      {.to = &r4, .rate_pps = 2000, .packets = 40, .size = 9500, .gso_size = 1000},
      {.to = &r6, .rate_pps = 2000, .packets = 40, .size = 12000, .gso_size = 1200, .copy = true},
  });
  UdpEgress egress;
  if (!egress.gso_enabled()) GTEST_SKIP() << "the kernel has no UDP GSO";
  auto run = make_runner(GetParam(), roomy(), egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  EXPECT_EQ(run->accounting().sent, 80U);
  const auto got4 = r4.wait_for(app.wire_datagrams(r4));
  const auto got6 = r6.wait_for(app.wire_datagrams(r6));
  expect_all_intact(app, r4, got4);
  expect_all_intact(app, r6, got6);
  EXPECT_EQ(got4.size() + r4.dropped(), 400U);
  EXPECT_EQ(got6.size() + r6.dropped(), 400U);
  std::size_t short4 = 0;
  for (const Arrival& a : got4) short4 += a.len == 500;
  EXPECT_LE(short4, 40U);
  EXPECT_GE(short4 + r4.dropped(), 40U) << "each IPv4 train ends with its 500-byte segment";
  EXPECT_EQ(run->egress().gso_messages, 80U);
  EXPECT_EQ(run->egress().gso_segments, 800U);
  // Charged as the bytes on the wire: payload + headers per segment.
  EXPECT_EQ(app.dgrams[0].packet.len, 9500U + 10 * 42);
  EXPECT_EQ(app.dgrams[0].packet.segments, 10U);
  EXPECT_EQ(app.dgrams[40].packet.len, 12000U + 10 * 62);
}

// The first send that carries UDP_SEGMENT fails with EIO (a device that
// cannot segment): GSO is switched off and the same datagrams, trains and
// merged runs alike, are sent again one segment per message. Nothing lost.
TEST_P(SendPath, InjectedEioOnGsoSendFallsBackWithoutLoss) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  if (!r6.ok()) GTEST_SKIP() << "no IPv6 loopback";
  App app({
      {.to = &r4, .rate_pps = 2000, .packets = 30, .size = 5000, .gso_size = 1000},
      {.to = &r4, .rate_pps = 20000, .packets = 300, .size = 700},  // merged runs
      {.to = &r6, .rate_pps = 2000, .packets = 30, .size = 3700, .gso_size = 1000, .copy = true},
  });
  std::atomic<int> eio{0};
  UdpEgressConfig ec;
  ec.send = [&eio](int fd, mmsghdr* m, unsigned n, int flags) {
    for (unsigned i = 0; i < n; ++i)
      for (cmsghdr* c = CMSG_FIRSTHDR(&m[i].msg_hdr); c; c = CMSG_NXTHDR(&m[i].msg_hdr, c))
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == 103 /* UDP_SEGMENT */ && i == 0) {
          eio.fetch_add(1);
          errno = EIO;
          return -1;
        }
    return ::sendmmsg(fd, m, n, flags);
  };
  UdpEgress egress(ec);
  if (!egress.gso_enabled()) GTEST_SKIP() << "the kernel has no UDP GSO";
  auto run = make_runner(GetParam(), roomy(), egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  EXPECT_EQ(run->accounting().sent, app.dgrams.size()) << run->accounting().format();
  EXPECT_EQ(eio.load(), 1) << "one EIO, then no UDP_SEGMENT ever again";
  EXPECT_EQ(run->egress().gso_fallbacks, 1U);
  EXPECT_FALSE(egress.gso_enabled());
  expect_all_intact(app, r4, r4.wait_for(app.wire_datagrams(r4)));
  expect_all_intact(app, r6, r6.wait_for(app.wire_datagrams(r6)));
}

// Two sends in three refused with EAGAIN (a full socket buffer), for the
// whole run: every datagram waits, then leaves; nothing is lost or changed.
TEST_P(SendPath, EagainStormLosesNothing) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  if (!r6.ok()) GTEST_SKIP() << "no IPv6 loopback";
  App app({
      {.to = &r4, .rate_pps = 5000, .packets = 500, .size = 1200},
      {.to = &r6, .rate_pps = 5000, .packets = 500, .size = 900, .copy = true},
      {.to = &r6, .rate_pps = 1000, .packets = 50, .size = 4000, .gso_size = 1000},
  });
  std::atomic<int> calls{0}, refused{0};
  UdpEgressConfig ec;
  ec.send = [&](int fd, mmsghdr* m, unsigned n, int flags) {
    if (calls.fetch_add(1) % 3 != 0) {
      refused.fetch_add(1);
      errno = EAGAIN;
      return -1;
    }
    return ::sendmmsg(fd, m, n, flags);
  };
  UdpEgress egress(ec);
  auto run = make_runner(GetParam(), roomy(), egress, app.done());
  run_app(*run, app);
  expect_everything_back(app, *run);
  EXPECT_EQ(run->accounting().sent, app.dgrams.size()) << run->accounting().format();
  EXPECT_GT(refused.load(), 100);
  EXPECT_EQ(run->egress().eagain, static_cast<std::uint64_t>(refused.load()));
  expect_all_intact(app, r4, r4.wait_for(app.wire_datagrams(r4)));
  expect_all_intact(app, r6, r6.wait_for(app.wire_datagrams(r6)));
}

// Bad datagrams, mixed with good ones: each is refused with its reason
// (Datagram::error, Datagram::why), counted by errno as failed, and comes
// back with its buffer; the good ones arrive. Never a crash, never a lost
// buffer.
TEST_P(SendPath, BadDatagramsAreRefusedWithAReasonAndComeBack) {
  Receiver r4(AF_INET), r6(AF_INET6);
  ASSERT_TRUE(r4.ok());
  const bool v6 = r6.ok();
  // A descriptor number that is not open (high, so no later open reuses it).
  const int closed = ::fcntl(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), F_DUPFD_CLOEXEC, 900);
  ASSERT_GE(closed, 900);
  ::close(closed);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int udp6 = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  ::setsockopt(udp6, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  const int udp4 = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  static std::uint8_t big[70000];
  struct Case {
    const char* what;
    int error;
    std::function<void(Datagram&)> spoil;
  };
  const std::vector<Case> cases = {
      {"no destination", EDESTADDRREQ, [](Datagram& d) { d.dest = Address(); }},
      {"destination port 0", EDESTADDRREQ, [](Datagram& d) { d.dest = Address::loopback_v4(0); }},
      {"IPv4 payload of 65508 bytes", EMSGSIZE, [](Datagram& d) { d.data = big; d.size = 65508; }},
      {"IPv4 train over 65507 bytes", EMSGSIZE, [](Datagram& d) { d.data = big; d.size = 66000; d.gso_size = 1100; }},
      {"65 GSO segments", EINVAL, [](Datagram& d) { d.data = big; d.size = 6500; d.gso_size = 100; }},
      {"GSO size above the limit", EINVAL, [](Datagram& d) { d.data = big; d.size = 65507; d.gso_size = 65508; }},
      {"no payload buffer", EFAULT, [](Datagram& d) { d.data = nullptr; }},
      {"source of the other family", EAFNOSUPPORT, [](Datagram& d) { d.source = Address::loopback_v6(0); }},
      {"closed descriptor", EBADF, [closed](Datagram& d) { d.fd = closed; }},
      {"a pipe", ENOTSOCK, [&pipefd](Datagram& d) { d.fd = pipefd[1]; }},
      {"a TCP socket", EPROTOTYPE, [tcp](Datagram& d) { d.fd = tcp; }},
      {"IPv4 destination on an IPV6_V6ONLY socket", ENETUNREACH, [udp6](Datagram& d) { d.fd = udp6; }},
      {"IPv6 destination on an IPv4 socket", EAFNOSUPPORT,
       [udp4](Datagram& d) { d.fd = udp4; d.dest = Address::loopback_v6(9); }},
  };
  // Flow 0: good datagrams, every other one spoilt by the next case.
  const auto n = static_cast<std::uint32_t>(2 * cases.size());
  std::vector<FlowSpec> specs = {{.to = &r4, .rate_pps = 10000, .packets = n, .size = 300}};
  if (v6) specs.push_back({.to = &r6, .rate_pps = 1000, .packets = 1, .size = 65508});  // fine over IPv6
  App app(specs);
  std::vector<const std::uint8_t*> buffer(app.dgrams.size());
  for (std::size_t c = 0; c < cases.size(); ++c) {
    Datagram& d = app.dgrams[2 * c + 1];
    cases[c].spoil(d);
    d.charge();
  }
  for (std::size_t i = 0; i < app.dgrams.size(); ++i) buffer[i] = app.dgrams[i].data;
  // The completion checks each refusal's reason and that the buffer it
  // carries is the one it was given.
  std::vector<int> error(app.dgrams.size(), -1);
  std::vector<std::string> why(app.dgrams.size());
  std::size_t wrong = 0;
  auto inner = app.out.callback();
  PacketDone done = [&](Packet& p, PacketFate f, Time t) {
    const Datagram& d = Datagram::of(p);
    error[p.cookie] = d.error;
    why[p.cookie] = d.why ? d.why : "";
    if (d.data != buffer[p.cookie]) ++wrong;
    inner(p, f, t);
  };
  UdpEgress egress;
  auto run = make_runner(GetParam(), roomy(), egress, done);
  run_app(*run, app);
  EXPECT_EQ(app.out.twice, 0U);
  EXPECT_EQ(app.out.total(), app.dgrams.size()) << "every datagram comes back";
  EXPECT_EQ(wrong, 0U) << "with its own buffer";
  const PacketAccounting& a = run->accounting();
  EXPECT_TRUE(a.balanced()) << a.format();
  EXPECT_EQ(a.failed.total(), cases.size()) << a.format();
  EXPECT_EQ(run->egress().refused, cases.size());
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(cases[c].what);
    EXPECT_EQ(app.out.fate_of[2 * c + 1], static_cast<int>(PacketFate::failed));
    EXPECT_EQ(error[2 * c + 1], cases[c].error) << why[2 * c + 1];
    EXPECT_FALSE(why[2 * c + 1].empty());
    EXPECT_EQ(app.out.fate_of[2 * c], static_cast<int>(PacketFate::sent));
    EXPECT_EQ(error[2 * c], 0);
  }
  EXPECT_EQ(a.failed[EDESTADDRREQ], 2U) << a.format();
  EXPECT_EQ(a.failed[EINVAL], 2U) << a.format();
  EXPECT_EQ(r4.wait_for(cases.size()).size(), cases.size()) << "the good ones arrive";
  if (v6) {
    EXPECT_EQ(app.out.fate_of.back(), static_cast<int>(PacketFate::sent)) << "65508 bytes fit IPv6";
    EXPECT_EQ(r6.wait_for(1).size(), 1U);
  }
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  ::close(tcp);
  ::close(udp6);
  ::close(udp4);
}

INSTANTIATE_TEST_SUITE_P(Modes, SendPath, ::testing::Values(Mode::pacer_thread, Mode::event_loop), mode_name);

// --- the record's own rules ---

TEST(Datagram, ChargesTheBytesOnTheWire) {
  Datagram d;
  d.dest = Address::loopback_v4(9);
  d.size = 1200;
  d.charge();
  EXPECT_EQ(d.packet.len, 1242U);
  EXPECT_EQ(d.packet.segments, 1U);
  EXPECT_FALSE(d.packet.ect);
  d.dest = Address::loopback_v6(9);
  d.gso_size = 500;
  d.ecn = Ecn::ect1;
  d.charge();
  EXPECT_EQ(d.packet.segments, 3U);
  EXPECT_EQ(d.packet.len, 1200U + 3 * 62);
  EXPECT_TRUE(d.packet.ect);
  EXPECT_EQ(d.wire_ecn(), Ecn::ect1);
  d.packet.ce = true;
  EXPECT_EQ(d.wire_ecn(), Ecn::ce);
  Datagram& back = Datagram::of(d.packet);
  EXPECT_EQ(&back, &d);
}

TEST(Address, ParsesBothFamiliesAndRefusesWithAReason) {
  std::string why;
  auto a = Address::parse("127.0.0.1:9000", &why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->family(), AF_INET);
  EXPECT_EQ(a->to_string(), "127.0.0.1:9000");
  a = Address::parse("[::1]:53", &why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->family(), AF_INET6);
  EXPECT_EQ(a->to_string(), "[::1]:53");
  for (const char* bad : {"::1:53", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "[::1]53", ":9"}) {
    EXPECT_FALSE(Address::parse(bad, &why)) << bad;
    EXPECT_NE(why.find(bad), std::string::npos) << why;
  }
}

TEST(PayloadPool, CopiesInAndTakesSlotsBack) {
  PayloadPool pool(2, 100);
  Datagram a, b, c;
  const std::uint8_t bytes[3] = {1, 2, 3};
  static const std::uint8_t large[101] = {};
  EXPECT_FALSE(pool.copy_in(a, large, 101)) << "larger than a slot";
  ASSERT_TRUE(pool.copy_in(a, bytes, 3));
  EXPECT_EQ(a.size, 3U);
  EXPECT_EQ(std::memcmp(a.data, bytes, 3), 0);
  ASSERT_TRUE(pool.copy_in(b, bytes, 3));
  EXPECT_FALSE(pool.copy_in(c, bytes, 3)) << "no slot free";
  EXPECT_EQ(pool.in_use_approx(), 2U);
  pool.release(a);
  EXPECT_EQ(a.data, nullptr);
  EXPECT_TRUE(pool.copy_in(c, bytes, 3));
  Datagram foreign;
  foreign.data = bytes;
  EXPECT_THROW(pool.release(foreign), std::logic_error);
}
