// Every installed simulator header (ufq/sim/), a short simulation, and the
// capture reader (libpcap): what a user of ufq::sim alone compiles and links.
#include "sim_headers.hpp"

#include <cstdio>
#include <stdexcept>

int main() {
  ufq::sim::SimConfig cfg;
  cfg.flows = 10;
  cfg.rate_pps = 10'000;
  cfg.duration = 10 * ufq::kNsecPerMsec;
  cfg.interval = 10 * ufq::kNsecPerMsec;
  const ufq::sim::SimResult r = ufq::sim::simulate(cfg);
  try {
    (void)ufq::sim::read_pcap("/nonexistent/capture.pcap");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("read_pcap refused: %s\n", e.what());
  }
  std::printf("sent %llu packets\n", static_cast<unsigned long long>(r.packets_sent));
  return r.packets_sent > 0 ? 0 : 1;
}
