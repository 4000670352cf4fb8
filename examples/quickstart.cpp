// The README's example: two paced owners share one fq scheduler. Built and run
// as part of the test suite, so the README cannot drift from the API.
#include <cstdio>
#include <vector>

#include "ufq/scheduler.hpp"

int main() {
  ufq::FqConfig cfg;               // the kernel's defaults: quantum 3028, timer_slack 10us, ...
  cfg.timer_slack_ns = 10'000;
  ufq::FqScheduler fq(cfg);        // throws ufq::ConfigError naming a bad field

  // Two flow owners (sockets), each paced at 1 Mbit/s = 125000 bytes/s.
  ufq::FlowOwner a{.id = 1, .pacing_rate = 125'000};
  ufq::FlowOwner b{.id = 2, .pacing_rate = 125'000};

  // Packets are the caller's memory; the scheduler only links them.
  std::vector<ufq::Packet> pkts(28);
  for (std::size_t i = 0; i < pkts.size(); ++i) {
    pkts[i].len = 1514;
    pkts[i].owner = (i % 2) ? &b : &a;
    if (fq.enqueue(pkts[i], /*now=*/0) != ufq::Verdict::queued) return 1;
  }

  // The driver loop: send what is due, then sleep until the watchdog window.
  ufq::Time now = 0;
  std::size_t sent = 0, wakeups = 0;
  while (sent < pkts.size()) {
    while (ufq::Packet* p = fq.dequeue(now)) {
      ++sent;
      std::printf("t=%9.3f ms  owner %llu  %u bytes\n", static_cast<double>(now) / 1e6,
                  static_cast<unsigned long long>(p->owner->id), p->len);
    }
    if (!fq.watchdog().queued()) break;
    // Any moment in [soft, hard] is allowed; a real timer with slack picks one.
    now = fq.watchdog().hard_expiry();
    fq.watchdog().expire();
    ++wakeups;
  }
  auto st = fq.stats(now);
  std::printf("sent %zu packets, %zu wake-ups, throttled %llu times\n", sent, wakeups,
              static_cast<unsigned long long>(st.throttled));
  return sent == pkts.size() && st.offered == st.dequeued + st.drops + st.purged + st.qlen ? 0 : 1;
}
