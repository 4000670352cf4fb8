// The process's memory as the kernel counts it, for soak reports. Not
// deterministic, so callers print it only when asked.
#pragma once

#include <cstdint>

namespace ufq::cli {

// Resident set now (VmRSS of /proc/self/status), in KiB; 0 if unreadable.
std::uint64_t current_rss_kb();

// Highest resident set so far (getrusage's ru_maxrss or VmHWM, the larger), in KiB.
std::uint64_t peak_rss_kb();

}  // namespace ufq::cli
