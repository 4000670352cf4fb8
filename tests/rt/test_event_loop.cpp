// Event-loop mode: the application's own loop enqueues, runs at `now` and
// arms its timer for the returned window; every packet comes back exactly
// once; a refused send asks for POLLOUT on the egress's descriptor. Virtual
// time where the loop allows it (it never reads a clock), the real clock and
// epoll_pwait2 where the point is a real loop.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/epoll.h>

#include <cerrno>
#include <vector>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/event_loop.hpp"
#include "ufq/rt/sink_egress.hpp"
#include "ufq/rt/udp_egress.hpp"

#include "loopback_socket.hpp"
#include "test_datagrams.hpp"
#include "packet_outcome.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

constexpr Time kT0 = 1000 * kNsecPerSec;  // virtual time: any origin will do
std::size_t idx(PacketFate f) { return static_cast<std::size_t>(f); }

// Takes what it is offered and records the loop time the test says it is.
class RecordingEgress final : public Egress {
 public:
  Time now = 0;  // the run's time, set by the test
  std::vector<Time> sent_at;  // by cookie
  explicit RecordingEgress(std::size_t n) : sent_at(n, 0) {}
  std::uint32_t tx_room() override { return 64; }
  bool xmit(Packet& p, bool) override {
    ++stats_.packets;
    sent_at[p.cookie] = now;
    complete(p, TxResult::sent, now);
    return true;
  }
  std::uint32_t flush() override { return 0; }
  std::uint32_t pending() const override { return 0; }
  void abandon(const std::function<void(Packet&)>&) override {}
  const char* describe() const override { return "recording"; }
};

std::vector<Packet> stamped(std::size_t n, std::vector<FlowOwner>& owners, Time t0, Time gap) {
  std::vector<Packet> pkts(n);
  for (std::size_t i = 0; i < n; ++i) {
    pkts[i].len = 1000;
    pkts[i].cookie = i;
    pkts[i].owner = &owners[i % owners.size()];
    pkts[i].tstamp = t0 ? t0 + gap * i : 0;
  }
  return pkts;
}

// The same, as datagrams for a UdpEgress (payload bytes to `dest`).
Datagrams stamped_datagrams(std::size_t n, std::vector<FlowOwner>& owners, Time t0, Time gap, Address dest,
                            std::uint32_t payload) {
  Datagrams d(n, dest, payload);
  for (std::size_t i = 0; i < n; ++i) {
    d[i].owner = &owners[i % owners.size()];
    d[i].tstamp = t0 ? t0 + gap * i : 0;
  }
  return d;
}

std::vector<FlowOwner> owners(std::size_t n) {
  std::vector<FlowOwner> o(n);
  for (std::size_t i = 0; i < n; ++i) o[i].id = i + 1;
  return o;
}

}  // namespace

// The caller's loop, in virtual time: run at each returned soft expiry; the
// window is the watchdog's [earliest due, + timer_slack]; nothing leaves early
// and everything leaves.
TEST(EventLoop, RunAtTheReturnedWindowSendsEverythingNeverEarly) {
  auto own = owners(4);
  auto pkts = stamped(40, own, kT0 + kNsecPerMsec, 250 * kNsecPerUsec);
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  EventLoopConfig cfg;
  cfg.fq.timer_slack_ns = 30'000;
  EventLoop loop(cfg, eg, out.callback());
  for (auto& p : pkts) ASSERT_EQ(loop.enqueue(p, kT0), Verdict::queued);
  EXPECT_EQ(loop.queued(), pkts.size());

  Time now = kT0;
  std::size_t runs = 0;
  for (;;) {
    eg.now = now;
    const Wakeup w = loop.run(now);
    ++runs;
    if (w.why == WakeFor::packet) break;  // nothing throttled: all sent
    ASSERT_EQ(w.why, WakeFor::window);
    EXPECT_EQ(w.fd, -1);
    ASSERT_GT(w.soft, now);
    EXPECT_EQ(w.slack(), 30'000U);
    now = w.soft;  // a timer that fires at the window's start
    ASSERT_LT(runs, 1000U);
  }
  EXPECT_EQ(out.twice, 0U);
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], pkts.size());
  for (std::size_t i = 0; i < pkts.size(); ++i) {
    ASSERT_GE(eg.sent_at[i], pkts[i].tstamp) << "packet " << i << " left early";
    ASSERT_EQ(eg.sent_at[i], pkts[i].tstamp) << "a timer at soft sends the packet due then";
  }
  EXPECT_TRUE(loop.idle());
  const PacketAccounting a = loop.accounting();
  EXPECT_TRUE(a.balanced()) << a.format();
  EXPECT_EQ(a.produced, pkts.size());
  const EventLoopStats s = loop.stats(now);
  EXPECT_EQ(s.counters.sent, pkts.size());
  EXPECT_EQ(s.fq.packets, pkts.size());
  EXPECT_GT(s.watchdog_arms, 0U);
}

// Running before the window (another event of the caller's loop) is allowed:
// nothing due leaves, the same window comes back.
TEST(EventLoop, RunningEarlyIsHarmless) {
  auto own = owners(1);
  auto pkts = stamped(1, own, kT0 + 5 * kNsecPerMsec, 0);
  Outcome out(1);
  RecordingEgress eg(1);
  EventLoop loop(EventLoopConfig{}, eg, out.callback());
  loop.enqueue(pkts[0], kT0);
  const Wakeup w1 = loop.run(kT0);
  ASSERT_EQ(w1.why, WakeFor::window);
  EXPECT_EQ(w1.soft, pkts[0].tstamp);
  const Wakeup w2 = loop.run(kT0 + kNsecPerMsec);
  EXPECT_EQ(w2.soft, w1.soft);
  EXPECT_EQ(w2.hard, w1.hard);
  EXPECT_EQ(out.total(), 0U);
  eg.now = w1.soft;
  EXPECT_EQ(loop.run(w1.soft).why, WakeFor::packet);
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], 1U);
}

TEST(EventLoop, QuotaAsksToRunAgainAtOnce) {
  auto own = owners(8);
  auto pkts = stamped(200, own, 0, 0);  // unstamped: all due
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  EventLoopConfig cfg;
  cfg.runner.quota = 64;
  EventLoop loop(cfg, eg, out.callback());
  for (auto& p : pkts) loop.enqueue(p, kT0);
  const Wakeup w = loop.run(kT0);
  EXPECT_EQ(w.why, WakeFor::quota);
  EXPECT_EQ(w.soft, kT0);
  EXPECT_EQ(w.hard, kT0);
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], 64U);
  while (loop.run(kT0).why == WakeFor::quota) {
  }
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], pkts.size());
  EXPECT_EQ(loop.counters().quota_runs, 3U);
}

// A refused packet comes back inside enqueue(), before it returns.
TEST(EventLoop, SchedulerDropsComeBackInsideEnqueue) {
  auto own = owners(1);
  auto pkts = stamped(3, own, kT0 + kNsecPerSec, kNsecPerMsec);
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  EventLoopConfig cfg;
  cfg.fq.flow_limit = 2;
  EventLoop loop(cfg, eg, out.callback());
  EXPECT_EQ(loop.enqueue(pkts[0], kT0), Verdict::queued);
  EXPECT_EQ(loop.enqueue(pkts[1], kT0), Verdict::queued);
  EXPECT_EQ(out.total(), 0U);
  EXPECT_EQ(loop.enqueue(pkts[2], kT0), Verdict::drop_flow_limit);
  EXPECT_EQ(out.fate_of[2], static_cast<int>(PacketFate::drop_flow_limit));
  EXPECT_EQ(out.when[2], kT0);
  EXPECT_EQ(loop.counters().dropped, 1U);
  EXPECT_EQ(loop.give_back(kT0), 2U);
  EXPECT_EQ(out.fates[idx(PacketFate::unsent)], 2U);
  EXPECT_TRUE(loop.accounting().balanced()) << loop.accounting().format();
}

// enqueue_burst: the verdicts of enqueue() one by one (here flow_limit 2 on
// one flow, 100 packets: more than one group of 64), every refused packet
// reported once as drop_flow_limit, the counters reconciled.
TEST(EventLoop, EnqueueBurstDecidesAsEnqueueAndReportsEveryRefusal) {
  auto own = owners(3);
  auto pkts = stamped(100, own, kT0 + kNsecPerSec, kNsecPerMsec);
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  EventLoopConfig cfg;
  cfg.fq.flow_limit = 2;
  EventLoop loop(cfg, eg, out.callback());
  std::vector<Packet*> ptrs;
  for (Packet& p : pkts) ptrs.push_back(&p);
  EXPECT_EQ(loop.enqueue_burst(ptrs, kT0), 6U);  // 2 per flow
  EXPECT_EQ(out.fates[idx(PacketFate::drop_flow_limit)], 94U);
  for (std::size_t i = 0; i < pkts.size(); ++i)
    EXPECT_EQ(out.fate_of[i], i < 6 ? -1 : static_cast<int>(PacketFate::drop_flow_limit)) << i;
  EXPECT_EQ(loop.counters().enqueued, 100U);
  EXPECT_EQ(loop.counters().dropped, 94U);
  EXPECT_EQ(loop.give_back(kT0), 6U);
  EXPECT_TRUE(loop.accounting().balanced()) << loop.accounting().format();
}

TEST(EventLoop, ChangeIsAllOrNothingAndTrimsToTheNewLimit) {
  auto own = owners(10);
  auto pkts = stamped(50, own, 0, 0);  // due (trimming takes what dequeue would send), not run
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  EventLoop loop(EventLoopConfig{}, eg, out.callback());
  for (auto& p : pkts) loop.enqueue(p, kT0);
  FqConfig bad = loop.config();
  bad.limit = 20;
  bad.quantum = 0;
  EXPECT_THROW(loop.change(bad, kT0), ConfigError);
  EXPECT_EQ(loop.config().limit, FqConfig{}.limit) << "nothing changed";
  EXPECT_EQ(loop.queued(), 50U);
  FqConfig lower = loop.config();
  lower.limit = 20;
  EXPECT_EQ(loop.change(lower, kT0), 30U);
  EXPECT_EQ(loop.config().limit, 20U);
  EXPECT_EQ(out.fates[idx(PacketFate::drop_limit)], 30U);
  EXPECT_EQ(loop.queued(), 20U);
  EXPECT_EQ(loop.stats(kT0).fq.trimmed, 30U);
  loop.give_back(kT0);
  EXPECT_EQ(out.total(), 50U);
  EXPECT_EQ(out.twice, 0U);
  EXPECT_TRUE(loop.accounting().balanced()) << loop.accounting().format();
}

// A `now` earlier than one already seen is taken as that one: the scheduler
// never sees time go backwards.
TEST(EventLoop, TimeNeverGoesBackwards) {
  auto own = owners(1);
  auto pkts = stamped(2, own, 0, 0);
  Outcome out(2);
  RecordingEgress eg(2);
  EventLoop loop(EventLoopConfig{}, eg, out.callback());
  loop.run(kT0);
  loop.enqueue(pkts[0], kT0 - kNsecPerSec);
  EXPECT_EQ(loop.now(), kT0);
  eg.now = kT0;
  loop.run(kT0 - 2 * kNsecPerSec);
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], 1U);
  EXPECT_EQ(pkts[0].due, kT0);
}

TEST(EventLoop, DestructorGivesBackWhatIsHeld) {
  auto own = owners(2);
  auto pkts = stamped(6, own, kT0 + kNsecPerSec, kNsecPerMsec);
  Outcome out(pkts.size());
  RecordingEgress eg(pkts.size());
  {
    EventLoop loop(EventLoopConfig{}, eg, out.callback());
    for (auto& p : pkts) loop.enqueue(p, kT0);
  }
  EXPECT_EQ(out.fates[idx(PacketFate::unsent)], pkts.size());
  EXPECT_EQ(out.twice, 0U);
}

TEST(EventLoopDeathTest, CallingBackIntoTheLoopFromItsCallbackAborts) {
  auto own = owners(1);
  auto pkts = stamped(2, own, 0, 0);
  RecordingEgress eg(2);
  EventLoop* self = nullptr;
  bool reenter = true;
  EventLoop loop(EventLoopConfig{}, eg, [&](Packet&, PacketFate, Time when) {
    if (reenter) self->enqueue(pkts[1], when);
  });
  self = &loop;
  loop.enqueue(pkts[0], kT0);
  EXPECT_DEATH(loop.run(kT0), "EventLoop::enqueue called from inside the loop");
  reenter = false;  // the destructor gives packet 0 back
}

namespace {

// A UDP egress whose sendmmsg is scripted: refused with EAGAIN while `refuse`.
struct ScriptedUdp {
  bool refuse = true;
  int calls = 0;
  UdpEgress egress;
  ScriptedUdp() : egress(config()) {}
  UdpEgressConfig config() {
    UdpEgressConfig ec;
    ec.gso = false;
    ec.send = [this](int, mmsghdr*, unsigned n, int) {
      ++calls;
      if (refuse) {
        errno = EAGAIN;
        return -1;
      }
      return static_cast<int>(n);
    };
    return ec;
  }
};

}  // namespace

// EAGAIN: run() says so and names the descriptor to poll for POLLOUT; the
// staged packets are retried first by the next run() and nothing is lost.
TEST(EventLoop, RefusedSendReturnsTheDescriptorToPollForPollout) {
  ScriptedUdp udp;
  auto own = owners(3);
  auto pkts = stamped_datagrams(30, own, 0, 0, Address::loopback_v4(9), 200);
  Outcome out(pkts.size());
  EventLoopConfig cfg;
  cfg.egress_wait_ns = 300 * kNsecPerUsec;
  EventLoop loop(cfg, udp.egress, out.callback());
  for (auto& p : pkts) loop.enqueue(p, kT0);
  const Wakeup w = loop.run(kT0);
  ASSERT_EQ(w.why, WakeFor::egress);
  EXPECT_GE(w.fd, 0);
  EXPECT_EQ(w.fd, udp.egress.poll_fd());
  EXPECT_EQ(w.soft, kT0 + 300 * kNsecPerUsec);
  EXPECT_EQ(out.total(), 0U);
  EXPECT_GT(loop.queued(), 0U);
  // Still refused: the staged batch is retried first, the same answer.
  EXPECT_EQ(loop.run(kT0 + 10).why, WakeFor::egress);
  udp.refuse = false;
  Time now = kT0 + 20;
  for (int i = 0; i < 10 && loop.run(now).why != WakeFor::packet; ++i) now += 10;
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], pkts.size());
  EXPECT_EQ(out.twice, 0U);
  EXPECT_GE(loop.counters().egress_waits, 2U);
  EXPECT_GT(loop.stats(now).egress.eagain, 0U);
  EXPECT_TRUE(loop.accounting().balanced()) << loop.accounting().format();
}

// The application's own loop on the real clock: epoll_pwait2 with the
// window's slack as the timer, a real UDP egress on loopback, a receiver
// that gets every datagram; nothing leaves before its time.
TEST(EventLoop, DrivenByEpollPwait2OverARealUdpSocket) {
  LoopbackSocket rx;
  UdpEgress egress;
  auto own = owners(5);
  const Time t0 = mono_now() + 2 * kNsecPerMsec;
  auto pkts = stamped_datagrams(100, own, t0, 200 * kNsecPerUsec,
                                Address::from(reinterpret_cast<const sockaddr*>(&rx.addr), sizeof(rx.addr)), 100);
  Outcome out(pkts.size());
  EventLoopConfig cfg;
  cfg.fq.timer_slack_ns = 20'000;
  EventLoop loop(cfg, egress, out.callback());
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  const std::uint64_t saved_slack = timer_slack_ns();  // this thread's, restored below
  for (auto& p : pkts) loop.enqueue(p, mono_now());
  const Time give_up = mono_now() + 20 * kNsecPerSec;
  while (out.total() < pkts.size() && mono_now() < give_up) {
    const Wakeup w = loop.run(mono_now());
    if (w.why == WakeFor::quota) continue;
    if (w.why == WakeFor::packet) {
      ASSERT_TRUE(loop.idle()) << "nothing throttled, so nothing queued";
      break;
    }
    int fd_added = -1;
    if (w.fd >= 0) {
      epoll_event ev{};
      ev.events = EPOLLOUT;
      ASSERT_EQ(::epoll_ctl(ep, EPOLL_CTL_ADD, w.fd, &ev), 0);
      fd_added = w.fd;
    }
    set_timer_slack_ns(w.slack());
    const Time now = mono_now();
    const timespec ts = to_timespec(w.soft > now ? w.soft - now : 0);
    epoll_event ev{};
    ::epoll_pwait2(ep, &ev, 1, &ts, nullptr);
    if (fd_added >= 0) ::epoll_ctl(ep, EPOLL_CTL_DEL, fd_added, nullptr);
  }
  ::close(ep);
  if (saved_slack) set_timer_slack_ns(saved_slack);
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], pkts.size());
  for (std::size_t i = 0; i < pkts.size(); ++i)
    ASSERT_GE(out.when[i], pkts[i].tstamp) << "packet " << i << " left early";
  std::uint64_t got = 0;
  const Time until = mono_now() + 5 * kNsecPerSec;
  while (got < pkts.size() && mono_now() < until) {
    pollfd p{rx.fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    std::uint8_t buf[2048];
    while (::recv(rx.fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) ++got;
  }
  EXPECT_EQ(got, pkts.size());
  EXPECT_TRUE(loop.accounting().balanced()) << loop.accounting().format();
}
