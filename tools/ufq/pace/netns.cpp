#include "pace/netns.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <vector>

extern char** environ;

namespace ufq::rt {
namespace {

// Runs `ip args...` without a shell; returns the exit status (-1: not run).
int run_ip(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string ip = "ip";
  argv.push_back(ip.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "ip", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void must(const std::vector<std::string>& args) {
  if (run_ip(args) != 0) {
    std::string cmd = "ip";
    for (const auto& a : args) cmd += " " + a;
    throw std::runtime_error("netns setup failed: `" + cmd + "` (needs root and iproute2)");
  }
}

}  // namespace

NetnsPair::NetnsPair() {
  const auto pid = static_cast<unsigned>(::getpid());
  const std::string tag = std::to_string(pid);
  ns_a_ = "ufq" + tag + "a";
  ns_b_ = "ufq" + tag + "b";
  dev_a_ = "ufqv" + tag + "a";
  dev_b_ = "ufqv" + tag + "b";
  const unsigned k = pid % 250 + 1;
  const std::string net = "10.213." + std::to_string(k) + ".";
  ::inet_pton(AF_INET, (net + "1").c_str(), &addr_a_);
  ::inet_pton(AF_INET, (net + "2").c_str(), &addr_b_);
  try {
    must({"netns", "add", ns_a_});
    must({"netns", "add", ns_b_});
    must({"link", "add", dev_a_, "netns", ns_a_, "type", "veth", "peer", "name", dev_b_, "netns",
          ns_b_});
    must({"-n", ns_a_, "addr", "add", net + "1/30", "dev", dev_a_});
    must({"-n", ns_b_, "addr", "add", net + "2/30", "dev", dev_b_});
    must({"-n", ns_a_, "link", "set", dev_a_, "up"});
    must({"-n", ns_b_, "link", "set", dev_b_, "up"});
    must({"-n", ns_a_, "link", "set", "lo", "up"});
    must({"-n", ns_b_, "link", "set", "lo", "up"});
    fd_a_ = ::open(("/var/run/netns/" + ns_a_).c_str(), O_RDONLY | O_CLOEXEC);
    fd_b_ = ::open(("/var/run/netns/" + ns_b_).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_a_ < 0 || fd_b_ < 0) throw std::runtime_error("cannot open /var/run/netns/" + ns_a_);
  } catch (...) {
    teardown();
    throw;
  }
}

NetnsPair::~NetnsPair() { teardown(); }

void NetnsPair::teardown() {
  if (fd_a_ >= 0) ::close(fd_a_);
  if (fd_b_ >= 0) ::close(fd_b_);
  fd_a_ = fd_b_ = -1;
  if (!ns_a_.empty()) run_ip({"netns", "del", ns_a_});
  if (!ns_b_.empty()) run_ip({"netns", "del", ns_b_});
}

void NetnsPair::in_ns(int fd, const std::function<void()>& fn) {
  const int self = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (self < 0) throw std::system_error(errno, std::generic_category(), "open own netns");
  if (::setns(fd, CLONE_NEWNET) != 0) {
    const int e = errno;
    ::close(self);
    throw std::system_error(e, std::generic_category(), "setns");
  }
  try {
    fn();
  } catch (...) {
    ::setns(self, CLONE_NEWNET);
    ::close(self);
    throw;
  }
  ::setns(self, CLONE_NEWNET);
  ::close(self);
}

}  // namespace ufq::rt
