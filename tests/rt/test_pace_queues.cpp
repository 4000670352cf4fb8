// `ufq pace --queues N` end to end on loopback and the sink: flows spread
// over the queues, each queue's accounting balanced, the per-queue figures
// adding up to the totals, the receiver getting what every queue's socket
// sent, and the report's mq block and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pace/pace_run.hpp"
#include "pace/report.hpp"
#include "ufq/rt/clock.hpp"

using namespace ufq;
using namespace ufq::rt;

namespace {

PaceOptions queued_run(std::uint32_t queues, EgressKind egress) {
  PaceOptions o;
  o.queues = queues;
  o.egress = egress;
  o.workload.flows = 60;
  o.workload.rate_pps = 6'000;
  o.workload.payload = 200;
  o.duration_ns = 1200 * kNsecPerMsec;
  o.interval_ns = 400 * kNsecPerMsec;
  o.probe_timer = false;
  o.drain_ns = 2 * kNsecPerSec;
  o.receive_wait_ns = 3 * kNsecPerSec;
  return o;
}

void expect_queues_add_up(const PaceReport& r, std::uint32_t queues) {
  ASSERT_EQ(r.queues, queues);
  ASSERT_EQ(r.per_queue.size(), queues);
  EXPECT_TRUE(r.accounting.balanced()) << r.accounting.format();
  std::uint64_t flows = 0, produced = 0, sent = 0, fq_packets = 0;
  for (const PaceQueueReport& q : r.per_queue) {
    EXPECT_TRUE(q.accounting.balanced()) << "queue " << q.queue << ": " << q.accounting.format();
    EXPECT_GT(q.flows, 0U) << "queue " << q.queue << " got no flow";
    EXPECT_EQ(q.accounting.sent, q.pacer.fq.packets);
    flows += q.flows;
    produced += q.accounting.produced;
    sent += q.accounting.sent;
    fq_packets += q.pacer.fq.packets;
  }
  EXPECT_EQ(flows, r.workload.flows);
  EXPECT_EQ(produced, r.accounting.produced);
  EXPECT_EQ(sent, r.accounting.sent);
  EXPECT_EQ(fq_packets, r.fq_stats.packets);
  EXPECT_EQ(sent, r.packets_sent);
}

}  // namespace

TEST(PaceQueues, LoopbackTwoQueuesEveryPacketReceivedAndAccounted) {
  const PaceReport r = run_pace(queued_run(2, EgressKind::udp_shared));
  expect_queues_add_up(r, 2);
  EXPECT_EQ(r.packets_extra, 0U);
  EXPECT_EQ(r.packets_sent, r.packets_received + r.packets_lost);
  EXPECT_EQ(r.packets_lost, 0U) << "loopback loses nothing";
  EXPECT_EQ(r.flows_measured, r.workload.flows);
  EXPECT_LT(r.flow_rate_error_max, 0.05);  // generous: the machine may be loaded
}

TEST(PaceQueues, SinkFourQueuesReportAsMqWithFqChildren) {
  const PaceReport r = run_pace(queued_run(4, EgressKind::sink));
  expect_queues_add_up(r, 4);
  const std::string text = format_summary(r);
  EXPECT_NE(text.find("qdisc mq 1: root \n Sent "), std::string::npos) << text;
  for (const char* child : {"qdisc fq 0: parent 1:1 ", "qdisc fq 0: parent 1:4 "})
    EXPECT_NE(text.find(child), std::string::npos) << text;
  const auto j = nlohmann::json::parse(format_json(r));
  EXPECT_EQ(j["queues"], 4);
  ASSERT_EQ(j["per_queue"].size(), 4U);
  std::uint64_t sent = 0;
  for (const auto& q : j["per_queue"]) {
    EXPECT_TRUE(q["accounting"]["balanced"].get<bool>());
    sent += q["packets_sent"].get<std::uint64_t>();
  }
  EXPECT_EQ(sent, j["packets_sent"].get<std::uint64_t>());
  ASSERT_TRUE(j["qdisc"].is_array());
  ASSERT_EQ(j["qdisc"].size(), 5U);
  EXPECT_EQ(j["qdisc"][0]["kind"], "mq");
  EXPECT_EQ(j["qdisc"][0]["packets"].get<std::uint64_t>(), sent);
  EXPECT_EQ(j["qdisc"][4]["parent"], "1:4");
}

TEST(PaceQueues, OneQueueKeepsTheSingleQdiscReport) {
  const PaceReport r = run_pace(queued_run(1, EgressKind::sink));
  expect_queues_add_up(r, 1);
  const auto j = nlohmann::json::parse(format_json(r));
  EXPECT_TRUE(j["qdisc"].is_object());
  EXPECT_EQ(j["qdisc"]["kind"], "fq");
}
