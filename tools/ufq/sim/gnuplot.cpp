#include "sim/gnuplot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace ufq::sim {

std::string gnuplot_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

void run_gnuplot(const std::string& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) throw std::runtime_error("cannot start gnuplot: out of memory");
  // gnuplot's own output (warnings) must not mix with the tool's stdout.
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string program = "gnuplot", arg = script;
  std::vector<char*> argv = {program.data(), arg.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw std::runtime_error("cannot start gnuplot for " + dir + "/" + script + ": " + std::strerror(rc) +
                             (rc == ENOENT ? " (install gnuplot)" : ""));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waiting for gnuplot: ") + std::strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed on " + dir + "/" + script);
}

}  // namespace ufq::sim
