#!/usr/bin/env bash
# The price of precision: `ufq pace` CPU per packet with fq timer_slack 0,
# 10us and 50us, against the 1 ms tick (the QUIC stacks' habit: a 1 ms timer
# grid) and against an unpaced blast of the same packets (`--timer blast`:
# sendmmsg as fast as the socket takes them, no fq, no timer), in one run:
# every repetition runs the five modes in a new random order, so they share
# the machine's state alike; the table gives medians.
#
# CPU per packet is counted two ways: the sending side alone (pacer thread +
# producer), and with ksoftirqd's CPU added, because on loopback the
# receive side of each datagram runs either inside the sender's send call or
# in ksoftirqd, depending on load: only the second figure compares runs where
# that split differs. The softirq columns say where it ran.
#
# Usage: bench/price_of_precision.sh [UFQ] [REPS] [DURATION_S] [RATES...]
#   defaults: build/release/tools/ufq/ufq, 3 repetitions, 5 s per run, rates
#   100k (the default workload: 1000 flows, 1200-byte datagrams) and 400k.
#   PACE_ARGS: more `ufq pace` options for every run (e.g. --no-gso);
#   OUT: the result files' base name (default price-of-precision).
# Writes bench/results/$OUT.{json,md} and prints the table.
set -euo pipefail
ufq=${1:-build/release/tools/ufq/ufq}
reps=${2:-3}
dur=${3:-5}
shift $(( $# > 3 ? 3 : $# )) || true
rates=("$@")
[[ ${#rates[@]} -gt 0 ]] || rates=(100k 400k)
out=bench/results
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

modes=(slack0 slack10us slack50us tick1ms blast)
args_for() {
  case $1 in
    slack0) echo "fq timer_slack 0" ;;
    slack10us) echo "fq timer_slack 10us" ;;
    slack50us) echo "fq timer_slack 50us" ;;
    tick1ms) echo "--timer tick --tick 1ms fq timer_slack 10us" ;;
    blast) echo "--timer blast" ;;
  esac
}

for rate in "${rates[@]}"; do
  for ((i = 0; i < reps; i++)); do
    for m in $(printf '%s\n' "${modes[@]}" | shuf); do
      # shellcheck disable=SC2046
      "$ufq" pace --rate "$rate" --duration "$dur" --json -q --no-probe ${PACE_ARGS:-} $(args_for "$m") \
        > "$tmp/$rate.$m.$i.json"
    done
  done
done

python3 - "$tmp" "$reps" "$out" "$dur" "${OUT:-price-of-precision}" "${PACE_ARGS:-}" "${rates[@]}" <<'PY'
import json, os, statistics, sys
tmp, reps, out, dur, name, extra, rates = (sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4],
                                          sys.argv[5], sys.argv[6], sys.argv[7:])
modes = ["slack0", "slack10us", "slack50us", "tick1ms", "blast"]
med = statistics.median
load = open("/proc/loadavg").read().split()[:3]
result = {"reps": reps, "duration_s": float(dur), "pace_args": extra, "loadavg_after": load, "rates": {}}
lines = [f"medians of {reps} runs per mode, modes in random order per repetition, {dur} s each"
         f"{', extra options: ' + extra if extra else ''}; load average after: {' '.join(load)}", ""]
for rate in rates:
    rows = {}
    for m in modes:
        runs = [json.load(open(f"{tmp}/{rate}.{m}.{i}.json"))[0] for i in range(reps)]
        lat = [r["lateness_ns"] for r in runs]
        rows[m] = {
            "pps": med(r["pps"] for r in runs),
            "wakeups_per_s": med(r["wakeups_per_s"] for r in runs),
            "pacer_ns": med(r["cpu_ns_per_packet"]["pacer"] for r in runs),
            "sender_ns": med(r["cpu_ns_per_packet"]["sender"] for r in runs),
            "with_ksoftirqd_ns": med(r["cpu_ns_per_packet"]["sender_with_ksoftirqd"] for r in runs),
            "softirq_pct": med(r["softirq"]["system_softirq_pct"] for r in runs),
            "ksoftirqd_pct": med(r["softirq"]["ksoftirqd_cpu_pct"] for r in runs),
            "net_rx_per_s": med(r["softirq"]["net_rx_per_s"] for r in runs),
            "late_p50_ns": med(l.get("p50", 0) for l in lat) if m != "blast" else None,
            "late_p99_ns": med(l.get("p99", 0) for l in lat) if m != "blast" else None,
            "lost": sum(r["packets_lost"] or 0 for r in runs),
            "balanced": all(r["accounting"]["balanced"] for r in runs),
            "sent": [r["packets_sent"] for r in runs],
        }
    t, s = rows["tick1ms"], rows["slack10us"]
    ratios = {
        "cpu_10us_vs_tick": s["with_ksoftirqd_ns"] / t["with_ksoftirqd_ns"],
        "sender_cpu_10us_vs_tick": s["sender_ns"] / t["sender_ns"],
        "late_p50_10us_vs_tick": (s["late_p50_ns"] / t["late_p50_ns"]) if t["late_p50_ns"] else None,
        "cpu_10us_vs_blast": s["with_ksoftirqd_ns"] / rows["blast"]["with_ksoftirqd_ns"],
    }
    result["rates"][rate] = {"modes": rows, "ratios": ratios}
    lines += [f"### {rate} packets/s, 1000 flows, 1200-byte datagrams, loopback", "",
              "| mode | packets/s | wake-ups/s | pacer ns/pkt | sender ns/pkt | + ksoftirqd ns/pkt "
              "| softirq % | ksoftirqd % | NET_RX/s | lateness p50 | p99 | lost | balanced |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    us = lambda v: "-" if v is None else f"{v / 1000:.1f} us"
    for m in modes:
        r = rows[m]
        lines.append(f"| {m} | {r['pps']:,.0f} | {r['wakeups_per_s']:,.0f} | {r['pacer_ns']:.0f} | "
                     f"{r['sender_ns']:.0f} | {r['with_ksoftirqd_ns']:.0f} | {r['softirq_pct']:.1f} | "
                     f"{r['ksoftirqd_pct']:.1f} | {r['net_rx_per_s']:,.0f} | {us(r['late_p50_ns'])} | "
                     f"{us(r['late_p99_ns'])} | {r['lost']} | {'yes' if r['balanced'] else 'NO'} |")
    f = lambda v: "-" if v is None else f"{v:.2f}x"
    lines += ["", f"10us / tick CPU per packet (with ksoftirqd): {f(ratios['cpu_10us_vs_tick'])} "
              f"(sender alone {f(ratios['sender_cpu_10us_vs_tick'])}); lateness p50 10us / tick: "
              f"{f(ratios['late_p50_10us_vs_tick'])}; 10us / blast: {f(ratios['cpu_10us_vs_blast'])}", ""]
json.dump(result, open(os.path.join(out, name + ".json"), "w"), indent=1)
open(os.path.join(out, name + ".md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
