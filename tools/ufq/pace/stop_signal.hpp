// SIGINT / SIGTERM as a stop request: the handler only sets a flag, which
// the run loop polls, so a run ends cleanly and still reports.
#pragma once

#include <atomic>

namespace ufq::rt {

class StopSignal {
 public:
  // Installs the handlers (restored by the destructor).
  StopSignal();
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // The flag the handlers set; also settable by anyone (tests).
  static std::atomic<bool>& flag();
  // The signal received (0: none).
  static int signal_number();
  bool requested() const { return flag().load(std::memory_order_relaxed); }
};

}  // namespace ufq::rt
