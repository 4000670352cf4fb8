#include "ufq/rt/sleeper.hpp"

#include <poll.h>
#include <sys/epoll.h>
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

bool Sleeper::interruptible() const {
  return opt_.kind == TimerKind::epoll || opt_.kind == TimerKind::timerfd ||
         opt_.kind == TimerKind::busy;
}

void Sleeper::ring() {
  if (!rung_.exchange(true, std::memory_order_acq_rel)) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(efd_, &one, sizeof(one));
  }
}

bool Sleeper::consume_doorbell() {
  if (!rung_.load(std::memory_order_acquire)) return false;
  rung_.store(false, std::memory_order_release);
  std::uint64_t v = 0;
  [[maybe_unused]] const ssize_t n = ::read(efd_, &v, sizeof(v));
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
  pollfd pfd{efd_, POLLIN, 0};
  const timespec ts = to_timespec(timeout_ns);
  const int r = ::ppoll(&pfd, 1, &ts, nullptr);
  if (r > 0 || consume_doorbell()) {
    consume_doorbell();
    std::uint64_t v = 0;
    [[maybe_unused]] const ssize_t n = ::read(efd_, &v, sizeof(v));
    return WakeReason::doorbell;
  }
  return WakeReason::idle;
}

WakeReason Sleeper::spin_until(Time t) {
  while (mono_now() < t) {
    if (rung_.load(std::memory_order_relaxed) && consume_doorbell()) return WakeReason::doorbell;
    cpu_relax();
  }
  return WakeReason::timer;
}

WakeReason Sleeper::sleep_abs(Time t) {
  const timespec ts = to_timespec(t);
  for (;;) {
    const int r = ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    if (r == 0) return WakeReason::timer;
    if (r != EINTR) throw std::system_error(r, std::generic_category(), "clock_nanosleep");
    if (consume_doorbell()) return WakeReason::doorbell;
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
