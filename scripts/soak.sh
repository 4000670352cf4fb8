#!/usr/bin/env bash
# Soak: 1,000,000 flows alive at once for 10 simulated minutes, each living an
# exponential 120 s on average, then falling silent for good and replaced by a
# flow with a never-seen key (`ufq sim --traffic churn`): about 6 M distinct
# flows pass through fq, which must collect the idle ones.
#
# Writes bench/results/soak.json (the run, its checks, wall time and machine),
# bench/results/soak.dat (one row per 10 s sample) and docs/img/soak/soak.png,
# then checks, and exits 1 if any check fails:
#   * fq's packet books balance at every sample (offered = dequeued + drops + purged + qlen);
#   * flows held by fq stay below alive + the flows that end within one packet
#     gap + 3 s (fq's idle age) + 2 jiffies, with 1.5x margin (twice the alive
#     flows with COMPAT=5.7, which collects only once half the flows are idle);
#   * collected flows (gc_flows) grow from quarter to quarter of the run;
#   * resident memory is flat after warm-up: at the end at most 10 % above its
#     value at 25 % of the run.
#
# Every parameter can be overridden from the environment, e.g. a quick run:
#   ALIVE=20000 RATE=40000 LIFETIME=5s DURATION=60s OUT=/tmp/soak scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."

UFQ=${UFQ:-build/release/tools/ufq/ufq}
ALIVE=${ALIVE:-1000000}      # flows alive at once
RATE=${RATE:-200000}         # packets/s over all flows: one packet every 5 s per flow
LIFETIME=${LIFETIME:-120s}   # mean flow lifetime
DURATION=${DURATION:-600s}   # simulated time
INTERVAL=${INTERVAL:-10s}    # one sample per interval
COMPAT=${COMPAT:-latest}     # fq's decisions: latest (GC on every enqueue) or 5.7
SEED=${SEED:-1}
OUT=${OUT:-}                 # when set: write soak.json, soak.dat, soak.png into this directory
if [[ -n $OUT ]]; then
  json_out=$OUT/soak.json dat_out=$OUT/soak.dat png_out=$OUT/soak.png
else
  json_out=bench/results/soak.json dat_out=bench/results/soak.dat png_out=docs/img/soak/soak.png
fi
mkdir -p "$(dirname "$json_out")" "$(dirname "$dat_out")" "$(dirname "$png_out")"

if [[ ! -x $UFQ ]]; then
  echo "soak: $UFQ not built (cmake --preset release && cmake --build --preset release --target ufq)" >&2
  exit 2
fi

# Every alive flow keeps its next packet queued in fq (inflight 1), so the
# limit must hold them all.
cmd=("$UFQ" sim --traffic churn --flows "$ALIVE" --rate "$RATE" --flow-lifetime "$LIFETIME"
     --inflight 1 --duration "$DURATION" --interval "$INTERVAL" --compat "$COMPAT" --seed "$SEED"
     --json --rss fq limit 10000000)
echo "soak: ${cmd[*]}" >&2
run_json=$(mktemp)
trap 'rm -f "$run_json"' EXIT
start=$(date +%s.%N)
"${cmd[@]}" >"$run_json"
end=$(date +%s.%N)

status=0
python3 - "$run_json" "$json_out" "$dat_out" "$start" "$end" "$COMPAT" "${cmd[*]}" <<'EOF' || status=$?
import json, os, platform, subprocess, sys, time

run_path, json_out, dat_out, start, end, compat, command = sys.argv[1:]
r = json.load(open(run_path))
wall = float(end) - float(start)
w = r["workload"]
alive, rate, life = w["flows"], w["rate_pps"], w["flow_lifetime_s"]
samples = r["samples"]
gap = alive / rate                      # seconds between a flow's packets
idle_age = 3.0 + 2.0 / 250              # fq's GC age (3 s) + 2 jiffies at hz 250
ended_in_window = 1.5 * alive / life * (gap + idle_age)
held_bound = (2 if compat == "5.7" else 1) * alive + ended_in_window

def at(frac):
    """The sample at `frac` of the run."""
    i = max(0, min(len(samples) - 1, round(frac * len(samples)) - 1))
    return samples[i]

q1, q2, q4 = at(0.25), at(0.5), at(1.0)
max_held = max(s["fq_flows"] for s in samples)
unbalanced = [s["t"] for s in samples if not s["reconciled"]]
checks = {
    "books_balance_every_sample": {"ok": not unbalanced, "unbalanced_at_s": unbalanced},
    "flows_held_bounded": {"ok": max_held <= held_bound, "max_fq_flows": max_held, "bound": round(held_bound)},
    "gc_flows_grow": {"ok": 0 < q1["gc_flows"] < q2["gc_flows"] < q4["gc_flows"],
                      "at_25_50_100_pct": [q1["gc_flows"], q2["gc_flows"], q4["gc_flows"]]},
    "rss_flat_after_warmup": {"ok": q4["rss_kb"] <= 1.10 * q1["rss_kb"],
                              "rss_kb_at_25_pct": q1["rss_kb"], "rss_kb_at_end": q4["rss_kb"],
                              "growth_pct": round(100.0 * (q4["rss_kb"] / q1["rss_kb"] - 1), 2)},
}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
soak = {
    "command": command,
    "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    "machine": {"cpus": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
                "memory_kb": int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")))},
    "wall_s": round(wall, 1),
    "simulated_s": w["duration_s"],
    "sim_packets_per_wall_s": round(r["packets_sent"] / wall),
    "flows_alive": alive,
    "flows_created": r["flows_created"],
    "flows_collected": r["flows_collected"],
    "max_fq_flows": r["max_fq_flows"],
    "peak_rss_kb": r["peak_rss_kb"],
    "packets_sent": r["packets_sent"],
    "packets_dropped": r["packets_dropped"],
    "checks": checks,
    "ok": all(c["ok"] for c in checks.values()),
    "run": r,
}
with open(json_out, "w") as f:
    json.dump(soak, f, indent=1)
    f.write("\n")
with open(dat_out, "w") as f:
    f.write("# t_s fq_flows inactive throttled created collected qlen rss_MB reconciled\n")
    for s in samples:
        f.write(f'{s["t"]:g} {s["fq_flows"]} {s["inactive_flows"]} {s["throttled_flows"]} {s["flows_created"]} '
                f'{s["gc_flows"]} {s["qlen"]} {s["rss_kb"] / 1024:.1f} {int(s["reconciled"])}\n')
print(f'soak: {w["duration_s"]:g} simulated s in {wall:.0f} s wall ({soak["sim_packets_per_wall_s"]} packets/s); '
      f'{alive} alive, {r["flows_created"]} created, {r["flows_collected"]} collected, '
      f'at most {max_held} held by fq; peak RSS {r["peak_rss_kb"] / 1024:.0f} MB')
for name, c in checks.items():
    print(f'soak: {"ok  " if c["ok"] else "FAIL"} {name}: ' +
          ", ".join(f"{k} {v}" for k, v in c.items() if k != "ok"))
sys.exit(0 if soak["ok"] else 1)
EOF

gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set output '$png_out'
set title 'ufq sim --traffic churn: $ALIVE flows alive, mean life $LIFETIME, $RATE pkt/s ($COMPAT)'
set grid
set key below horizontal
set xlabel 'simulated time (s)'
set ylabel 'flows (millions)'
set y2label 'resident memory (MB)'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
plot '$dat_out' using 1:(\$2/1e6) with lines lw 2 title 'held by fq', \
     '$dat_out' using 1:(\$5/1e6) with lines title 'created so far', \
     '$dat_out' using 1:(\$6/1e6) with lines title 'collected so far', \
     '$dat_out' using 1:8 axes x1y2 with lines dt 2 lw 2 title 'RSS (MB, right)'
EOF
echo "soak: wrote $json_out $dat_out $png_out" >&2
exit $status
