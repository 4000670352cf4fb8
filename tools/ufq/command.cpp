#include "command.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "ufq/tc/units.hpp"

namespace ufq::cli {

CLI::App* Commands::add(const std::string& name, const std::string& description, Action action) {
  CLI::App* sub = app_.add_subcommand(name, description);
  actions_.emplace_back(sub, std::move(action));
  return sub;
}

int Commands::run(int argc, char** argv) {
  app_.require_subcommand(1);
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app_.exit(e);  // --help: usage on stdout, success
    // CLI11 only says "A subcommand is required" for `ufq bogus` or `ufq --bogus`.
    if (app_.get_subcommands().empty() && argc > 1) {
      const std::string word = argv[1];
      if (!word.empty() && word[0] == '-') return fail("unknown option \"" + word + "\" (see ufq --help)");
      std::string names;
      for (std::size_t i = 0; i < actions_.size(); ++i)
        names += (i == 0 ? "" : i + 1 == actions_.size() ? " or " : ", ") + actions_[i].first->get_name();
      return fail("unknown subcommand \"" + word + "\": expected " + names + " (see ufq --help)");
    }
    return fail(std::string(e.what()) + " (see ufq --help)");
  }
  for (auto& [sub, action] : actions_) {
    if (!sub->parsed()) continue;
    // No option takes an empty word; several would otherwise read "" as "not given" or 0.
    for (const CLI::Option* opt : sub->get_options())
      for (const std::string& value : opt->results())
        if (value.empty() && opt->get_type_size() != 0)
          return fail(opt->get_name() + " \"\": empty value (see ufq " + sub->get_name() + " --help)");
    try {
      return action(*sub);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  return fail("no subcommand given (see ufq --help)");
}

CLI::Validator integer_in(std::int64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& word) -> std::string {
        const std::string refusal = "\"" + word + "\" is not an integer in " + range;
        // strto*l skip leading blanks and take a sign; a word starting with
        // either is not a plain number.
        if (word.empty() || std::isspace(static_cast<unsigned char>(word[0])) || word[0] == '+') return refusal;
        char* end = nullptr;
        errno = 0;
        if (word[0] == '-') {
          const long long v = std::strtoll(word.c_str(), &end, 0);
          if (errno != 0 || *end != '\0' || v < lo) return refusal;
          return std::string();  // hi >= 0 > v
        }
        const unsigned long long v = std::strtoull(word.c_str(), &end, 0);
        if (errno != 0 || *end != '\0' || v > hi || (lo > 0 && v < static_cast<std::uint64_t>(lo))) return refusal;
        return std::string();
      },
      range);
}

CLI::Validator number_in(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g..%.17g", lo, hi);
  const std::string range = buf;
  return CLI::Validator(
      [lo, hi, range](std::string& word) -> std::string {
        char* end = nullptr;
        const double v = word.empty() ? NAN : std::strtod(word.c_str(), &end);
        if (word.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
          return "\"" + word + "\" is not a number in " + range;
        return std::string();
      },
      range);
}

int fail(const std::string& message) {
  std::cerr << "ufq: " << message << '\n';
  return kExitError;
}

void note(const std::string& message) { std::cerr << "ufq: note: " << message << '\n'; }

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<Time> parse_time_arg(const std::string& word, double bare_unit_ns) {
  if (word.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  if (end && *end == '\0') {
    if (!(v >= 0) || v * bare_unit_ns > 1e18) return std::nullopt;
    return static_cast<Time>(std::llround(v * bare_unit_ns));
  }
  const auto ns = tc::parse_time_value(word, tc::TimeUnit::ns);
  if (!ns || !(*ns >= 0) || *ns > 1e18) return std::nullopt;
  return static_cast<Time>(std::llround(*ns));
}

}  // namespace ufq::cli
