// The burst harness (paced_burst.hpp) without Google Benchmark, for counting
// instructions and simulated cache misses per packet, which do not depend on
// the machine's load: bench/count_burst.sh runs it twice under callgrind
// (--cache-sim=yes) with different numbers of wake-ups and divides the
// difference by the packets between them, so set-up and warm-up cancel out.
// Environment: UFQ_HUGE_PAGES=0 (4 KiB pages for the scheduler's arrays),
// UFQ_PROBE_SMAPS=1 (print Rss and AnonHugePages after the run).
// Usage: bench_probe_burst fast|fast-single|reference|heap|floor|flow-floor roundrobin|shuffled FLOWS BURST WAKES
#include <cstdio>
#include <cstdlib>
#include <string>

#include "paced_burst.hpp"
#include "ufq/reference/scheduler.hpp"
#include "ufq/scheduler.hpp"

namespace {

template <class S, bool kShuffled>
void run(std::size_t flows, std::size_t burst, std::size_t wakes) {
  ufq::bench::PacedBurst<S, kShuffled> w(flows, burst);
  w.warm_up();
  for (std::size_t i = 0; i < wakes; ++i) w.wake();
  if (const char* e = std::getenv("UFQ_PROBE_SMAPS"); e && std::string(e) == "1") {
    std::fprintf(stderr, "huge pages %s\n", ufq::bench::kHugePagesFromEnv ? "on" : "off");
    ufq::bench::print_smaps_rollup();
  }
}

template <class S>
void run(bool shuffled, std::size_t flows, std::size_t burst, std::size_t wakes) {
  if (shuffled)
    run<S, true>(flows, burst, wakes);
  else
    run<S, false>(flows, burst, wakes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s fast|fast-single|reference|heap|floor|flow-floor roundrobin|shuffled FLOWS BURST WAKES\n", argv[0]);
    return 2;
  }
  const std::string impl = argv[1], order = argv[2];
  const std::size_t flows = std::strtoul(argv[3], nullptr, 10), burst = std::strtoul(argv[4], nullptr, 10),
                    wakes = std::strtoul(argv[5], nullptr, 10);
  if ((order != "roundrobin" && order != "shuffled") || flows == 0 || burst == 0 || burst > 4096) {
    std::fprintf(stderr, "bad arguments: order roundrobin|shuffled, FLOWS >= 1, BURST 1..4096\n");
    return 2;
  }
  const bool shuffled = order == "shuffled";
  if (impl == "fast")
    run<ufq::FqScheduler>(shuffled, flows, burst, wakes);
  else if (impl == "fast-single")
    run<ufq::bench::SingleCalls<ufq::FqScheduler>>(shuffled, flows, burst, wakes);
  else if (impl == "reference")
    run<ufq::reference::FqScheduler>(shuffled, flows, burst, wakes);
  else if (impl == "heap")
    run<ufq::bench::HeapPacer>(shuffled, flows, burst, wakes);
  else if (impl == "floor")
    run<ufq::bench::FifoFloor>(shuffled, flows, burst, wakes);
  else if (impl == "flow-floor")
    run<ufq::bench::FlowFloor>(shuffled, flows, burst, wakes);
  else {
    std::fprintf(stderr, "implementation %s: valid fast, fast-single, reference, heap, floor, flow-floor\n", impl.c_str());
    return 2;
  }
  return 0;
}
