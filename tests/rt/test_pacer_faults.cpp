// Fault injection in the pacer: sends failing with EAGAIN, ENOBUFS, EINTR,
// ECONNREFUSED and other errors, signals interrupting the sleeper, a real
// receiver that disappears, SIGTERM in the middle of a sendmmsg batch, and a
// producer faster than the pacer. Each test asserts the whole identity
//   submitted = sent + dropped + failed (by errno) + unsent (ring, fq, egress)
// both from the pacer's own accounting and from what came back through the
// callback, plus the fault's own counters. Faults come from the sendmmsg
// seam (or real sockets and real signals); the ordering that matters is made
// by the seam waiting for the test, never by sleeping and hoping.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <functional>
#include <thread>
#include <vector>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/pacer.hpp"
#include "pace/stop_signal.hpp"
#include "ufq/rt/udp_egress.hpp"

#include "loopback_socket.hpp"
#include "test_datagrams.hpp"
#include "packet_outcome.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

constexpr Time kGenerous = 20 * kNsecPerSec;  // bounds waits; never reached unless broken

std::size_t idx(PacketFate f) { return static_cast<std::size_t>(f); }

// The identity, from both sides: the pacer's accounting and the callback.
void expect_identity(const Pacer& pacer, const Outcome& out, std::uint64_t submitted) {
  const PacerResult& r = pacer.result();
  const PacketAccounting& a = r.accounting;
  EXPECT_EQ(out.twice, 0U) << "a packet came back twice";
  EXPECT_EQ(r.counters.submitted, submitted);
  EXPECT_EQ(a.produced, submitted);
  EXPECT_TRUE(a.balanced()) << a.format();
  EXPECT_EQ(out.total(), submitted) << "every packet comes back exactly once: " << a.format();
  EXPECT_EQ(out.fates[idx(PacketFate::sent)], a.sent);
  EXPECT_EQ(out.fates[idx(PacketFate::drop_limit)], a.drop_limit);
  EXPECT_EQ(out.fates[idx(PacketFate::drop_flow_limit)], a.drop_flow_limit);
  EXPECT_EQ(out.fates[idx(PacketFate::drop_horizon)], a.drop_horizon);
  EXPECT_EQ(out.fates[idx(PacketFate::failed)], a.failed.total());
  EXPECT_EQ(out.fates[idx(PacketFate::unsent)], a.unsent());
  EXPECT_EQ(a.unsent_producer, 0U);
  EXPECT_EQ(r.egress.failed, a.failed.total());
  EXPECT_EQ(r.counters.sent, a.sent);
  EXPECT_EQ(r.egress.packets, a.sent);
  EXPECT_EQ(r.fq.offered, r.fq.dequeued + r.fq.drops + r.fq.qlen);
}

void expect_never_early(const Datagrams& pkts, const Outcome& out) {
  for (std::size_t i = 0; i < pkts.size(); ++i)
    if (out.fate_of[i] == static_cast<int>(PacketFate::sent)) {
      ASSERT_GE(out.when[i], pkts[i].tstamp) << "packet " << i << " left before its time";
    }
}

struct Flows {
  std::vector<FlowOwner> owners;
  explicit Flows(std::size_t n) : owners(n) {
    for (std::size_t i = 0; i < n; ++i) owners[i].id = i + 1;
  }
  // n packets round-robin over the flows; departures spread over `span`
  // from t0 (t0 == 0: unstamped, due at once).
  Datagrams packets(std::size_t n, Time t0, Time span, Address dest = Address::loopback_v4(9),
                    std::uint32_t payload = 1200) {
    Datagrams pkts(n, dest, payload);
    for (std::size_t i = 0; i < n; ++i) {
      pkts[i].owner = &owners[i % owners.size()];
      pkts[i].tstamp = t0 ? t0 + span * i / n : 0;
    }
    return pkts;
  }
};

// The send seam: `script(call, n)` returns messages sent (>= 0, clamped to
// n) or -errno. It counts the messages it reported sent.
struct ScriptedSend {
  std::function<int(int call, unsigned n)> script;
  std::atomic<int> calls{0};
  std::atomic<std::uint64_t> messages_sent{0};
  SendmmsgFn fn() {
    return [this](int, mmsghdr*, unsigned n, int) {
      const int s = script(calls.fetch_add(1), n);
      if (s < 0) {
        errno = -s;
        return -1;
      }
      const int sent = std::min(s, static_cast<int>(n));
      messages_sent.fetch_add(static_cast<std::uint64_t>(sent));
      return sent;
    };
  }
};

// A UDP egress (shared socket, no GSO: one message per packet) whose sends
// go to the script; nothing reaches the network.
UdpEgressConfig scripted_config(ScriptedSend& s) {
  UdpEgressConfig ec;
  ec.gso = false;
  ec.send = s.fn();
  return ec;
}

bool wait_for(const std::function<bool()>& cond, Time limit = kGenerous) {
  const Time until = mono_now() + limit;
  while (!cond()) {
    if (mono_now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void submit_all(Pacer& pacer, Datagrams& pkts, std::size_t from = 0,
                std::size_t to = SIZE_MAX) {
  to = std::min(to, pkts.size());
  for (std::size_t i = from; i < to; ++i)
    while (!pacer.submit(pkts[i])) std::this_thread::yield();
}

// One pacer run against a scripted egress: `nflows` flows, `n` packets
// (stamped as Flows::packets), the callback's outcome, and the send seam,
// whose `script` the test sets before starting. Not movable: the egress and
// the pacer hold references into it.
struct ScriptedRun {
  Flows flows;
  Datagrams pkts;
  Outcome out;
  ScriptedSend send;
  UdpEgress egress;
  Pacer pacer;

  // `observe` (if set) also sees every packet, before the outcome does.
  ScriptedRun(std::size_t nflows, std::size_t n, Time t0, Time span, const PacerConfig& cfg = {},
              PacketDone observe = {})
      : flows(nflows),
        pkts(flows.packets(n, t0, span)),
        out(pkts.size()),
        egress(scripted_config(send)),
        pacer(cfg, egress, observe ? both(std::move(observe), out.callback()) : out.callback()) {}
  ScriptedRun(const ScriptedRun&) = delete;
  ScriptedRun& operator=(const ScriptedRun&) = delete;

  // The usual order: start the pacer, then submit every packet.
  void start() {
    pacer.start();
    submit_all(pacer, pkts);
  }
  // Stops (draining for at most `drain`) and checks the identity for every packet.
  void stop(Time drain) {
    pacer.stop(drain);
    expect_identity(pacer, out, pkts.size());
  }
  // The whole usual run: start, submit all, drain, check the identity.
  const PacerResult& pace() {
    start();
    stop(kGenerous);
    return pacer.result();
  }

 private:
  static PacketDone both(PacketDone first, PacketDone second) {
    return [first = std::move(first), second = std::move(second)](Packet& p, PacketFate f, Time t) {
      first(p, f, t);
      second(p, f, t);
    };
  }
};

}  // namespace

// A long run of EAGAIN (a full socket buffer): every packet waits, then leaves.
TEST(PacerFaults, EagainStormDelaysButLosesNothing) {
  // 50 packets per flow: below flow_limit, so fq drops none
  ScriptedRun run(40, 2000, mono_now() + 2 * kNsecPerMsec, 40 * kNsecPerMsec);
  run.send.script = [](int call, unsigned n) {
    if (call >= 3 && call < 503) return -EAGAIN;  // 500 refusals in a row
    return call % 2 ? static_cast<int>(n) : static_cast<int>(n + 1) / 2;  // partial sends too
  };
  const PacerResult& r = run.pace();
  EXPECT_EQ(r.accounting.sent, run.pkts.size());
  EXPECT_EQ(r.accounting.sent, run.send.messages_sent.load());
  EXPECT_GE(r.egress.eagain, 500U);
  EXPECT_EQ(r.egress.blocked, r.egress.eagain);
  EXPECT_GT(r.counters.blocked_waits, 0U);
  expect_never_early(run.pkts, run.out);
}

// EAGAIN that never ends: the drain is bounded and what is left is reported
// where it is (staged in the egress, queued in fq).
TEST(PacerFaults, EagainForeverEndsTheDrainWithPacketsUnsent) {
  ScriptedRun run(10, 1000, mono_now() + 2 * kNsecPerMsec, 20 * kNsecPerMsec);
  ScriptedSend& s = run.send;
  s.script = [&s](int, unsigned n) {
    if (s.messages_sent.load() >= 100) return -EAGAIN;
    return static_cast<int>(std::min(n, 7U));
  };
  run.start();
  ASSERT_TRUE(wait_for([&] { return s.messages_sent.load() >= 100; }));
  run.stop(200 * kNsecPerMsec);  // returns although the egress never recovers
  const PacerResult& r = run.pacer.result();
  EXPECT_EQ(r.accounting.sent, s.messages_sent.load());
  EXPECT_GT(r.accounting.unsent_egress, 0U) << "the refused batch stays staged until stop";
  EXPECT_EQ(r.accounting.sent + r.accounting.unsent(), run.pkts.size());
  EXPECT_EQ(r.accounting.failed.total(), 0U);
  EXPECT_GT(r.egress.eagain, 0U);
}

TEST(PacerFaults, EnobufsWithPartialSendsResumesInOrder) {
  std::vector<std::uint64_t> order;
  // Unstamped: big batches at once.
  ScriptedRun run(30, 1500, 0, 0, PacerConfig{}, [&order](Packet& p, PacketFate f, Time) {
    if (f == PacketFate::sent && p.owner->id == 1) order.push_back(p.cookie);
  });
  order.reserve(run.pkts.size());
  run.send.script = [](int call, unsigned n) {
    if (call % 3 == 1) return -ENOBUFS;
    return static_cast<int>(n / 2 + 1);  // part of the batch
  };
  const PacerResult& r = run.pace();
  EXPECT_EQ(r.accounting.sent, run.pkts.size());
  EXPECT_GT(r.egress.enobufs, 0U);
  EXPECT_EQ(r.egress.eagain, 0U);
  ASSERT_EQ(order.size(), 50U);
  for (std::size_t i = 1; i < order.size(); ++i) ASSERT_LT(order[i - 1], order[i]) << "flow 1 reordered";
}

// A send interrupted by a signal (EINTR) is sent again; a storm of them is
// treated as a refused send, so the pacer stays responsive to stop().
TEST(PacerFaults, EintrIsSentAgainAndAStormCannotSpinForever) {
  {
    ScriptedRun run(20, 1000, mono_now() + 2 * kNsecPerMsec, 20 * kNsecPerMsec);
    run.send.script = [](int call, unsigned n) { return call % 3 == 0 ? -EINTR : static_cast<int>(n); };
    const PacerResult& r = run.pace();
    EXPECT_EQ(r.accounting.sent, run.pkts.size());
    EXPECT_GT(r.egress.eintr, 0U);
    expect_never_early(run.pkts, run.out);
  }
  {
    ScriptedRun run(10, 500, 0, 0);
    run.send.script = [](int call, unsigned n) { return call < 2 ? static_cast<int>(n) : -EINTR; };
    run.start();
    ASSERT_TRUE(wait_for([&] { return run.send.calls.load() > 200; }));
    run.stop(100 * kNsecPerMsec);
    const PacerResult& r = run.pacer.result();
    EXPECT_EQ(r.accounting.sent, run.send.messages_sent.load());
    EXPECT_GT(r.accounting.unsent_egress, 0U);
    EXPECT_EQ(r.accounting.failed.total(), 0U) << "EINTR never fails a packet";
    EXPECT_GT(r.counters.blocked_waits, 0U) << "the storm was handed back to the pacer loop";
  }
}

namespace {
std::atomic<int> g_usr1{0};
extern "C" void on_usr1(int) { g_usr1.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

// Real signals (no SA_RESTART) hit the pacer thread while it sleeps: every
// strategy goes back to sleep or re-plans; nothing leaves early, nothing is
// lost.
TEST(PacerFaults, SignalsInterruptingTheSleeperLoseNothing) {
  struct sigaction sa {}, old {};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &old), 0);
  for (TimerKind k : {TimerKind::nanosleep, TimerKind::epoll, TimerKind::timerfd,
                      TimerKind::hybrid, TimerKind::tick}) {
    SCOPED_TRACE(to_string(k));
    PacerConfig cfg;
    cfg.sleeper.kind = k;
    cfg.sleeper.tick_ns = 200 * kNsecPerUsec;
    ScriptedRun run(10, 300, mono_now() + 5 * kNsecPerMsec, 150 * kNsecPerMsec, cfg);
    run.send.script = [](int, unsigned n) { return static_cast<int>(n); };
    Pacer& pacer = run.pacer;
    run.start();
    g_usr1 = 0;
    std::atomic<bool> done{false};
    std::thread signaller([&] {
      // At least 50 signals, even if the packets are all gone before this
      // thread runs (the pacer thread lives until stop()).
      for (int sent = 0; !done.load() || sent < 50; ++sent) {
        ::pthread_kill(pacer.native_handle(), SIGUSR1);
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    });
    const bool all = wait_for([&] { return pacer.counters().sent == run.pkts.size(); });
    done = true;
    signaller.join();
    EXPECT_TRUE(all);
    run.stop(kGenerous);
    EXPECT_GT(g_usr1.load(), 0);
    EXPECT_EQ(pacer.result().accounting.sent, run.pkts.size());
    expect_never_early(run.pkts, run.out);
  }
  ::sigaction(SIGUSR1, &old, nullptr);
}

// ECONNREFUSED once (an earlier ICMP error on a connected socket): the send is
// repeated and nothing fails.
TEST(PacerFaults, TransientEconnrefusedIsSentAgainOnce) {
  ScriptedRun run(20, 1000, mono_now() + 2 * kNsecPerMsec, 20 * kNsecPerMsec);
  run.send.script = [](int call, unsigned n) { return call % 5 == 0 ? -ECONNREFUSED : static_cast<int>(n); };
  const PacerResult& r = run.pace();
  EXPECT_EQ(r.accounting.sent, run.pkts.size());
  EXPECT_EQ(r.accounting.failed.total(), 0U);
  EXPECT_GT(r.egress.econnrefused_retries, 0U);
}

// Errors that do not go away: each message is tried (ECONNREFUSED: once more)
// and its packets are failed with that errno. No spinning: the number of
// send calls is bounded by the messages.
TEST(PacerFaults, PersistentSendErrorsFailPacketsWithTheirErrno) {
  for (int err : {ECONNREFUSED, EPERM, EMSGSIZE, EHOSTUNREACH, ENETUNREACH, EACCES}) {
    SCOPED_TRACE(ErrnoCounts::name(err));
    ScriptedRun run(10, 600, mono_now() + 2 * kNsecPerMsec, 20 * kNsecPerMsec);
    run.send.script = [err](int call, unsigned n) { return call < 5 ? static_cast<int>(n) : -err; };
    const PacketAccounting& a = run.pace().accounting;
    EXPECT_EQ(a.sent, run.send.messages_sent.load());
    EXPECT_EQ(a.sent + a.failed.total(), run.pkts.size()) << a.format();
    EXPECT_EQ(a.failed[err], a.failed.total()) << a.format();
    EXPECT_GT(a.failed[err], 0U);
    EXPECT_EQ(a.unsent(), 0U);
    // One call per failed message, plus at most one retry per batch for
    // ECONNREFUSED, plus the 5 that succeeded.
    EXPECT_LE(static_cast<std::uint64_t>(run.send.calls.load()), 2 * a.failed.total() + 5);
  }
}

namespace {

// Counts what arrives; close() makes the port go away.
struct LoopbackReceiver : LoopbackSocket {
  // Reads until `n` datagrams have arrived (or the generous limit).
  std::uint64_t read(std::uint64_t n) {
    std::uint64_t got = 0;
    const Time until = mono_now() + kGenerous;
    while (got < n && mono_now() < until) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      std::uint8_t buf[2048];
      while (::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) ++got;
    }
    return got;
  }
};

}  // namespace

// A real receiver on loopback goes away in the middle: its port is closed
// between the first and the second half of the packets. Connected per-flow
// sockets then get ICMP port unreachable back, so later sends report
// ECONNREFUSED (sent again once, then failed); the shared unconnected socket
// gets no error and its packets are sent and lost. Either way every packet is
// sent or failed with ECONNREFUSED, and the identity holds.
TEST(PacerFaults, ReceiverDisappearsMidRun) {
  for (const bool per_flow : {true, false}) {
    SCOPED_TRACE(per_flow ? "per-flow connected sockets" : "shared socket");
    LoopbackReceiver rx;
    Flows flows(8);
    const Address dest = Address::from(reinterpret_cast<const sockaddr*>(&rx.addr), sizeof(rx.addr));
    auto pkts = flows.packets(800, 0, 0, dest, 200);
    Outcome out(pkts.size());
    // Per-flow: the application's own connected sockets, one per flow.
    std::vector<int> fds;
    if (per_flow)
      for (int f = 0; f < 8; ++f) {
        const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        ASSERT_EQ(::connect(fd, dest.sockaddr_ptr(), dest.length()), 0);
        fds.push_back(fd);
      }
    for (std::size_t i = 0; i < pkts.size(); ++i)
      pkts.datagram(i).fd = per_flow ? fds[static_cast<std::size_t>(pkts[i].owner->id - 1)] : -1;
    struct Closer {
      std::vector<int>& fds;
      ~Closer() {
        for (int fd : fds) ::close(fd);
      }
    } closer{fds};
    UdpEgress egress;
    Pacer pacer(PacerConfig{}, egress, out.callback());
    pacer.start();
    // Each half spread over 40 ms so that each flow sends many separate
    // batches (after the close, each ICMP error surfaces on a later send).
    auto spread = [&](std::size_t from) {
      const Time t0 = mono_now();
      for (std::size_t i = from; i < from + 400; ++i) pkts[i].tstamp = t0 + (i - from) * 100 * kNsecPerUsec;
    };
    spread(0);
    submit_all(pacer, pkts, 0, 400);
    ASSERT_EQ(rx.read(400), 400U) << "loopback delivers the first half";
    rx.close();
    spread(400);
    submit_all(pacer, pkts, 400);
    pacer.stop(kGenerous);
    expect_identity(pacer, out, pkts.size());
    const PacketAccounting& a = pacer.result().accounting;
    const EgressStats& e = pacer.result().egress;
    EXPECT_EQ(a.sent + a.failed.total(), pkts.size()) << a.format();
    EXPECT_EQ(a.failed[ECONNREFUSED], a.failed.total()) << a.format();
    EXPECT_GE(a.sent, 400U);
    if (per_flow) {
      EXPECT_GT(e.econnrefused_retries + a.failed.total(), 0U)
          << "the closed port must surface on connected sockets: " << a.format();
    } else {
      EXPECT_EQ(a.failed.total(), 0U) << "an unconnected socket hears no ICMP errors";
    }
  }
}

// SIGTERM arrives while a sendmmsg batch is half done: the seam raises it from
// the pacer thread, waits until the run has asked the pacer to stop, reports
// half the batch sent, and refuses the rest (EAGAIN). Without a drain the
// other half stays staged in the egress and the rest in fq, all reported
// unsent; with a drain everything leaves.
TEST(PacerFaults, SigtermInTheMiddleOfABatch) {
  for (Time drain : {Time{0}, kGenerous}) {
    SCOPED_TRACE(drain ? "with drain" : "no drain");
    StopSignal signals;
    std::atomic<unsigned> batch{0};  // outlives the run: the script writes it
    ScriptedRun run(40, 3000, 0, 0);  // all due: full batches (75 per flow, under flow_limit)
    run.send.script = [&](int call, unsigned n) {
      if (call < 2) return static_cast<int>(n);
      if (call == 2) {
        batch = n;
        ::raise(SIGTERM);  // on the pacer thread, inside the batch
        wait_for([&] { return run.pacer.stopping(); });
        return static_cast<int>(n / 2);
      }
      if (call == 3) return -EAGAIN;
      return static_cast<int>(n);
    };
    submit_all(run.pacer, run.pkts);  // before start: the ring holds them all
    run.pacer.start();
    ASSERT_TRUE(wait_for([&] { return signals.requested(); }));
    EXPECT_EQ(StopSignal::signal_number(), SIGTERM);
    run.stop(drain);
    const PacketAccounting& a = run.pacer.result().accounting;
    EXPECT_EQ(a.sent, run.send.messages_sent.load());
    EXPECT_EQ(a.failed.total(), 0U);
    ASSERT_GT(batch.load(), 1U);
    if (drain) {
      EXPECT_EQ(a.sent, run.pkts.size());
    } else {
      EXPECT_EQ(a.unsent_egress, batch - batch / 2) << "the half of the batch not sent";
      EXPECT_GT(a.unsent_scheduler, 0U);
      EXPECT_EQ(a.unsent_ring, 0U);
      EXPECT_EQ(a.sent + a.unsent(), run.pkts.size()) << a.format();
    }
  }
}

// A producer faster than the pacer: the pacer is held in its first send
// until the bounded ring has refused the producer; the producer drops what
// is refused and counts it. offered = refused at the producer + submitted,
// and the pacer counted the same refusals.
TEST(PacerFaults, ProducerOutrunsThePacerRingFull) {
  PacerConfig cfg;
  cfg.ring_capacity = 8;
  std::atomic<std::uint64_t> refused{0};  // outlives the run: the script reads it
  ScriptedRun run(64, 4000, 0, 0, cfg);  // 63 per flow at most: fq drops none
  Datagrams& pkts = run.pkts;
  Pacer& pacer = run.pacer;
  run.send.script = [&](int call, unsigned n) {
    if (call == 0) wait_for([&] { return refused.load() > 0; });
    return static_cast<int>(n);
  };
  pacer.start();
  // The first packet starts the pacer's first send; the rest come once it
  // is held there, so the ring must fill.
  ASSERT_TRUE(pacer.submit(pkts[0]));
  ASSERT_TRUE(wait_for([&] { return run.send.calls.load() > 0; }));
  std::uint64_t submitted = 1;
  for (std::size_t i = 1; i < pkts.size(); ++i) {
    Packet& p = pkts[i];
    if (pacer.submit(p))
      ++submitted;
    else
      refused.fetch_add(1);  // a real-time producer drops what cannot be queued
  }
  pacer.stop(kGenerous);
  EXPECT_GT(refused.load(), 0U);
  EXPECT_EQ(submitted + refused.load(), pkts.size());
  EXPECT_EQ(pacer.result().counters.ring_full, refused.load());
  expect_identity(pacer, run.out, submitted);
  EXPECT_EQ(pacer.result().accounting.sent, submitted);
}

// fq's own drops come back with their reason while the egress also fails.
TEST(PacerFaults, SchedulerDropsAndSendErrorsTogether) {
  PacerConfig cfg;
  cfg.fq.flow_limit = 50;
  ScriptedRun run(2, 400, mono_now() + 20 * kNsecPerMsec, 50 * kNsecPerMsec, cfg);
  // The first call fails whatever the batching (a late start may send all at once).
  run.send.script = [](int call, unsigned n) { return call % 4 == 0 ? -EPERM : static_cast<int>(n); };
  submit_all(run.pacer, run.pkts);  // before start: all enqueued at once
  run.pacer.start();
  run.stop(kGenerous);
  const PacketAccounting& a = run.pacer.result().accounting;
  // 2 flows x (200 - 50) = 300 unless the start was so late that some
  // packets were already due and took fq's fast path (no flow_limit).
  EXPECT_GT(a.drop_flow_limit, 200U) << a.format();
  EXPECT_GT(a.failed[EPERM], 0U);
  EXPECT_EQ(a.failed[EPERM], a.failed.total());
  EXPECT_EQ(a.sent + a.failed.total() + a.drop_flow_limit, run.pkts.size()) << a.format();
}

namespace {

// Says it has room, then refuses every packet after the first `accept`:
// the driver loop keeps the refused packets (a requeue) to send first.
class RefusingEgress final : public Egress {
 public:
  explicit RefusingEgress(std::uint32_t accept) : accept_(accept) {}
  std::uint32_t tx_room() override { return 64; }
  bool xmit(Packet& p, bool) override {
    if (accepted_ >= accept_) return false;
    ++accepted_;
    ++stats_.packets;
    complete(p, TxResult::sent, mono_now());
    return true;
  }
  std::uint32_t flush() override { return 0; }
  std::uint32_t pending() const override { return 0; }
  void abandon(const std::function<void(Packet&)>&) override {}
  const char* describe() const override { return "refusing"; }

 private:
  std::uint32_t accept_;
  std::uint32_t accepted_ = 0;
};

}  // namespace

// A device that refuses what it said it had room for: the packets the driver
// loop holds for the next run come back unsent at stop, through the callback.
TEST(PacerFaults, PacketsHeldByTheDriverLoopAreReportedAtStop) {
  Flows flows(10);
  auto pkts = flows.packets(200, 0, 0);
  Outcome out(pkts.size());
  RefusingEgress egress(30);
  Pacer pacer(PacerConfig{}, egress, out.callback());
  submit_all(pacer, pkts);
  pacer.start();
  ASSERT_TRUE(wait_for([&] { return pacer.counters().runs > 2; }));
  pacer.stop(0);
  expect_identity(pacer, out, pkts.size());
  const PacketAccounting& a = pacer.result().accounting;
  EXPECT_EQ(a.sent, 30U);
  EXPECT_GT(a.unsent_egress, 0U) << a.format();
  EXPECT_GT(pacer.result().runner.requeues, 0U);
  EXPECT_EQ(a.sent + a.unsent_egress + a.unsent_scheduler, pkts.size());
}
