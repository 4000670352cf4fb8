#include "command.hpp"

#include <cmath>
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
    return fail(std::string(e.what()) + " (see ufq --help)");
  }
  for (auto& [sub, action] : actions_) {
    if (!sub->parsed()) continue;
    try {
      return action(*sub);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  return fail("no subcommand given (see ufq --help)");
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
