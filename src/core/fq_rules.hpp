// The pure rules of fq that both scheduler implementations (reference::FqScheduler, the
// kernel-shaped reference, and the public FqScheduler) apply identically: the
// configuration in the units the rules use, the CE mark at departure, and the
// pacing gap. One copy, so the two cannot drift apart here.
#pragma once

#include <algorithm>
#include <cstdint>

#include "packet_bits.hpp"
#include "ufq/config.hpp"
#include "ufq/packet.hpp"
#include "ufq/stats.hpp"
#include "ufq/watchdog.hpp"

namespace ufq::detail {

// FqConfig in the units the rules compare with.
struct Derived {
  bool latest = true;
  std::uint64_t tick_ns = 0;               // one jiffy
  std::uint64_t refill_delay_jiffies = 0;  // usecs_to_jiffies rounds up
  Time ce_threshold_ns = 0;
  Time horizon_ns = 0;
  Time offload_ns = 0;                     // 0 before 6.13

  static Derived of(const FqConfig& cfg) {
    Derived d;
    d.latest = cfg.compat == Compat::latest;
    d.tick_ns = kNsecPerSec / cfg.hz;
    d.refill_delay_jiffies = (static_cast<std::uint64_t>(cfg.refill_delay_us) * cfg.hz + 999'999) / 1'000'000;
    d.ce_threshold_ns = static_cast<Time>(cfg.ce_threshold_us) * kNsecPerUsec;
    d.horizon_ns = static_cast<Time>(cfg.horizon_us) * kNsecPerUsec;
    d.offload_ns = d.latest ? static_cast<Time>(cfg.offload_horizon_us) * kNsecPerUsec : 0;
    return d;
  }
};

// docs/fq-rules.md#sending-and-ce-marking: remember when the packet was due
// (`tnp`); CE when it leaves more than ce_threshold after that. The counter
// moves even when the packet cannot carry the mark (not ECN-capable).
inline void mark_departure(Packet& p, Time now, Time tnp, Time ce_threshold_ns, FqStats& st) {
  p.due = tnp;
  if (static_cast<std::int64_t>(now - tnp - ce_threshold_ns) > 0) {
    if (p.ect) p.ce = true;
    ++st.ce_mark;
  }
}

// docs/fq-rules.md#pacing-gap: the flow's next departure time from its rate,
// after `p` was sent and charged. `FlowT` has `credit` (int32) and
// `time_next_packet` (Time).
template <class FlowT>
[[gnu::always_inline]] inline void pace(FlowT& f, const Packet& p, Time now, const FqConfig& cfg, FqStats& st) {
  if (!cfg.pacing) return;
  Rate rate = cfg.maxrate;
  std::uint32_t plen = p.len;
  if (p.tstamp == 0) {
    // Only packets without a departure time take the owner's rate.
    if (p.owner && !orphaned(p)) rate = std::min({p.owner->pacing_rate, p.owner->max_pacing_rate, rate});
    if (rate <= cfg.low_rate_threshold) {
      f.credit = 0;  // a gap after every packet
    } else {
      plen = std::max(plen, cfg.quantum);
      if (f.credit > 0) return;  // may still burst up to its credit
    }
  }
  if (rate == kUnlimitedRate) return;
  std::uint64_t len = static_cast<std::uint64_t>(plen) * kNsecPerSec;
  if (rate) len /= rate;
  if (len > kNsecPerSec) {  // the 1 s cap
    len = kNsecPerSec;
    ++st.pkts_too_long;
  }
  // Late by `now - time_next_packet`: shorten the gap by that, at most by half
  // (docs/fq-rules.md#late-departure-compensation). With an offload horizon the
  // flow can leave before its time_next_packet; the unsigned difference would
  // then wrap and halve the gap. Latest kernels compensate only a real lateness
  // (the 2026 fix "sch_fq: fix pacing delay underflow with pacing offload");
  // 5.7 has no offload horizon and keeps the unguarded rule.
  if (f.time_next_packet && (now > f.time_next_packet || cfg.compat != Compat::latest))
    len -= std::min(len / 2, now - f.time_next_packet);
  f.time_next_packet = now + len;
}

// docs/fq-rules.md#adaptive-slack (a ufq extension): the latest time a flow
// throttled at `now` until `tnp` may be woken: tnp plus its allowance, the
// configured fraction of its wait (tnp - now, which never exceeds its packet
// gap), kept within [timer_slack, adaptive_slack_max]. Saturates at kNever.
inline Time slack_deadline(Time tnp, Time now, const FqConfig& cfg) {
  const Time wait = tnp > now ? tnp - now : 0;
  Time allowance = cfg.adaptive_slack_max_ns;
  // wait * ppm fits in 64 bits below 2^44 ns (about 4.9 hours); beyond, the maximum.
  if (wait < (Time{1} << 44)) allowance = std::min<Time>(allowance, wait * cfg.adaptive_slack_ppm / kPpm);
  allowance = std::max<Time>(allowance, cfg.timer_slack_ns);
  return tnp + allowance < tnp ? kNever : tnp + allowance;
}

// The watchdog request when fq has nothing to send but throttled flows, due
// from `first`: the kernel's [first, first + timer_slack] (keep rule of
// docs/fq-rules.md#watchdog-range-rule), or with the adaptive slack
// [first, `deadline`], the earliest deadline of the throttled flows.
inline void arm(Watchdog& w, Time first, Time deadline, const FqConfig& cfg) {
  if (!cfg.adaptive_slack()) {
    w.schedule_range(first, cfg.timer_slack_ns);
    return;
  }
  w.schedule_within(first, deadline > first ? deadline - first : 0);
}

// A band's credit after one refill (latest kernels' band rotation): plus its
// quantum, in 32-bit wrapping arithmetic as the kernel's int, capped at the quantum.
inline std::int32_t refilled_band_credit(std::int32_t credit, std::int32_t quantum) {
  const auto sum = static_cast<std::int32_t>(static_cast<std::uint32_t>(credit) + static_cast<std::uint32_t>(quantum));
  return std::min(sum, quantum);
}

}  // namespace ufq::detail
