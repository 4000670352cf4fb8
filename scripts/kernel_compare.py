#!/usr/bin/env python3
"""The simulator set up as the kernel-fq guest, against every recorded kernel run.

For each tests/data/kernel-6.1/runs/*.json (see scripts/record-kernel-runs.sh) runs
`ufq sim` with the guest's machine (1 CPU, dummy device, no other interrupts, the
sender keeping 5 datagrams queued per socket) and workload (rate-paced sockets for
`pace` runs, EDT-stamped for `txtime` runs), and prints a markdown table of timer
interrupts/s and fq's throttled/s, kernel against simulator.
Usage: scripts/kernel_compare.py [UFQ_BINARY] [RUNS_DIR]
"""
import glob, json, os, subprocess, sys

ufq = sys.argv[1] if len(sys.argv) > 1 else "build/release/tools/ufq/ufq"
runs_dir = sys.argv[2] if len(sys.argv) > 2 else "tests/data/kernel-6.1/runs"


def slack_of(run):
    return run["run"].split("-s", 1)[1].removesuffix("-trace")


def simulate(k):
    flows, pps, size, dur = int(k["FLOWS"]), float(k["PPS"]), int(k["SIZE"]), int(k["DUR"])
    traffic = "rate" if k["MODE"] == "pace" else "edt"
    cmd = [ufq, "sim", "--traffic", traffic, "--flows", str(flows), "--rate", str(flows * pps),
           "--packet-size", str(size + 42), "--queues", "1", "--cpus", "1", "--nic-dummy",
           "--other-irq-rate", "0", "--irq-latency", "2us", "--nic-latency", "20us",
           "--duration", f"{dur}s", "--interval", "1s", "--inflight", "5", "--compat", "latest",
           "--json", "-q", "fq", "timer_slack", slack_of(k)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout), cmd


rows = []
for path in sorted(glob.glob(os.path.join(runs_dir, "*.json"))):
    k = json.load(open(path))
    # Traced runs carry the tracer's own cost in the guest: summaries only, not compared.
    if "LOC_per_s" not in k or k["run"].endswith("-trace"):
        continue
    s, cmd = simulate(k)
    dur = float(k["DUR"])
    sim_thr = s["qdisc"]["throttled"] / dur
    rows.append((k["run"], k["MODE"], int(k["FLOWS"]), int(k["PPS"]), slack_of(k), k["LOC_per_s"],
                 s["timer_interrupts_per_s"], k["fq_throttled_per_s"], sim_thr))

print("| run | mode | flows x pps | slack | kernel timer irq/s | sim | sim/kernel | kernel throttled/s | sim | sim/kernel |")
print("|---|---|---|---|---|---|---|---|---|---|")
for run, mode, f, p, slack, kl, sl, kt, st in rows:
    print(f"| {run} | {mode} | {f} x {p} | {slack} | {kl:,.0f} | {sl:,.0f} | {sl / kl:.3f} | {kt:,.0f} | {st:,.0f} | "
          f"{st / kt:.3f} |")
worst = max(rows, key=lambda r: abs(r[6] / r[5] - 1))
print(f"\nworst timer-interrupt ratio: {worst[6] / worst[5]:.3f} ({worst[0]}); "
      f"{sum(1 for r in rows if abs(r[6] / r[5] - 1) <= 0.10)} of {len(rows)} runs within 10 %")
