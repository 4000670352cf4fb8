#include "pace/stop_signal.hpp"

#include <csignal>

namespace ufq::rt {
namespace {
std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};
struct sigaction g_old_int {}, g_old_term {};

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig, std::memory_order_relaxed);
  g_flag.store(true, std::memory_order_relaxed);
}
}  // namespace

StopSignal::StopSignal() {
  g_flag.store(false);
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignal::~StopSignal() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

std::atomic<bool>& StopSignal::flag() { return g_flag; }
int StopSignal::signal_number() { return g_signal.load(std::memory_order_relaxed); }

}  // namespace ufq::rt
