// `ufq run`: run an unmodified, dynamically linked program with fq pacing its
// UDP sockets in user space (libufq_preload.so, run/; docs/run.md).
//
//   ufq run [--stats FILE] [--stats-signal SIG] [--drain T] [--nice N] [--quiet]
//           [[fq] FQ OPTIONS...] -- PROGRAM [ARGS...]
//
// The fq options are tc's (checked here, before exec, with the tc parser's
// message naming the value and the valid range). The configuration reaches
// the library through UFQ_RUN_* environment variables; the library is
// appended to LD_PRELOAD and the program replaces this process (exec), so
// its pid, signals and exit status are its own.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "ufq/tc/fq_options.hpp"

extern char** environ;

namespace ufq::cli {
namespace {

struct RunArgs {
  std::string stats;
  std::string stats_signal;
  std::string drain = "2s";
  bool quiet = false;
  int nice = 0;
  std::vector<std::string> never;
};

// The preload library: UFQ_PRELOAD, else next to an installed ufq
// (<prefix>/lib/ufq/), else the build tree's.
std::string find_library(std::string& tried) {
  if (const char* p = std::getenv("UFQ_PRELOAD"); p && *p) {
    tried = p;
    return ::access(p, R_OK) == 0 ? p : "";
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
#ifdef UFQ_PRELOAD_INSTALL_DIR
    for (const char* rel : {UFQ_PRELOAD_INSTALL_DIR "/libufq_preload.so", "../lib/ufq/libufq_preload.so"}) {
#else
    for (const char* rel : {"../lib/ufq/libufq_preload.so"}) {
#endif
      const auto p = (exe.parent_path() / rel).lexically_normal();
      tried += (tried.empty() ? "" : ", ") + p.string();
      if (::access(p.c_str(), R_OK) == 0) return p.string();
    }
  }
#ifdef UFQ_PRELOAD_BUILD_PATH
  tried += std::string(tried.empty() ? "" : ", ") + UFQ_PRELOAD_BUILD_PATH;
  if (::access(UFQ_PRELOAD_BUILD_PATH, R_OK) == 0) return UFQ_PRELOAD_BUILD_PATH;
#endif
  return "";
}

// PROGRAM as execvp will find it (empty when not found).
std::string resolve_program(const std::string& prog) {
  if (prog.find('/') != std::string::npos) return prog;
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split_list(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + prog;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// An ELF executable without PT_INTERP is statically linked: no dynamic
// loader, so LD_PRELOAD does nothing. False for scripts and unreadable files.
bool is_static_elf(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr eh{};
  bool is_static = false;
  if (::pread(fd, &eh, sizeof(eh), 0) == static_cast<ssize_t>(sizeof(eh)) &&
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64) {
    is_static = true;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph{};
      if (::pread(fd, &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * eh.e_phentsize)) !=
          static_cast<ssize_t>(sizeof(ph)))
        break;
      if (ph.p_type == PT_INTERP) {
        is_static = false;
        break;
      }
    }
  }
  ::close(fd);
  return is_static;
}

std::optional<int> parse_signal(std::string word) {
  if (word.empty()) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(word.c_str(), &end, 10);
  if (*end == '\0') return v >= 1 && v <= 64 ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
  if (word.rfind("SIG", 0) == 0) word = word.substr(3);
  static const std::pair<const char*, int> names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},
                                                      {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"TERM", SIGTERM},
                                                      {"WINCH", SIGWINCH}, {"PWR", SIGPWR}};
  for (const auto& [n, s] : names)
    if (word == n) return s;
  return std::nullopt;
}

int run(const RunArgs& a, CLI::App& sub) {
  std::vector<std::string> words = sub.remaining();
  const auto dash = std::find(words.begin(), words.end(), "--");
  std::vector<std::string> fq_words(words.begin(), dash);
  std::vector<std::string> program(dash == words.end() ? dash : dash + 1, words.end());
  if (program.empty())
    return fail("expected `-- PROGRAM [ARGS...]` after the options (e.g. ufq run maxrate 10mbit -- iperf3 -c host -u)");
  if (!fq_words.empty() && fq_words[0] == "fq") fq_words.erase(fq_words.begin());

  std::vector<std::string> notes;
  tc::ParseOptions popt;
  popt.notes = &notes;
  const auto cfg = tc::parse_fq_options(fq_words, FqConfig{}, popt);
  if (!cfg) return fail(cfg.error().message);
  for (const auto& n : notes) note(n);

  const auto drain = parse_time_arg(a.drain, 1e9);
  if (!drain || *drain > 3600 * kNsecPerSec)
    return fail("--drain: \"" + a.drain + "\" is not a time in 0..1h (e.g. 2s, 500ms, 0)");
  int stats_signal = 0;
  if (!a.stats_signal.empty()) {
    const auto s = parse_signal(a.stats_signal);
    if (!s || *s == SIGKILL || *s == SIGSTOP)
      return fail("--stats-signal: \"" + a.stats_signal +
                  "\" is not a signal that can be caught (USR1, USR2, HUP, WINCH, ... or a number 1..64)");
    stats_signal = *s;
  }
  std::string stats_path;
  if (!a.stats.empty()) {
    std::error_code ec;
    stats_path = std::filesystem::absolute(a.stats, ec).string();  // the program may chdir
    const int fd = ::open(stats_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail("--stats " + a.stats + ": " + std::strerror(errno));
    ::close(fd);
  }

  std::string tried;
  const std::string lib = find_library(tried);
  if (lib.empty())
    return fail("the preload library libufq_preload.so was not found (looked at " + tried +
                "); set UFQ_PRELOAD to its path");
  const std::string path = resolve_program(program[0]);
  if (path.empty()) {
    std::fprintf(stderr, "ufq: %s: command not found\n", program[0].c_str());
    return 127;
  }
  if (is_static_elf(path))
    note(program[0] + " is statically linked: its sockets cannot be intercepted and nothing will be paced");

  // The environment of the program.
  const std::string canon = tc::join_words(tc::fq_options_args(*cfg));
  std::string preload = lib;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload = std::string(old) + ":" + lib;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::setenv("UFQ_RUN_FQ", canon.c_str(), 1);
  if (!stats_path.empty()) ::setenv("UFQ_RUN_STATS", stats_path.c_str(), 1); else ::unsetenv("UFQ_RUN_STATS");
  if (stats_signal) ::setenv("UFQ_RUN_STATS_SIGNAL", std::to_string(stats_signal).c_str(), 1);
  else ::unsetenv("UFQ_RUN_STATS_SIGNAL");
  ::setenv("UFQ_RUN_DRAIN", std::to_string(*drain).c_str(), 1);
  ::setenv("UFQ_RUN_QUIET", a.quiet ? "1" : "0", 1);
  ::setenv("UFQ_RUN_NICE", std::to_string(a.nice).c_str(), 1);

  std::vector<char*> argv;
  for (auto& w : program) argv.push_back(w.data());
  argv.push_back(nullptr);
  ::execv(path.c_str(), argv.data());
  const int err = errno;
  std::fprintf(stderr, "ufq: %s: %s\n", path.c_str(), std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

}  // namespace

void add_run_command(Commands& commands) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* sub = commands.add("run", "Run an unmodified program with fq pacing its UDP sockets in user space",
                               [a](CLI::App& self) { return run(*a, self); });
  sub->footer(
      "Usage: ufq run [OPTIONS] [[fq] FQ OPTIONS...] -- PROGRAM [ARGS...]\n"
      "Runs PROGRAM (dynamically linked) with libufq_preload.so: the datagrams of its IPv4/IPv6\n"
      "UDP sockets are paced by one fq per process, with SO_MAX_PACING_RATE, SO_TXTIME/SCM_TXTIME,\n"
      "SO_PRIORITY, ECN and UDP_SEGMENT as the kernel's fq honours them. A full flow or fq blocks a\n"
      "blocking socket and gives EAGAIN to a non-blocking one. At exit (and on --stats-signal) a\n"
      "`tc -s qdisc show` block for the process's fq goes to stderr. The FQ OPTIONS are tc-fq(8)'s:\n  fq " +
      std::string(tc::fq_usage()));
  sub->prefix_command();
  // CLI11 2.1 hands `--` to the parent (an error) when the subcommand has no
  // positional left; this one never takes a word (its check refuses all), so
  // `--` and everything after it land in remaining() with the fq words.
  sub->validate_positionals();
  sub->add_option("separator", a->never)
      ->check(CLI::Validator([](std::string&) { return std::string("never"); }, ""))
      ->group("");
  sub->add_option("--stats", a->stats, "append one JSON line per report (each process, at exit and on the signal) to FILE");
  sub->add_option("--stats-signal", a->stats_signal, "signal that prints a report while running (USR1, USR2, ... or a number)");
  sub->add_option("--drain", a->drain, "longest wait for queued datagrams at exit and before exec (bare number: seconds)")
      ->capture_default_str();
  sub->add_flag("-q,--quiet", a->quiet, "no report on stderr at exit");
  sub->add_option("--nice", a->nice, "nice value of the pacer thread (-20..19; <0 needs root)")
      ->check(integer_in(-20, 19))
      ->capture_default_str();
}

}  // namespace ufq::cli
