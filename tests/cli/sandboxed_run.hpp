// Runs the built `ufq` in a child process fenced in for bad-input tests:
// a wall-clock limit (killed after it: a hang), an address-space limit
// (RLIMIT_AS, so a would-be out-of-memory is an error here instead of the
// machine's OOM killer; not under AddressSanitizer, whose shadow memory needs
// terabytes of address space: there the peak RSS from wait4 is checked
// instead), a small open-file limit, no core dumps, and a seccomp filter that
// kills the process on socket(), a namespace call, a new thread or a fork, so
// a run that starts working instead of refusing its input shows as SIGSYS.
#pragma once

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define UFQ_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UFQ_TEST_ASAN 1
#endif
#endif
#ifndef UFQ_TEST_ASAN
#define UFQ_TEST_ASAN 0
#endif

namespace ufq::testing {

struct SandboxLimits {
  std::chrono::seconds wall{20};
  std::uint64_t address_space = 2ULL << 30;  // RLIMIT_AS (not under ASan)
  rlim_t open_files = 1024;                  // RLIMIT_NOFILE
  bool seccomp = true;
};

struct SandboxResult {
  bool ran = false;        // fork and exec worked
  bool timed_out = false;  // killed after the wall-clock limit
  int exit_status = -1;    // when it exited
  int signal = 0;          // when a signal ended it (SIGSYS: the seccomp filter)
  long peak_rss_kb = 0;    // ru_maxrss
  std::string out, err;
};

// True when the address-space limit is applied (not under ASan).
inline constexpr bool kAddressSpaceLimited = !UFQ_TEST_ASAN;

namespace detail {

#if defined(__x86_64__)
inline constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
inline constexpr std::uint32_t kAuditArch = 0;  // no filter on other machines
#endif

// The filter. clone3 answers ENOSYS so that libc falls back to clone, whose
// flags a filter can read: threads (CLONE_THREAD), vfork and fork (no
// CLONE_VM) die; LeakSanitizer's CLONE_VM helper at exit lives.
inline std::vector<sock_filter> seccomp_program() {
  std::vector<sock_filter> p;
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  const auto kill_on = [&p](long nr) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  };
  kill_on(SYS_socket);
  kill_on(SYS_socketpair);
  kill_on(SYS_unshare);
  kill_on(SYS_setns);
#ifdef SYS_fork
  kill_on(SYS_fork);
#endif
#ifdef SYS_vfork
  kill_on(SYS_vfork);
#endif
#ifdef SYS_clone3
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
#endif
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));  // low half of the flags
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD | CLONE_VFORK | CLONE_NEWNET, 1, 0));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, 1, 0));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return p;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// In the child, between fork and exec: only system calls.
[[noreturn]] inline void child(const std::vector<char*>& argv, const std::string& out, const std::string& err,
                               const SandboxLimits& lim, const sock_fprog* filter) {
  const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int in = ::open("/dev/null", O_RDONLY);
  if (o < 0 || e < 0 || in < 0) ::_exit(126);
  ::dup2(in, 0);
  ::dup2(o, 1);
  ::dup2(e, 2);
  ::setpgid(0, 0);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  rlimit files{lim.open_files, lim.open_files};
  ::setrlimit(RLIMIT_NOFILE, &files);
  if (kAddressSpaceLimited) {
    rlimit as{lim.address_space, lim.address_space};
    ::setrlimit(RLIMIT_AS, &as);
  }
  if (filter) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter) != 0)
      ::_exit(125);
  }
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

}  // namespace detail

// Whether this kernel lets an unprivileged process install the filter (a
// container may forbid it): probed once in a child.
inline bool seccomp_available() {
  static const bool available = [] {
    if (detail::kAuditArch == 0) return false;
    auto program = detail::seccomp_program();
    sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0)
        ::_exit(3);
      ::_exit(0);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }();
  return available;
}

// Runs `binary args...` fenced in as described above and waits for it.
inline SandboxResult run_sandboxed(const std::string& binary, const std::vector<std::string>& args,
                                   const SandboxLimits& lim = {}) {
  SandboxResult r;
  static std::atomic<int> serial{0};
  const std::string base = "/tmp/ufq_badinput_" + std::to_string(::getpid()) + "_" + std::to_string(serial++);
  const std::string out = base + ".out", err = base + ".err";
  std::vector<std::string> words{binary};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  auto program = detail::seccomp_program();
  sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
  const bool fence = lim.seccomp && seccomp_available();

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) detail::child(argv, out, err, lim, fence ? &filter : nullptr);
  r.ran = true;
  int st = 0;
  rusage ru{};
  for (;;) {
    const pid_t done = ::wait4(pid, &st, WNOHANG, &ru);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > lim.wall) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::wait4(pid, &st, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(st)) r.exit_status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  r.peak_rss_kb = ru.ru_maxrss;
  r.out = detail::slurp(out);
  r.err = detail::slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace ufq::testing
