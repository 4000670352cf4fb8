#include "stop_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "process_pacer.hpp"
#include "real_calls.hpp"
#include "run_config.hpp"

namespace ufq::run {
namespace {

int g_sig_pipe[2] = {-1, -1};
std::atomic<bool> g_reporter{false};  // a reporter thread runs in this process
constexpr int kTermSignals[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<bool> g_term_handled[65];

void on_signal(int sig) {
  const int saved = errno;
  if (g_reporter.load(std::memory_order_acquire) && g_sig_pipe[1] >= 0) {
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const ssize_t n = real().write(g_sig_pipe[1], &b, 1);
  } else if (sig != run_config().stats_signal) {
    // No pacer here (a fork child that sent nothing): the default action.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  errno = saved;
}

void reporter_main() {
  for (;;) {
    unsigned char b = 0;
    const ssize_t n = ::read(g_sig_pipe[0], &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    const int sig = b;
    ProcessPacer* p = ProcessPacer::current();
    if (sig == run_config().stats_signal && !g_term_handled[sig].load()) {
      if (p) p->report_now();
      continue;
    }
    if (p) p->finish(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "signal");
    ::signal(sig, SIG_DFL);
    ::kill(::getpid(), sig);
    return;
  }
}

void make_sig_pipe() {
  if (g_sig_pipe[0] >= 0) {
    real().close(g_sig_pipe[0]);
    real().close(g_sig_pipe[1]);
  }
  if (::pipe2(g_sig_pipe, O_CLOEXEC) != 0) g_sig_pipe[0] = g_sig_pipe[1] = -1;
}

// With the pacer: the reporter thread, the stats signal, and drain-then-die
// for the termination signals whose action is still the default.
void start_reporter() {
  make_sig_pipe();
  if (g_sig_pipe[0] < 0) return;
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread(reporter_main).detach();
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  g_reporter.store(true, std::memory_order_release);
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : kTermSignals) {
    struct sigaction cur{};
    if (::sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO)) {
      g_term_handled[sig].store(true);
      ::sigaction(sig, &sa, nullptr);
    }
  }
  const int ss = run_config().stats_signal;
  if (ss > 0 && !g_term_handled[ss].load()) ::sigaction(ss, &sa, nullptr);
}

}  // namespace

void start_stop_signals() {
  if (!g_reporter.load()) start_reporter();
}

void stop_signals_after_fork() {
  g_reporter.store(false, std::memory_order_release);
  if (g_sig_pipe[0] >= 0) {
    real().close(g_sig_pipe[0]);
    real().close(g_sig_pipe[1]);
    g_sig_pipe[0] = g_sig_pipe[1] = -1;
  }
}

}  // namespace ufq::run
