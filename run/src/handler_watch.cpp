#include "handler_watch.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#include "real_calls.hpp"

namespace ufq::run {
namespace {

struct Installed {
  std::atomic<void*> handler{nullptr};  // the program's: sa_handler or sa_sigaction
  std::atomic<int> flags{0};            // the program's sa_flags
  std::atomic<bool> wrapped{false};
};
constexpr int kSignals = 65;
Installed g_installed[kSignals];

// Initial-exec TLS: no allocation on first use inside a handler.
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_interrupting = 0;

void trampoline(int sig, siginfo_t* info, void* uc) {
  const Installed& in = g_installed[sig];
  const int flags = in.flags.load(std::memory_order_acquire);
  void* h = in.handler.load(std::memory_order_acquire);
  if (!(flags & SA_RESTART)) ++t_interrupting;
  if (flags & SA_SIGINFO)
    reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h)(sig, info, uc);
  else
    reinterpret_cast<void (*)(int)>(h)(sig);
}

using RealSigaction = int (*)(int, const struct sigaction*, struct sigaction*);
RealSigaction real_sigaction() {
  static const RealSigaction f = reinterpret_cast<RealSigaction>(real().sigaction);
  return f;
}

}  // namespace

std::uint64_t interrupting_handlers() { return t_interrupting; }

int watched_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sig <= 0 || sig >= kSignals || sig == SIGKILL || sig == SIGSTOP) return real_sigaction()(sig, act, old);
  Installed& in = g_installed[sig];
  struct sigaction prev {};
  struct sigaction mine {};
  const struct sigaction* use = act;
  if (act) {
    const bool is_handler = (act->sa_flags & SA_SIGINFO)
                                ? act->sa_sigaction != nullptr
                                : (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN);
    if (is_handler) {
      mine = *act;
      mine.sa_flags |= SA_SIGINFO;
      mine.sa_sigaction = trampoline;
      use = &mine;
    }
  }
  const bool was_wrapped = in.wrapped.load(std::memory_order_acquire);
  void* was_handler = in.handler.load(std::memory_order_acquire);
  const int was_flags = in.flags.load(std::memory_order_acquire);
  if (act && use == &mine) {  // publish before the kernel can call the trampoline
    in.handler.store((act->sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(act->sa_sigaction)
                                                   : reinterpret_cast<void*>(act->sa_handler),
                     std::memory_order_release);
    in.flags.store(act->sa_flags, std::memory_order_release);
  }
  const int r = real_sigaction()(sig, use, &prev);
  if (r != 0) {
    const int e = errno;
    in.handler.store(was_handler, std::memory_order_release);
    in.flags.store(was_flags, std::memory_order_release);
    errno = e;
    return r;
  }
  if (act) in.wrapped.store(use == &mine, std::memory_order_release);
  if (old) {
    *old = prev;
    if (was_wrapped && prev.sa_sigaction == trampoline) {  // the program's own, as it set it
      old->sa_flags = was_flags;
      if (was_flags & SA_SIGINFO)
        old->sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(was_handler);
      else
        old->sa_handler = reinterpret_cast<void (*)(int)>(was_handler);
    }
  }
  return 0;
}

sighandler_t watched_signal(int sig, sighandler_t handler) {
  // glibc's signal(): BSD semantics, SA_RESTART.
  struct sigaction act {};
  act.sa_handler = handler;
  ::sigemptyset(&act.sa_mask);
  ::sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  struct sigaction old {};
  if (watched_sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // namespace ufq::run
