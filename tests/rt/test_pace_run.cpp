// Integration: `ufq pace` runs for a second or two on loopback. Checks the
// accounting (generated = sent + dropped + unsent; sent = received + lost;
// nothing lost on loopback) and, with generous tolerances, the rates.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/pace_run.hpp"
#include "ufq/rt/report.hpp"
#include "ufq/rt/stop_signal.hpp"

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
  EXPECT_EQ(r.packets_sent, r.packets_received + r.packets_lost);
  EXPECT_EQ(r.fq_stats.offered, r.fq_stats.dequeued + r.fq_stats.drops + r.fq_stats.qlen);
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
  EXPECT_EQ(r.packets_received, r.packets_sent);
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
