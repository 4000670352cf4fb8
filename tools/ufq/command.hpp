// How `ufq` subcommands plug into the executable. Each subcommand file
// defines `void ufq::cli::add_<name>_command(Commands&)`, which declares its
// CLI11 options and the action to run; main.cpp lists the names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "ufq/time.hpp"

namespace ufq::cli {

inline constexpr int kExitOk = 0;
// Any failure: bad command line, refused configuration, unreadable input.
// The message goes to stderr and nothing is written to stdout.
inline constexpr int kExitError = 2;
// The run finished but broke one of its own invariants (e.g. the pacer's
// packet accounting did not balance): the output is printed, and is suspect.
inline constexpr int kExitInvariant = 1;

// The work of a selected subcommand; returns the exit status. `sub` is the
// subcommand's CLI11 app (for remaining() words and option counts).
using Action = std::function<int(CLI::App& sub)>;

class Commands {
 public:
  explicit Commands(CLI::App& app) : app_(app) {}

  // Adds a subcommand; `action` runs when it is the one selected.
  CLI::App* add(const std::string& name, const std::string& description, Action action);

  // Parses the command line and runs the selected subcommand. CLI11 errors
  // and exceptions escaping an action become kExitError with a message.
  int run(int argc, char** argv);

 private:
  CLI::App& app_;
  std::vector<std::pair<CLI::App*, Action>> actions_;
};

// Splits "a,b,c" at `sep` (empty pieces kept, so callers can refuse them).
std::vector<std::string> split_list(const std::string& s, char sep);

// A time argument: a bare number counts in `bare_unit_ns` units (1e9: seconds);
// otherwise tc's time suffixes (s, ms, us, ns, ...). Nothing negative, nothing
// above 1e18 ns.
std::optional<Time> parse_time_arg(const std::string& word, double bare_unit_ns);

// CLI11 checks for numeric options, run on the word before CLI11 converts it
// (CLI11 alone takes "-1" for an unsigned option, saturates or wraps
// out-of-range words and reads "" as 0). The whole word must be a number in
// lo..hi; integers keep CLI11's notation (decimal, 0x hex, 0-prefixed octal).
// The message names the word and the range: --seed: "-1" is not an integer in 0..18446744073709551615.
CLI::Validator integer_in(std::int64_t lo, std::uint64_t hi);
CLI::Validator number_in(double lo, double hi);

// Writes "ufq: <message>" to stderr and returns kExitError.
int fail(const std::string& message);

// Writes "ufq: note: <message>" to stderr.
void note(const std::string& message);

}  // namespace ufq::cli
