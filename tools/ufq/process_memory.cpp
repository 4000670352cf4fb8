#include "process_memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ufq::cli {

namespace {

// A "Name:   123 kB" line of /proc/self/status, in KiB; 0 if absent.
std::uint64_t status_kb(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  const std::size_t n = std::strlen(name);
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, name, n) == 0 && line[n] == ':' && std::sscanf(line + n + 1, "%llu", &kb) == 1) break;
  std::fclose(f);
  return kb;
}

}  // namespace

std::uint64_t current_rss_kb() { return status_kb("VmRSS"); }

std::uint64_t peak_rss_kb() {
  rusage ru{};
  const std::uint64_t maxrss = getrusage(RUSAGE_SELF, &ru) == 0 ? static_cast<std::uint64_t>(ru.ru_maxrss) : 0;
  return std::max(maxrss, status_kb("VmHWM"));  // KiB on Linux
}

}  // namespace ufq::cli
