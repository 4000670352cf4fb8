#include "pace/timer_probe.hpp"

#include "ufq/rt/clock.hpp"

namespace ufq::rt {

TimerLatency measure_timer_latency(TimerKind kind, Time slack_ns, std::uint32_t samples,
                                   Time period_ns) {
  TimerLatency out;
  out.kind = kind;
  out.slack_ns = slack_ns;
  out.period_ns = period_ns;
  const std::uint64_t saved = timer_slack_ns();
  {
    SleeperOptions opt;
    opt.kind = kind;
    Sleeper sleeper(opt);
    for (std::uint32_t i = 0; i < samples; ++i) {
      const Time soft = mono_now() + period_ns;
      sleeper.wait(soft, soft + slack_ns);
      out.lateness.add_signed(static_cast<std::int64_t>(mono_now() - soft));
    }
  }
  if (saved) set_timer_slack_ns(saved);
  return out;
}

}  // namespace ufq::rt
