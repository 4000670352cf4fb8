#!/usr/bin/env bash
# One pacer per core, measured: the highest aggregate rate `ufq pace` sustains
# with the sink egress (no sockets: producers, schedulers, sleepers) on 1
# queue and on 2 queues, with every flow's rate within 1 % and every packet
# accounted for, and the ratio (summary.json mq.speedup_2_queues).
#
# "Sustains" at rate R: a run of DURATION at R sends >= 99 % of R per second,
# every flow's rate error (first to last departure against first to last
# intended) is at most 1 %, the accounting is balanced and nothing is dropped
# or left unsent. The search climbs a ladder of rates (x1.41 a step) until a
# run fails, then halves the last interval (geometrically) three times: 4 %
# resolution. 1 queue runs with the whole process on CPU 0 (taskset): its producer and pacer share one core;
# 2 queues run with --pin: queue q's producer and pacer on CPU q. So both
# compare per-core work: 2 cores against 1. Searches alternate 1, 2, 1, 2...
# so both see the same machine; the figure is the median over REPS.
#
# Also reported: pacer CPU per packet (ns of the pacer threads' CPU per packet
# sent) with each queue at the same rate (half the 1-queue capacity: 1 queue
# at C/2, 2 queues at C in all), with packets per wake-up beside it: the
# queues share nothing, but a pacer that has a core to itself wakes closer to
# its window, with fewer packets per wake-up, so the ratio measures batching
# as much as anything (docs/multi-queue.md#measured).
#
# Usage: bench/mq_pacer.sh UFQ [OUT_JSON] [REPS] [FLOWS] [DURATION]
#   (defaults: bench/results/mq_pacer.json, 3 repetitions, 1000 flows, 2 s)
set -euo pipefail
ufq=$1 out=${2:-bench/results/mq_pacer.json} reps=${3:-3} flows=${4:-1000} dur=${5:-2}
mkdir -p "$(dirname "$out")"
python3 - "$ufq" "$out" "$reps" "$flows" "$dur" <<'PY'
import datetime, json, os, statistics, subprocess, sys
ufq, out, reps, flows, dur = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ncpu = os.cpu_count() or 1

def run(queues, rate):
    cmd = [ufq, "pace", "--egress", "sink", "--flows", str(flows), "--rate", str(int(rate)),
           "--duration", dur, "--json", "-q", "--no-probe"]
    if queues == 1:
        cmd = ["taskset", "-c", "0"] + cmd
    else:
        cmd += ["--queues", str(queues), "--pin"]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)[0]
    a = r["accounting"]
    ok = (r["pps"] >= 0.99 * rate and r["flow_rate_error_max"] <= 0.01 and a["balanced"]
          and a["dropped"]["total"] == 0 and a["unsent"]["total"] == 0 and a["sent"] == a["produced"])
    return ok, r

def search(queues):
    rate, passed, failed, best = 250_000.0, None, None, None
    while failed is None and rate <= 64e6:
        ok, r = run(queues, rate)
        if ok:
            passed, best = rate, r
            rate *= 2 ** 0.5
        else:
            failed = rate
    if passed is None:
        return 0.0, None
    for _ in range(3):
        if failed is None:
            break
        mid = (passed * failed) ** 0.5
        ok, r = run(queues, mid)
        if ok:
            passed, best = mid, r
        else:
            failed = mid
    return passed, best

def cpu_ns_per_packet(r):
    return r["pacer_cpu_pct"] / 100 * r["seconds"] * 1e9 / max(r["packets_sent"], 1)

load_before = os.getloadavg()
caps = {1: [], 2: []}
at_cap = {1: [], 2: []}
if ncpu < 2:
    print("mq_pacer: needs 2 CPUs", file=sys.stderr)
    sys.exit(1)
for i in range(reps):
    for q in (1, 2):
        c, r = search(q)
        caps[q].append(c)
        at_cap[q].append(r)
        print(f"rep {i + 1}/{reps}: {q} queue(s): {c:,.0f} packets/s sustained"
              f" (load {os.getloadavg()[0]:.1f})", flush=True)
med = {q: statistics.median(caps[q]) for q in caps}
# Pacer CPU per packet with every queue at half the 1-queue median capacity.
same_rate = {}
if med[1] > 0:
    for q in (1, 2):
        ok, r = run(q, med[1] / 2 * q)
        same_rate[q] = {"ok": ok, "pacer_cpu_ns_per_packet": cpu_ns_per_packet(r),
                        "packets_per_wakeup": r["packets_per_wakeup"], "wakeups_per_s": r["wakeups_per_s"],
                        "flow_rate_error_max": r["flow_rate_error_max"],
                        "balanced": r["accounting"]["balanced"]}
worst_err = max((r["flow_rate_error_max"] for q in at_cap for r in at_cap[q] if r), default=None)
balanced = all(r["accounting"]["balanced"] for q in at_cap for r in at_cap[q] if r)
res = {
    "what": "highest aggregate packets/s `ufq pace --egress sink` sustains with every flow within 1 % "
            "and every packet accounted for; 1 queue on CPU 0 (taskset) against 2 queues pinned to CPUs 0 "
            f"and 1; medians of {reps} alternating searches, {flows} flows, {dur} s runs",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "load_avg_before": [round(x, 2) for x in load_before],
    "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
    "flows": flows, "duration_s": float(dur), "repetitions": reps,
    "pps_1_queue": med[1], "pps_2_queues": med[2],
    "runs_1_queue": caps[1], "runs_2_queues": caps[2],
    "speedup_2_queues": med[2] / med[1] if med[1] else None,
    "flow_rate_error_max": worst_err,
    "balanced": balanced,
    "same_rate_per_queue": same_rate,
}
if same_rate.get(1) and same_rate.get(2):
    res["cpu_per_packet_ratio_2_vs_1"] = (same_rate[2]["pacer_cpu_ns_per_packet"] /
                                          same_rate[1]["pacer_cpu_ns_per_packet"])
json.dump(res, open(out, "w"), indent=2)
print(f"pacer, sink egress, {flows} flows: 1 queue {med[1]:,.0f} packets/s, 2 queues {med[2]:,.0f} packets/s,"
      f" {res['speedup_2_queues'] or 0:.2f}x; worst flow rate error at capacity "
      f"{100 * (worst_err or 0):.3f} %; balanced {balanced}; {res['uptime']}")
print(f"wrote {out}")
PY
