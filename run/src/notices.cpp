#include "notices.hpp"

#include <unistd.h>

#include "real_calls.hpp"

namespace ufq::run {
namespace {
std::atomic<bool> g_said[static_cast<unsigned>(Notice::count)];
}

void say(const std::string& line) { say_raw("ufq run: " + line + "\n"); }

void say_raw(const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = real().write(STDERR_FILENO, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void say_once(Notice n, const std::string& line) {
  if (!g_said[static_cast<unsigned>(n)].exchange(true, std::memory_order_relaxed)) say(line);
}

void reset_notices() {
  for (auto& s : g_said) s.store(false, std::memory_order_relaxed);
}

}  // namespace ufq::run
