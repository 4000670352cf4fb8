#include "sim_sweep.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace ufq::cli {

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  unsigned n = 0;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
  if (n == 0) n = std::thread::hardware_concurrency();  // more CPUs than cpu_set_t holds, or unknown
  return std::clamp(n, 1u, kMaxSimJobs);
}

std::vector<std::exception_ptr> run_in_order(std::size_t count, unsigned threads,
                                             const std::function<void(std::size_t)>& run) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  // Takes the indices in order; after a failure none is taken, so every index
  // below a failed one has started (and ends), none above it starts.
  const auto work = [&] {
    for (;;) {
      if (failed.load(std::memory_order_acquire)) return;
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) return;
      try {
        run(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true, std::memory_order_release);
        return;
      }
    }
  };
  const std::size_t extra = threads <= 1 || count <= 1 ? 0 : std::min<std::size_t>(threads, count) - 1;
  std::vector<std::thread> pool;
  pool.reserve(extra);
  for (std::size_t t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads (RLIMIT_NPROC, memory): the ones there are do the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  return errors;
}

void SweepProgress::update(std::size_t run, double fraction) {
  std::lock_guard<std::mutex> lock(m_);
  fraction_[run] = std::clamp(fraction, 0.0, 1.0);
  show_locked();
}

void SweepProgress::finished(std::size_t run) {
  std::lock_guard<std::mutex> lock(m_);
  fraction_[run] = 1.0;
  ++finished_;
  show_locked();
}

void SweepProgress::clear() {
  std::lock_guard<std::mutex> lock(m_);
  if (shown_percent_ >= 0) std::fprintf(out_, "\r\033[K");
  shown_percent_ = -1;
}

void SweepProgress::show_locked() {
  if (fraction_.empty()) return;
  double sum = 0;
  for (const double f : fraction_) sum += f;
  const int percent = static_cast<int>(100.0 * sum / static_cast<double>(fraction_.size()));
  if (percent == shown_percent_ && finished_ == shown_finished_) return;
  shown_percent_ = percent;
  shown_finished_ = finished_;
  std::fprintf(out_, "\r%zu/%zu runs, %3d%%", finished_, fraction_.size(), percent);
  std::fflush(out_);
}

}  // namespace ufq::cli
