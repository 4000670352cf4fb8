// Differential and invariant fuzzing of the two schedulers. The input's bytes
// are the choices of tests/core/differential.hpp: first a configuration over
// the whole valid range (random_config.hpp), then every operation (enqueue of
// any packet, dequeues at any non-decreasing time, watchdog wake-ups inside
// and outside [soft, hard], owner rate/kind/generation changes, change() to
// valid and to refused configurations, reset). After each one the reference
// reference::FqScheduler and FqScheduler must agree on the packet returned, the
// verdict, every counter, the watchdog and the flows, and the reference must
// satisfy the invariants of tests/core/invariants.hpp (shadow model of what is
// queued: counters, due times, per-flow order, flow counts, watchdog).
// Enqueues and dequeues come one at a time and in bursts (the fast
// scheduler's enqueue_burst and dequeue_burst against the reference's single
// calls), the bursts prefetching at any flow count (src/core/burst.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "burst.hpp"
#include "byte_source.hpp"
#include "differential.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ufq::detail::set_burst_prefetch_min_flows(0);
  ufq::fuzz::ByteSource src(data, size);
  const ufq::FqConfig cfg = ufq::diff::random_config(src);
  if (auto err = ufq::validate(cfg)) ufq::fuzz::broken("random_config() is valid", err->what());
  ufq::diff::Rig rig(
      cfg, src, [](const std::string& what) { ufq::fuzz::broken("fast == reference, invariants", what); }, 16, 512);
  rig.run(100'000);
  return 0;
}
