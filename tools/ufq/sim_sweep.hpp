// Running a `ufq sim --compare` sweep on several threads: the runs are
// independent and deterministic (each simulation owns its state and its
// random generators, docs/simulator.md "Speed"), so only when they run
// changes, never what they print. The caller prints in sweep order after
// every run has ended.
#pragma once

#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace ufq::cli {

// The most threads `ufq sim --jobs` takes.
inline constexpr unsigned kMaxSimJobs = 1024;

// The CPUs this process may run on (sched_getaffinity), at least 1 and at
// most kMaxSimJobs: the default of --jobs.
unsigned usable_cpus();

// Calls run(i) once for each i in 0..count-1, starting them in increasing
// order of i, on up to `threads` threads at once (the calling thread is one
// of them; with threads <= 1 or count <= 1 no thread is created and this is
// a plain loop). Once a call has thrown, no call with a higher index starts
// (calls already running end normally), as a sequential loop would stop
// there: the result's entry i holds what run(i) threw, null when it returned
// or never started. Every call has ended when this returns.
//
// Threads: run is called concurrently from several threads with distinct
// indices; it must only write state of its own index (or lock). If a thread
// cannot be created the sweep goes on with those that were.
std::vector<std::exception_ptr> run_in_order(std::size_t count, unsigned threads,
                                             const std::function<void(std::size_t)>& run);

// The one progress line of a sweep whose runs overlap, on a terminal:
// "\r3/9 runs, 41%": the runs ended and the share of all their simulated
// time done. Printed only when either figure changes.
class SweepProgress {
 public:
  SweepProgress(std::size_t runs, std::FILE* out) : fraction_(runs, 0.0), out_(out) {}

  // Run `run` is `fraction` (0..1) through its simulated time. Any thread.
  void update(std::size_t run, double fraction);
  // Run `run` has ended. Any thread.
  void finished(std::size_t run);
  // Erases the line (after every run has ended).
  void clear();

 private:
  void show_locked();

  std::mutex m_;
  std::vector<double> fraction_;  // guarded by m_
  std::size_t finished_ = 0;      // guarded by m_
  int shown_percent_ = -1;        // guarded by m_
  std::size_t shown_finished_ = 0;  // guarded by m_
  std::FILE* out_;
};

}  // namespace ufq::cli
