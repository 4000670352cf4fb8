#include "command.hpp"

#include <exception>
#include <iostream>

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

}  // namespace ufq::cli
