#include "pace/vmstat.hpp"

#include <cstdio>
#include <cstring>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

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
  }
  r.process_cpu_pct = 100.0 * d(a.process_cpu_ns, b.process_cpu_ns) / 1e9 / r.seconds;
  return r;
}

}  // namespace ufq::rt
