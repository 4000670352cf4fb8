// Runs the built `ufq` binary (its path in UFQ_BINARY) from a test and
// captures its exit status, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ufq::testing {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ufq_cli_" + std::to_string(::getpid()) + "_" + name;
}

// Runs the tool with `args` (shell words, already quoted as needed).
inline Result run_ufq(const std::string& args) {
  const std::string out = temp_path("out");
  const std::string err = temp_path("err");
  const std::string cmd = std::string("'") + UFQ_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace ufq::testing
