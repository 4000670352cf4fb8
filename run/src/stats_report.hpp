// The report of one process's fq: a `tc -s qdisc show` block (ufq's own tc
// printer) and the account of every datagram, on stderr; the same as one
// JSON line appended to the UFQ_RUN_STATS file (docs/run.md, "Statistics").
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "translate.hpp"
#include "ufq/config.hpp"
#include "ufq/rt/accounting.hpp"
#include "ufq/rt/egress.hpp"
#include "ufq/rt/pacer.hpp"
#include "ufq/stats.hpp"

namespace ufq::run {

struct Report {
  pid_t pid = 0, ppid = 0;
  std::string program;  // /proc/self/comm
  std::string why;      // "exit", "exec", "SIGTERM", "signal" (a live report)
  bool final = false;
  FqConfig cfg;
  FqStats fq;
  rt::PacerCounters pacer;
  rt::EgressStats egress;
  // final: every term; live: produced, sent, dropped, failed and in_flight.
  rt::PacketAccounting account;
  std::uint64_t in_flight = 0;
  // producer side
  std::uint64_t eagain = 0, timed_out = 0, interrupted = 0, waits = 0, large_payloads = 0, held_at_stop = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(PassReason::count)> passed{};
};

// The stderr block: "ufq run: pid N (prog) at exit:" then the tc block,
// then the account lines.
std::string report_text(const Report& r);
// One line of JSON (no trailing newline).
std::string report_json(const Report& r);

}  // namespace ufq::run
