// Adversarial flow keys (Google Benchmark): ns per packet when the flow keys
// are chosen to collide in the flow table, against random keys, for the fast
// scheduler (keyed hash, per-instance random key) and the reference (the
// kernel's unkeyed bucket hash, for context). The workloads are
// bench_scheduler.cpp's paced (slack 10 us) and unpaced ones; only the keys
// differ. bench/run.sh runs it with interleaved repetitions and
// bench/summarize.py turns the medians into ratios against the random keys.
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adversarial_keys.hpp"
#include "bench_config.hpp"
#include "ufq/scheduler.hpp"
#include "ufq/reference/scheduler.hpp"

namespace {

using ufq::bench::KeyFamily;
using ufq::bench::KeySource;

// Keys are generated (and checked distinct) once per family and size.
const std::vector<std::uint64_t>& keys_for(const KeyFamily& fam, std::size_t flows) {
  static std::map<std::pair<std::string_view, std::size_t>, std::vector<std::uint64_t>> cache;
  auto [it, fresh] = cache.try_emplace({fam.name, flows});
  if (fresh) it->second = ufq::bench::family_keys(fam, flows);
  return it->second;
}

// The packets of flow i: owned by an owner with id keys[i] (key = id << 1), or
// owner-less with hash keys[i] and an all-ones orphan_mask (key = hash << 1 | 1).
// Each packet gets a fresh owner object (one per packet slot), so the owner's
// remembered flow (FlowOwner::flow_hint_) never applies and every lookup goes
// through the flow table: this benchmark is about the table. (With long-lived
// owners, as sockets are, lookups skip the table altogether.)
struct Flows {
  std::vector<std::uint64_t> ids;
  std::vector<std::uint32_t> hashes;
  std::vector<ufq::FlowOwner> slot_owners;  // one per packet slot

  Flows(const KeyFamily& fam, const std::vector<std::uint64_t>& keys, std::size_t slots) {
    if (fam.source == KeySource::owner_id) {
      ids = keys;
      slot_owners.resize(slots);
    } else {
      hashes.assign(keys.begin(), keys.end());
    }
  }
  void stamp(ufq::Packet& p, std::size_t i, std::size_t slot) {
    if (ids.empty()) {
      p.hash = hashes[i];
    } else {
      slot_owners[slot] = ufq::FlowOwner{.id = ids[i]};
      p.owner = &slot_owners[slot];
    }
  }
};

ufq::FqConfig config_for(const KeyFamily& fam, std::size_t flows, std::uint32_t slack) {
  ufq::FqConfig cfg = ufq::bench::config_for(flows, slack);
  if (fam.source == KeySource::packet_hash) cfg.orphan_mask = 0xFFFFFFFF;
  return cfg;
}

// Fixed iterations, so the timed window is the same packets for every family:
// at least one packet per flow (a full round over the table), at least 1M.
std::int64_t iterations_for(std::size_t flows) {
  return static_cast<std::int64_t>(std::max<std::size_t>(flows, 1'000'000));
}

// Every key made its own flow; the unpaced warm-up's first packets (up to 8)
// take the fast path to the internal queue and make no flow.
template <class S>
bool every_flow_exists(const S& fq, std::size_t flows, ufq::Time now, benchmark::State& state) {
  const ufq::FqStats st = fq.stats(now);
  if (st.flows + st.fastpath_packets >= flows && st.flows <= flows) return true;
  state.SkipWithError(("expected " + std::to_string(flows) + " flows, the scheduler has " + std::to_string(st.flows) +
                       " (" + std::to_string(st.fastpath_packets) + " fast-path packets)")
                          .c_str());
  return false;
}

// bench_scheduler.cpp's BM_Paced (slack 10 us): flow i's packets leave every
// `flows` microseconds, every flow throttled between its packets; warmed up to
// steady state first.
template <class S>
void BM_Paced(benchmark::State& state, const KeyFamily* fam, std::size_t flows) {
  const auto& keys = keys_for(*fam, flows);
  if (keys.empty()) {
    state.SkipWithError("family keys are not distinct");
    return;
  }
  S fq(config_for(*fam, flows, 10000));
  std::vector<ufq::Packet> ring(flows * 2 + 16);
  Flows fl(*fam, keys, ring.size());
  std::size_t next = 0;
  std::size_t f = 0;
  ufq::Time now = 1'000'000'000;
  const ufq::Time gap = flows * 1000;
  auto one = [&] {
    const std::size_t slot = next;
    ufq::Packet& p = ring[slot];
    next = next + 1 == ring.size() ? 0 : next + 1;
    ufq::bench::fill(p, 1514, nullptr, now + gap);
    fl.stamp(p, f, slot);
    f = f + 1 == flows ? 0 : f + 1;
    benchmark::DoNotOptimize(fq.enqueue(p, now));
    now += 1000;
    while (ufq::Packet* out = fq.dequeue(now)) benchmark::DoNotOptimize(out);
  };
  for (std::size_t i = 0; i < 2 * flows + 1000; ++i) one();
  if (!every_flow_exists(fq, flows, now, state)) return;
  state.SetLabel(std::string(fam->what));
  for (auto _ : state) one();
  state.SetItemsProcessed(state.iterations());
}

// bench_scheduler.cpp's BM_Unpaced: every flow backlogged with one packet, DRR alone.
template <class S>
void BM_Unpaced(benchmark::State& state, const KeyFamily* fam, std::size_t flows) {
  const auto& keys = keys_for(*fam, flows);
  if (keys.empty()) {
    state.SkipWithError("family keys are not distinct");
    return;
  }
  S fq(config_for(*fam, flows, 10000));
  std::vector<ufq::Packet> ring(flows * 2 + 2);
  Flows fl(*fam, keys, ring.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < flows; ++i) {
    ring[next] = ufq::Packet{.len = 1514};
    fl.stamp(ring[next], i, next);
    fq.enqueue(ring[next++], 0);
  }
  if (!every_flow_exists(fq, flows, 0, state)) return;
  state.SetLabel(std::string(fam->what));
  std::size_t f = 0;
  for (auto _ : state) {
    const std::size_t slot = next;
    ufq::Packet& p = ring[slot];
    next = next + 1 == ring.size() ? 0 : next + 1;
    p = ufq::Packet{.len = 1514};
    fl.stamp(p, f, slot);
    f = f + 1 == flows ? 0 : f + 1;
    benchmark::DoNotOptimize(fq.enqueue(p, 0));
    benchmark::DoNotOptimize(fq.dequeue(0));
  }
  state.SetItemsProcessed(state.iterations());
}

// Names: BM_Adversarial<Impl>/<workload>/<family>/<flows>.
template <class S>
void register_impl(const char* impl) {
  for (const char* workload : {"paced", "unpaced"})
    for (const KeyFamily& fam : ufq::bench::kKeyFamilies)
      for (std::size_t flows : {100'000, 1'000'000}) {
        const std::string name = std::string("BM_Adversarial<") + impl + ">/" + workload + "/" +
                                 std::string(fam.name) + "/" + std::to_string(flows);
        auto* b = std::string_view(workload) == "paced"
                      ? benchmark::RegisterBenchmark(name.c_str(), BM_Paced<S>, &fam, flows)
                      : benchmark::RegisterBenchmark(name.c_str(), BM_Unpaced<S>, &fam, flows);
        b->Iterations(iterations_for(flows))->Unit(benchmark::kNanosecond);
      }
}

}  // namespace

int main(int argc, char** argv) {
  register_impl<ufq::reference::FqScheduler>("Reference");
  register_impl<ufq::FqScheduler>("Fast");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
