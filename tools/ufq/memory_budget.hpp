// How much memory a run may plan to use. Subcommands estimate what a plan
// needs before they allocate anything and refuse one that would not fit, so
// an oversized request ends with a message instead of an out-of-memory kill.
#pragma once

#include <cstdint>
#include <string>

namespace ufq::cli {

// 3/4 of the smallest of physical memory, `ulimit -v` (RLIMIT_AS) and
// RLIMIT_DATA: the rest is headroom for the estimates' error, the program
// itself and the rest of the machine.
std::uint64_t memory_budget_bytes();

// "1.5 GiB", "300 MiB": for messages.
std::string format_bytes(double bytes);

// Refusal text when `needed` exceeds the budget, naming `what` (the options
// that drive the estimate) and what to do; empty when it fits.
std::string check_memory(double needed, const std::string& what, const std::string& advice);

}  // namespace ufq::cli
