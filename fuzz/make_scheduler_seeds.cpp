// Writes the seed corpus of fuzz_scheduler_diff: small inputs, one per
// feature, each the shortest found (over PRNG seeds, 150 operations) whose run
// reaches that feature. Inputs are recorded choices (byte_source.hpp), so the
// fuzzer replays exactly the run that was measured here.
// Usage: fuzz_scheduler_seeds DIR   (regenerates fuzz/corpus/scheduler_diff)
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "differential.hpp"

namespace {

using Prng = ufq::diff::PrngSource;

struct Run {
  ufq::FqConfig cfg;
  ufq::FqStats st;
  std::size_t refused = 0, accepted = 0, wakes = 0;
};

struct Feature {
  const char* name;
  std::function<bool(const Run&)> reached;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  using ufq::Compat;
  const auto latest = [](const Run& r) { return r.cfg.compat == Compat::latest; };
  const std::vector<Feature> features = {
      {"latest", [=](const Run& r) { return latest(r) && r.st.dequeued > 20; }},
      {"linux57", [](const Run& r) { return r.cfg.compat == Compat::linux_5_7 && r.st.dequeued > 20; }},
      {"fastpath", [](const Run& r) { return r.st.fastpath_packets > 5; }},
      {"offload_horizon",
       [=](const Run& r) { return latest(r) && r.cfg.offload_horizon_us > 0 && r.st.throttled > 0; }},
      {"horizon_drop", [](const Run& r) { return r.st.horizon_drops > 0; }},
      {"horizon_cap", [](const Run& r) { return r.st.horizon_caps > 0; }},
      {"ce_mark", [](const Run& r) { return r.st.ce_mark > 0; }},
      {"maxrate", [](const Run& r) { return r.cfg.maxrate != ufq::kUnlimitedRate && r.st.throttled > 3; }},
      {"nopacing_edt", [](const Run& r) { return !r.cfg.pacing && r.st.throttled > 0; }},
      {"throttled_many", [](const Run& r) { return r.st.throttled > 20; }},
      {"pkts_too_long", [](const Run& r) { return r.st.pkts_too_long > 0; }},
      {"gc", [](const Run& r) { return r.st.gc_flows > 0; }},
      {"allocation_errors", [](const Run& r) { return r.st.allocation_errors > 0; }},
      {"flow_limit", [](const Run& r) { return r.st.flows_plimit > 0; }},
      {"band_limit", [=](const Run& r) { return latest(r) && r.st.drops > r.st.flows_plimit + r.st.horizon_drops; }},
      {"global_limit_57",
       [](const Run& r) { return r.cfg.compat == Compat::linux_5_7 && r.st.drops > r.st.flows_plimit; }},
      {"highprio_57", [](const Run& r) { return r.st.highprio_packets > 0; }},
      {"trimmed", [](const Run& r) { return r.st.trimmed > 0; }},
      {"change_refused", [](const Run& r) { return r.refused > 0; }},
      {"change_accepted", [](const Run& r) { return r.accepted > 1; }},
      {"reset", [](const Run& r) { return r.st.purged > 0; }},
      {"watchdog_window", [](const Run& r) { return r.wakes > 1; }},
      {"slack_zero", [](const Run& r) { return r.cfg.timer_slack_ns == 0 && r.wakes > 0; }},
      {"tiny_table", [](const Run& r) { return r.cfg.buckets_log <= 2 && r.st.dequeued > 20; }},
      {"weights",
       [=](const Run& r) { return latest(r) && r.cfg.weights != ufq::FqConfig{}.weights && r.st.dequeued > 20; }},
  };
  // Shortest first, then by content: deterministic.
  const auto shorter = [](const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  };
  std::map<std::string, std::set<std::vector<std::uint8_t>, decltype(shorter)>> candidates;
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    Prng prng(seed);
    ufq::fuzz::ByteRecorder rec(prng);
    Run r;
    r.cfg = ufq::diff::random_config(rec);
    bool failed = false;
    ufq::diff::Rig rig(
        r.cfg, rec,
        [&](const std::string& what) {
          std::fprintf(stderr, "seed %llu: %s\n", static_cast<unsigned long long>(seed), what.c_str());
          failed = true;
        },
        16, 512);
    rig.run(150);
    if (failed) return 1;
    r.st = rig.last_stats();
    r.refused = rig.refused_changes();
    r.accepted = rig.accepted_changes();
    r.wakes = rig.window_wakes();
    for (const Feature& f : features) {
      if (!f.reached(r)) continue;
      auto& c = candidates[f.name];  // the shortest few
      c.insert(rec.bytes());
      if (c.size() > 32) c.erase(std::prev(c.end()));
    }
  }
  // One distinct input per feature: its shortest not already taken.
  std::set<std::vector<std::uint8_t>> taken;
  for (const Feature& f : features) {
    const auto& c = candidates[f.name];
    const auto pick = std::find_if(c.begin(), c.end(), [&](const auto& b) { return !taken.count(b); });
    if (pick == c.end()) {
      std::fprintf(stderr, "no seed reaches %s\n", f.name);
      continue;
    }
    taken.insert(*pick);
    std::ofstream(std::string(argv[1]) + "/" + f.name, std::ios::binary)
        .write(reinterpret_cast<const char*>(pick->data()), static_cast<std::streamsize>(pick->size()));
    std::printf("%-18s %zu bytes\n", f.name, pick->size());
  }
  return 0;
}
