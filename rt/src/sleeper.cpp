#include "ufq/rt/sleeper.hpp"

#include <linux/futex.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

#include "ufq/rt/clock.hpp"

namespace ufq::rt {
namespace {

constexpr std::uint64_t kEpollDoorbell = 1;
constexpr std::uint64_t kEpollTimer = 2;

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Sleep while *word == 0, until the absolute CLOCK_MONOTONIC time `t` (kNever:
// no limit). FUTEX_WAIT_BITSET takes an absolute time and arms the same
// hrtimer as clock_nanosleep(TIMER_ABSTIME), with the thread's timer slack as
// its range, so the window's slack applies exactly as for a nanosleep; unlike
// a nanosleep, FUTEX_WAKE on the word ends it (the doorbell). Returns when
// woken, at the time, on a signal, or at once when *word != 0 already.
void futex_wait_until(std::atomic<std::uint32_t>& word, Time t) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec ts{};
  if (t != kNever) ts = to_timespec(t);
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_BITSET_PRIVATE, 0U,
            t != kNever ? &ts : nullptr, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

const char* to_string(TimerKind k) {
  switch (k) {
    case TimerKind::nanosleep: return "nanosleep";
    case TimerKind::epoll: return "epoll";
    case TimerKind::timerfd: return "timerfd";
    case TimerKind::busy: return "busy";
    case TimerKind::hybrid: return "hybrid";
    case TimerKind::tick: return "tick";
  }
  return "?";
}

const char* timer_kind_names() { return "nanosleep|epoll|timerfd|busy|hybrid|tick"; }

std::optional<TimerKind> parse_timer_kind(std::string_view name) {
  for (TimerKind k : {TimerKind::nanosleep, TimerKind::epoll, TimerKind::timerfd, TimerKind::busy,
                      TimerKind::hybrid, TimerKind::tick})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

Sleeper::Sleeper(SleeperOptions options) : opt_(options) {
  if (opt_.kind == TimerKind::tick && opt_.tick_ns == 0)
    throw std::invalid_argument("tick period must be > 0");
  efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd_ < 0) throw_errno("eventfd");
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) throw_errno("epoll_create1");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kEpollDoorbell;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, efd_, &ev) != 0) throw_errno("epoll_ctl");
  if (opt_.kind == TimerKind::timerfd) {
    tfd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd_ < 0) throw_errno("timerfd_create");
    ev.data.u64 = kEpollTimer;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, tfd_, &ev) != 0) throw_errno("epoll_ctl");
  }
}

Sleeper::~Sleeper() {
  if (tfd_ >= 0) ::close(tfd_);
  if (epfd_ >= 0) ::close(epfd_);
  if (efd_ >= 0) ::close(efd_);
}

bool Sleeper::interruptible() const { return true; }

bool Sleeper::uses_eventfd() const {
  return opt_.kind == TimerKind::epoll || opt_.kind == TimerKind::timerfd;
}

bool Sleeper::uses_futex() const {
  return opt_.kind == TimerKind::nanosleep || opt_.kind == TimerKind::tick ||
         opt_.kind == TimerKind::hybrid;
}

void Sleeper::ring() {
  if (rung_.exchange(1, std::memory_order_acq_rel) == 0) {
    if (uses_eventfd()) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(efd_, &one, sizeof(one));
    } else if (uses_futex()) {
      futex_wake(rung_);
    }  // busy: the spinning thread reads the flag
  }
}

bool Sleeper::consume_doorbell() {
  if (rung_.load(std::memory_order_acquire) == 0) return false;
  rung_.store(0, std::memory_order_release);
  if (uses_eventfd()) {
    std::uint64_t v = 0;
    [[maybe_unused]] const ssize_t n = ::read(efd_, &v, sizeof(v));
  }
  return true;
}

void Sleeper::apply_slack(Time slack) {
  if (slack == 0) slack = 1;
  if (slack == slack_) return;
  set_timer_slack_ns(slack);
  slack_ = slack;
  ++slack_changes_;
}

WakeReason Sleeper::wait_doorbell(Time timeout_ns) {
  if (consume_doorbell()) return WakeReason::doorbell;
  if (opt_.kind == TimerKind::busy) {
    const Time until = mono_now() + timeout_ns;
    while (mono_now() < until) {
      if (consume_doorbell()) return WakeReason::doorbell;
      cpu_relax();
    }
    return WakeReason::idle;
  }
  if (uses_futex()) {
    const Time until = mono_now() + timeout_ns;
    for (;;) {
      futex_wait_until(rung_, until);
      if (consume_doorbell()) return WakeReason::doorbell;
      if (mono_now() >= until) return WakeReason::idle;
    }
  }
  pollfd pfd{efd_, POLLIN, 0};
  const timespec ts = to_timespec(timeout_ns);
  ::ppoll(&pfd, 1, &ts, nullptr);
  return consume_doorbell() ? WakeReason::doorbell : WakeReason::idle;
}

WakeReason Sleeper::spin_until(Time t) {
  while (mono_now() < t) {
    if (rung_.load(std::memory_order_relaxed) != 0 && consume_doorbell()) return WakeReason::doorbell;
    cpu_relax();
  }
  return WakeReason::timer;
}

WakeReason Sleeper::sleep_abs(Time t) {
  for (;;) {
    futex_wait_until(rung_, t);
    if (consume_doorbell()) return WakeReason::doorbell;
    if (mono_now() >= t) return WakeReason::timer;
    // A signal or a spurious wake-up: sleep on towards t.
  }
}

WakeReason Sleeper::wait(Time soft, Time hard, Time idle_ns) {
  if (soft == kNever) return wait_doorbell(idle_ns);
  if (hard < soft) hard = soft;
  switch (opt_.kind) {
    case TimerKind::nanosleep:
      apply_slack(hard - soft);
      return sleep_abs(soft);

    case TimerKind::tick: {
      // The first grid point at or after soft, with the window's slack.
      const Time t = (soft + opt_.tick_ns - 1) / opt_.tick_ns * opt_.tick_ns;
      apply_slack(hard - soft);
      return sleep_abs(t);
    }

    case TimerKind::epoll: {
      apply_slack(hard - soft);
      for (;;) {
        if (consume_doorbell()) return WakeReason::doorbell;
        const Time now = mono_now();
        if (now >= soft) return WakeReason::timer;
        const timespec ts = to_timespec(soft - now);
        epoll_event ev{};
        const int r = ::epoll_pwait2(epfd_, &ev, 1, &ts, nullptr);
        if (r < 0 && errno != EINTR) throw_errno("epoll_pwait2");
        // Timeouts are relative: loop until the clock has passed soft.
      }
    }

    case TimerKind::timerfd: {
      itimerspec its{};
      its.it_value = to_timespec(soft);
      if (::timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr) != 0)
        throw_errno("timerfd_settime");
      for (;;) {
        epoll_event evs[2]{};
        const int r = ::epoll_wait(epfd_, evs, 2, -1);
        if (r < 0) {
          if (errno == EINTR) continue;
          throw_errno("epoll_wait");
        }
        bool timer = false;
        for (int i = 0; i < r; ++i)
          if (evs[i].data.u64 == kEpollTimer) timer = true;
        if (timer) {
          std::uint64_t expirations = 0;
          [[maybe_unused]] const ssize_t n = ::read(tfd_, &expirations, sizeof(expirations));
          return WakeReason::timer;
        }
        if (consume_doorbell()) {
          const itimerspec off{};
          ::timerfd_settime(tfd_, 0, &off, nullptr);
          return WakeReason::doorbell;
        }
      }
    }

    case TimerKind::busy:
      return spin_until(soft);

    case TimerKind::hybrid: {
      const Time now = mono_now();
      if (soft > now + opt_.spin_ns) {
        apply_slack(hard - soft);
        const WakeReason r = sleep_abs(soft - opt_.spin_ns);
        if (r != WakeReason::timer) return r;
      }
      return spin_until(soft);
    }
  }
  return WakeReason::timer;
}

}  // namespace ufq::rt
