#include "burst.hpp"

#include <stdexcept>
#include <string>

namespace ufq::detail {

void check_burst_sizes(std::size_t packets, std::size_t verdicts) {
  if (verdicts < packets)
    throw std::invalid_argument("enqueue_burst: " + std::to_string(packets) + " packets but room for " +
                                std::to_string(verdicts) + " verdicts: valid at least " +
                                std::to_string(packets));
}

}  // namespace ufq::detail
