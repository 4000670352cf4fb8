#include "memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ufq::cli {

std::uint64_t memory_budget_bytes() {
  double limit = 0;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limit = static_cast<double>(pages) * static_cast<double>(page);
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
      const auto cur = static_cast<double>(r.rlim_cur);
      limit = limit > 0 ? std::min(limit, cur) : cur;
    }
  }
  if (!(limit > 0)) limit = 16.0 * (1ULL << 30);  // nothing known: assume a modest machine
  return static_cast<std::uint64_t>(limit * 0.75);
}

std::string format_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / (1024.0 * 1024));
  return buf;
}

std::string check_memory(double needed, const std::string& what, const std::string& advice) {
  const auto budget = static_cast<double>(memory_budget_bytes());
  if (needed <= budget) return {};
  return what + ": the run needs about " + format_bytes(needed) + " of memory, more than the " +
         format_bytes(budget) + " it may use (3/4 of the smaller of RAM and ulimit -v); " + advice;
}

}  // namespace ufq::cli
