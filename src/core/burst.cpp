#include "burst.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace ufq::detail {

namespace {
std::atomic<std::size_t> g_prefetch_min_flows{4096};
}  // namespace

void check_burst_sizes(std::size_t packets, std::size_t verdicts) {
  if (verdicts < packets)
    throw std::invalid_argument("enqueue_burst: " + std::to_string(packets) + " packets but room for " +
                                std::to_string(verdicts) + " verdicts: valid at least " +
                                std::to_string(packets));
}

std::size_t burst_prefetch_min_flows() { return g_prefetch_min_flows.load(std::memory_order_relaxed); }
void set_burst_prefetch_min_flows(std::size_t flows) { g_prefetch_min_flows.store(flows, std::memory_order_relaxed); }

}  // namespace ufq::detail
