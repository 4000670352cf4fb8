#include "pace/vmstat.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

namespace {

// The ksoftirqd threads' /proc/<pid>/stat paths, found once (they live as
// long as the machine).
const std::vector<std::string>& ksoftirqd_stat_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const std::string dir = std::string("/proc/") + e->d_name;
      std::FILE* f = std::fopen((dir + "/comm").c_str(), "re");
      if (!f) continue;
      char comm[64] = {};
      const bool ok = std::fgets(comm, sizeof(comm), f) != nullptr;
      std::fclose(f);
      if (ok && std::strncmp(comm, "ksoftirqd/", 10) == 0) out.push_back(dir + "/stat");
    }
    ::closedir(d);
    return out;
  }();
  return paths;
}

// utime + stime of the ksoftirqd threads, in ns (clock-tick resolution).
std::uint64_t ksoftirqd_cpu_ns() {
  static const long hz = ::sysconf(_SC_CLK_TCK);
  std::uint64_t ticks = 0;
  for (const std::string& path : ksoftirqd_stat_paths()) {
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;
    char buf[1024] = {};
    const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = 0;
    // Fields after the command name in parentheses: state is field 3,
    // utime field 14, stime field 15.
    const char* p = std::strrchr(buf, ')');
    if (!p) continue;
    p += 2;
    for (int field = 3; field < 14 && *p; ++field) {
      p = std::strchr(p, ' ');
      if (!p) break;
      ++p;
    }
    if (!p) continue;
    char* end = nullptr;
    const unsigned long long ut = std::strtoull(p, &end, 10);
    const unsigned long long st = std::strtoull(end, nullptr, 10);
    ticks += ut + st;
  }
  return hz > 0 ? ticks * (1'000'000'000ULL / static_cast<unsigned long long>(hz)) : 0;
}

// Sum over CPUs of one /proc/softirqs row ("NET_RX:  12  34").
std::uint64_t row_sum(const char* line) {
  const char* p = std::strchr(line, ':');
  if (!p) return 0;
  ++p;
  std::uint64_t sum = 0;
  for (;;) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p) break;
    sum += v;
    p = end;
  }
  return sum;
}

void read_softirqs(ProcSample& s) {
  std::FILE* f = std::fopen("/proc/softirqs", "re");
  if (!f) return;
  char line[4096];
  while (std::fgets(line, sizeof(line), f)) {
    const char* p = line;
    while (*p == ' ') ++p;
    if (std::strncmp(p, "NET_RX:", 7) == 0) s.net_rx = row_sum(p);
    if (std::strncmp(p, "NET_TX:", 7) == 0) s.net_tx = row_sum(p);
  }
  std::fclose(f);
}

}  // namespace

std::optional<ProcSample> read_proc_sample() {
  std::FILE* f = std::fopen("/proc/stat", "re");
  if (!f) return std::nullopt;
  ProcSample s;
  s.at = mono_now();
  s.process_cpu_ns = process_cpu_ns();
  char line[512];
  bool cpu = false, intr = false, ctxt = false;
  while (std::fgets(line, sizeof(line), f)) {
    if (!cpu && std::strncmp(line, "cpu ", 4) == 0) {
      unsigned long long v[8] = {};
      std::sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                  &v[4], &v[5], &v[6], &v[7]);
      s.user = v[0];
      s.nice = v[1];
      s.system = v[2];
      s.idle = v[3];
      s.iowait = v[4];
      s.irq = v[5];
      s.softirq = v[6];
      s.steal = v[7];
      cpu = true;
    } else if (!intr && std::strncmp(line, "intr ", 5) == 0) {
      unsigned long long v = 0;
      std::sscanf(line + 5, "%llu", &v);
      s.interrupts = v;
      intr = true;
      // The intr line is long: skip the rest of it.
      while (!std::strchr(line, '\n') && std::fgets(line, sizeof(line), f)) {
      }
    } else if (!ctxt && std::strncmp(line, "ctxt ", 5) == 0) {
      unsigned long long v = 0;
      std::sscanf(line + 5, "%llu", &v);
      s.ctxt = v;
      ctxt = true;
    }
  }
  std::fclose(f);
  if (!cpu || !intr || !ctxt) return std::nullopt;
  read_softirqs(s);
  s.ksoftirqd_ns = ksoftirqd_cpu_ns();
  return s;
}

ProcRates rates_between(const ProcSample& a, const ProcSample& b) {
  ProcRates r;
  r.seconds = static_cast<double>(b.at - a.at) / 1e9;
  if (r.seconds <= 0) return r;
  auto d = [](std::uint64_t x, std::uint64_t y) { return static_cast<double>(y >= x ? y - x : 0); };
  r.interrupts_per_s = d(a.interrupts, b.interrupts) / r.seconds;
  r.context_switches_per_s = d(a.ctxt, b.ctxt) / r.seconds;
  const double user = d(a.user + a.nice, b.user + b.nice);
  const double sys = d(a.system + a.irq + a.softirq, b.system + b.irq + b.softirq);
  const double idle = d(a.idle + a.iowait, b.idle + b.iowait);
  const double total = user + sys + idle + d(a.steal, b.steal);
  if (total > 0) {
    r.user_pct = 100.0 * user / total;
    r.system_pct = 100.0 * sys / total;
    r.idle_pct = 100.0 * idle / total;
    r.softirq_pct = 100.0 * d(a.softirq, b.softirq) / total;
  }
  r.net_rx_per_s = d(a.net_rx, b.net_rx) / r.seconds;
  r.net_tx_per_s = d(a.net_tx, b.net_tx) / r.seconds;
  r.ksoftirqd_cpu_pct = 100.0 * d(a.ksoftirqd_ns, b.ksoftirqd_ns) / 1e9 / r.seconds;
  r.process_cpu_pct = 100.0 * d(a.process_cpu_ns, b.process_cpu_ns) / 1e9 / r.seconds;
  return r;
}

}  // namespace ufq::rt
