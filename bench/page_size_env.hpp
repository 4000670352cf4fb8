// UFQ_HUGE_PAGES=0 in the environment: the fast scheduler's big arrays keep
// 4 KiB pages (src/core/huge_pages.hpp: the same alignment and rounding, no
// MADV_HUGEPAGE), so that bench/huge_pages_ab.sh can time the two page sizes
// in alternating processes of the same binary. Read once, before main().
// print_smaps_rollup(): the process's resident and AnonHugePages bytes
// (/proc/self/smaps_rollup) to stderr, the proof that huge pages are used
// (bench_probe_burst with UFQ_PROBE_SMAPS=1, after its run).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "huge_pages.hpp"

namespace ufq::bench {

inline void print_smaps_rollup() {
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return;
  char line[256];
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "Rss:", 4) == 0 || std::strncmp(line, "AnonHugePages:", 14) == 0)
      std::fprintf(stderr, "smaps_rollup %s", line);
  std::fclose(f);
}

inline const bool kHugePagesFromEnv = [] {
  const char* v = std::getenv("UFQ_HUGE_PAGES");
  const bool on = !(v && std::strcmp(v, "0") == 0);
  detail::set_huge_pages_enabled(on);
  return on;
}();

}  // namespace ufq::bench
