// Integration: `ufq pace` runs for a second or two on loopback. Checks the
// accounting (generated = sent + dropped + unsent; with the built-in
// receiver sent = received + lost, lost never negative: more received than
// sent is an error; nothing lost on loopback) and, with generous
// tolerances, the rates.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <thread>

#include "ufq/rt/clock.hpp"
#include "pace/pace_run.hpp"
#include "pace/report.hpp"
#include "pace/stop_signal.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

PaceOptions small_run(Time duration = 1500 * kNsecPerMsec) {
  PaceOptions o;
  o.workload.flows = 100;
  o.workload.rate_pps = 10'000;
  o.workload.payload = 200;
  o.duration_ns = duration;
  o.interval_ns = 500 * kNsecPerMsec;
  o.probe_samples = 20;
  o.drain_ns = 2 * kNsecPerSec;  // bounds only: a loaded machine may stall the pacer
  o.receive_wait_ns = 3 * kNsecPerSec;
  return o;
}

std::uint64_t fate(const PaceReport& r, PacketFate f) { return r.fates[static_cast<std::size_t>(f)]; }

void expect_accounting(const PaceReport& r) {
  const std::uint64_t dropped = fate(r, PacketFate::drop_limit) + fate(r, PacketFate::drop_flow_limit) +
                                fate(r, PacketFate::drop_horizon);
  EXPECT_EQ(r.packets_generated, r.packets_sent + dropped + fate(r, PacketFate::failed) + r.unsent_at_exit)
      << "every packet is sent, dropped with a reason, failed, or still queued at exit";
  if (r.receiver) {
    // Measured by the receiver, so it can fail both ways: lost is clamped
    // at 0, and a datagram received twice shows as packets_extra.
    EXPECT_EQ(r.packets_extra, 0U) << "more received than sent";
    EXPECT_EQ(r.packets_sent, r.packets_received + r.packets_lost);
  } else {
    EXPECT_EQ(r.packets_received, 0U) << "nothing is received without the built-in receiver";
    EXPECT_TRUE(nlohmann::json::parse(format_json(r))["packets_received"].is_null());
  }
  EXPECT_EQ(r.fq_stats.offered, r.fq_stats.dequeued + r.fq_stats.drops + r.fq_stats.qlen);

  // The full identity (accounting.hpp), term by term, and as printed.
  const PacketAccounting& a = r.accounting;
  EXPECT_TRUE(a.balanced()) << a.format();
  EXPECT_EQ(a.produced, r.packets_generated + a.unsent_producer);
  EXPECT_LE(a.unsent_producer, 1U);
  EXPECT_EQ(a.sent, r.packets_sent);
  EXPECT_EQ(a.drop_limit, fate(r, PacketFate::drop_limit));
  EXPECT_EQ(a.drop_flow_limit, fate(r, PacketFate::drop_flow_limit));
  EXPECT_EQ(a.drop_horizon, fate(r, PacketFate::drop_horizon));
  EXPECT_EQ(a.failed.total(), fate(r, PacketFate::failed));
  EXPECT_EQ(a.unsent() - a.unsent_producer, r.unsent_at_exit);
  EXPECT_NE(format_summary(r).find("accounting: " + a.format() + "\n"), std::string::npos);
  const auto j = nlohmann::json::parse(format_json(r))["accounting"];
  EXPECT_EQ(j["produced"].get<std::uint64_t>(),
            j["sent"].get<std::uint64_t>() + j["dropped"]["total"].get<std::uint64_t>() +
                j["failed"]["total"].get<std::uint64_t>() + j["unsent"]["total"].get<std::uint64_t>());
  EXPECT_EQ(j["produced"].get<std::uint64_t>(), a.produced);
  EXPECT_TRUE(j["balanced"].get<bool>());
}

}  // namespace

TEST(PaceRun, LoopbackAccountingAndRates) {
  const PaceReport r = run_pace(small_run());
  expect_accounting(r);
  EXPECT_EQ(r.packets_lost, 0U) << "loopback with a large receive buffer loses nothing";
  EXPECT_EQ(r.unsent_at_exit, 0U) << "the drain sends what is queued";
  EXPECT_EQ(r.packets_generated, 15'000U) << "100 flows x 100 pkt/s x 1.5 s";
  EXPECT_EQ(r.flows_measured, 100U);
  // Generous: the machine may be loaded. The strict figures are in docs/results.md.
  EXPECT_LT(r.flow_rate_error_max, 0.25);
  EXPECT_GT(r.pps, 5'000);
  EXPECT_LT(r.pps, 15'000);
  EXPECT_GT(r.wakeups_per_s, 0);
  EXPECT_EQ(r.timer, "nanosleep");
  EXPECT_EQ(r.lateness.early(), 0U) << "fq never releases a packet before its departure time";
  EXPECT_FALSE(r.stopped_by_signal);
  ASSERT_TRUE(r.timer_latency);
  EXPECT_EQ(r.timer_latency->lateness.count(), 20U);
  EXPECT_GE(r.intervals.size(), 2U);
  const std::string json = format_json(r);
  for (const char* key : {"\"pps\"", "\"wakeups_per_s\"", "\"interrupts_per_s\"",
                          "\"context_switches_per_s\"", "\"cpu_pct\"", "\"packets_sent\"",
                          "\"packets_received\"", "\"packets_lost\"", "\"flow_rate_error_max\"",
                          "\"lateness_ns\"", "\"p50\"", "\"p99\"", "\"max\"", "\"timer\"",
                          "\"qdisc\"", "\"kind\":\"fq\"", "\"throttled\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

TEST(PaceRun, SinkPerFlowAndTimerfd) {
  PaceOptions o = small_run(1 * kNsecPerSec);
  o.egress = EgressKind::sink;
  o.sleeper.kind = TimerKind::timerfd;
  PaceReport r = run_pace(o);
  expect_accounting(r);
  EXPECT_FALSE(r.receiver);
  // The sink's own count of what it was handed, against the producer's
  // count (with no losses possible, all 10,000 leave).
  EXPECT_EQ(r.pacer.egress.packets, r.packets_sent);
  EXPECT_EQ(r.packets_sent, r.packets_generated);
  EXPECT_EQ(r.packets_generated, 10'000U);
  EXPECT_EQ(r.timer, "timerfd");
  EXPECT_EQ(r.egress, "sink");

  o = small_run(1 * kNsecPerSec);
  o.egress = EgressKind::udp_per_flow;
  o.sleeper.kind = TimerKind::epoll;
  r = run_pace(o);
  expect_accounting(r);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_NE(r.egress.find("per-flow"), std::string::npos);
}

// A datagram that arrives twice (the seam sends every fifth batch twice)
// makes more received than sent: an error the report shows, not a negative
// loss hidden by the clamp.
TEST(PaceRun, MoreReceivedThanSentIsAnError) {
  PaceOptions o = small_run(500 * kNsecPerMsec);
  o.probe_timer = false;
  int calls = 0;
  o.sendmmsg = [&calls](int fd, mmsghdr* m, unsigned n, int flags) {
    const int r = ::sendmmsg(fd, m, n, flags);
    if (r > 0 && ++calls % 5 == 0) ::sendmmsg(fd, m, static_cast<unsigned>(r), flags);
    return r;
  };
  const PaceReport r = run_pace(o);
  ASSERT_TRUE(r.receiver);
  EXPECT_GT(r.packets_received, r.packets_sent);
  EXPECT_EQ(r.packets_extra, r.packets_received - r.packets_sent);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_NE(format_summary(r).find("more than sent (error)"), std::string::npos) << format_summary(r);
}

TEST(PaceRun, RefusedSendsDuringARunAreRetried) {
  PaceOptions o = small_run(1 * kNsecPerSec);
  int calls = 0;
  o.sendmmsg = [&calls](int fd, mmsghdr* m, unsigned n, int flags) {
    if (++calls % 4 == 0) {
      errno = (calls % 8 == 0) ? ENOBUFS : EAGAIN;
      return -1;
    }
    return ::sendmmsg(fd, m, n, flags);
  };
  const PaceReport r = run_pace(o);
  expect_accounting(r);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_GT(r.pacer.egress.eagain, 0U);
  EXPECT_GT(r.pacer.egress.enobufs, 0U);
  EXPECT_EQ(r.pacer.egress.failed, 0U);
}

TEST(PaceRun, SigtermMidRunEndsCleanlyWithFullAccounting) {
  StopSignal signals;
  PaceOptions o = small_run(30 * kNsecPerSec);
  o.stop = &StopSignal::flag();
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::kill(::getpid(), SIGTERM);
  });
  const Time t0 = mono_now();
  const PaceReport r = run_pace(o);
  killer.join();
  EXPECT_LT(mono_now() - t0, 20 * kNsecPerSec) << "stopped long before the 30 s duration";
  EXPECT_TRUE(r.stopped_by_signal);
  EXPECT_EQ(StopSignal::signal_number(), SIGTERM);
  expect_accounting(r);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_GT(r.packets_sent, 0U);
}

// SIGTERM raised by the send seam on the pacer thread while a sendmmsg batch
// is half done (half the messages sent, the call returns that count): the run
// stops, drains, and accounts for every packet.
TEST(PaceRun, SigtermRaisedInsideASendBatch) {
  StopSignal signals;
  PaceOptions o = small_run(30 * kNsecPerSec);
  o.stop = &StopSignal::flag();
  std::atomic<int> calls{0};
  std::atomic<unsigned> batch{0};
  o.sendmmsg = [&](int fd, mmsghdr* m, unsigned n, int flags) {
    if (calls.fetch_add(1) == 30) {
      batch = n;
      ::raise(SIGTERM);
      return ::sendmmsg(fd, m, std::max(1U, n / 2), flags);
    }
    return ::sendmmsg(fd, m, n, flags);
  };
  const PaceReport r = run_pace(o);
  EXPECT_TRUE(r.stopped_by_signal);
  EXPECT_EQ(StopSignal::signal_number(), SIGTERM);
  EXPECT_GT(batch.load(), 0U);
  expect_accounting(r);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_EQ(r.accounting.failed.total(), 0U);
}

// A producer faster than the pacer: a 16-slot ring, and the pacer held in its
// first send until the producer has been refused (seen in an interval
// report). The producer keeps the refused packet and retries: nothing is
// dropped, the refusals are counted, and the identity holds. (A ring smaller
// than one producer tick's packets caps the rate: the producer then ends
// the run behind, holding its refused packet, counted as unsent at the
// producer.)
TEST(PaceRun, ProducerOutrunsThePacerThroughATinyRing) {
  PaceOptions o = small_run(2 * kNsecPerSec);
  o.interval_ns = 100 * kNsecPerMsec;
  o.ring_capacity = 16;
  std::atomic<bool> refused{false}, held{false};
  o.on_interval = [&](const IntervalReport& ir) {
    if (ir.ring_full > 0) refused = true;
  };
  std::atomic<int> calls{0};
  o.sendmmsg = [&](int fd, mmsghdr* m, unsigned n, int flags) {
    if (calls.fetch_add(1) == 0) {
      const Time until = mono_now() + 20 * kNsecPerSec;
      while (!refused.load() && mono_now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      held = refused.load();
    }
    return ::sendmmsg(fd, m, n, flags);
  };
  const PaceReport r = run_pace(o);
  EXPECT_TRUE(held.load()) << "the producer was refused while the pacer was held";
  EXPECT_GT(r.ring_full, 0U);
  EXPECT_EQ(r.pacer.counters.ring_full, r.ring_full) << "both sides counted the same refusals";
  expect_accounting(r);
  EXPECT_EQ(r.accounting.dropped(), 0U) << "refused packets are retried, not dropped";
  EXPECT_EQ(r.accounting.failed.total(), 0U);
  EXPECT_EQ(r.accounting.unsent() - r.accounting.unsent_producer, 0U) << "the drain sends the rest";
  EXPECT_EQ(r.packets_lost, 0U);
}

// Every send fails for good after a while (ECONNREFUSED after its retry):
// those packets are failed with their errno, the run still ends normally,
// and the summary names the errno.
TEST(PaceRun, PersistentSendErrorIsCountedByErrno) {
  PaceOptions o = small_run(1 * kNsecPerSec);
  std::atomic<int> calls{0};
  o.sendmmsg = [&](int fd, mmsghdr* m, unsigned n, int flags) {
    if (calls.fetch_add(1) < 20) return ::sendmmsg(fd, m, n, flags);
    errno = ECONNREFUSED;
    return -1;
  };
  const PaceReport r = run_pace(o);
  expect_accounting(r);
  const PacketAccounting& a = r.accounting;
  EXPECT_GT(a.failed[ECONNREFUSED], 0U);
  EXPECT_EQ(a.failed[ECONNREFUSED], a.failed.total());
  EXPECT_EQ(a.sent + a.failed.total() + a.unsent(), a.produced);
  EXPECT_EQ(r.packets_lost, 0U);
  EXPECT_NE(format_summary(r).find("ECONNREFUSED"), std::string::npos);
  const auto j = nlohmann::json::parse(format_json(r));
  EXPECT_EQ(j["accounting"]["failed"]["by_errno"]["ECONNREFUSED"].get<std::uint64_t>(),
            a.failed[ECONNREFUSED]);
}
