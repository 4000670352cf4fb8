// Differential fuzzing of the two schedulers: the input's bytes choose a
// configuration and then every operation (tests/core/differential.hpp); after
// each one the reference FqScheduler and FastFqScheduler must agree on the
// packet returned, the verdict, every counter, the watchdog and the flows, and
// offered = dequeued + drops + purged + qlen must hold.
#include <cstddef>
#include <cstdint>
#include <string>

#include "differential.hpp"
#include "fuzz_check.hpp"

namespace {

class Bytes : public ufq::diff::Source {
 public:
  Bytes(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint64_t next(std::uint64_t n) override {
    std::uint64_t v = 0;
    for (int i = 0; i < 4 && pos_ < n_; ++i) v = (v << 8) | d_[pos_++];
    return n ? v % n : 0;
  }
  bool done() const override { return pos_ >= n_; }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t pos_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  ufq::FqConfig cfg;
  const std::uint8_t a = data[0], b = data[1];
  cfg.compat = a & 1 ? ufq::Compat::linux_5_7 : ufq::Compat::latest;
  cfg.timer_slack_ns = a & 2 ? 10'000 : 0;
  if (a & 4) { cfg.limit = 40; cfg.flow_limit = 6; }
  if (a & 8) cfg.ce_threshold_us = 20;
  if (a & 16) { cfg.horizon_drop = false; cfg.horizon_us = 1'000'000; }
  if (a & 32) { cfg.buckets_log = 1; cfg.orphan_mask = 63; }
  if (a & 64) cfg.max_flows = 12;
  if (a & 128) cfg.maxrate = 50'000'000;
  if (b & 1) cfg.pacing = false;
  if ((b & 2) && cfg.compat == ufq::Compat::latest) {
    cfg.max_offload_horizon_us = 1000;
    cfg.offload_horizon_us = 200;
  }
  if (b & 4) cfg.quantum = 600;
  if (ufq::validate(cfg)) return 0;
  Bytes src(data + 2, size - 2);
  ufq::diff::Rig rig(cfg, src, [](const std::string& what) { ufq::fuzz::broken("fast == reference", what); },
                     16, 512);
  rig.run(100'000);
  return 0;
}
