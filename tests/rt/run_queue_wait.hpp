// How long a thread of this process has waited on a run queue (runnable,
// not running: preempted, or woken and not yet given a CPU), from the
// second field of /proc/self/task/<tid>/schedstat (the kernel's
// sched_info run_delay, ns). Real-time tests use it to tell the code's
// lateness from the loaded machine's: time a thread spent waiting for a
// CPU is not the code's doing.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "ufq/time.hpp"

namespace ufq::rt {

// The thread's run-queue wait so far, ns; 0 when the kernel does not keep it
// (no CONFIG_SCHED_INFO): the tests then hold every measurement to the bounds.
inline Time run_queue_wait_ns(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0;
  unsigned long long on_cpu = 0, waited = 0;
  const int n = std::fscanf(f, "%llu %llu", &on_cpu, &waited);
  std::fclose(f);
  return n == 2 ? static_cast<Time>(waited) : 0;
}

// The calling thread's id, for run_queue_wait_ns from another thread.
inline pid_t this_thread_tid() { return ::gettid(); }

}  // namespace ufq::rt
