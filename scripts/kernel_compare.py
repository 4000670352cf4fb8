#!/usr/bin/env python3
"""The simulator set up as the kernel-fq guest, against every recorded kernel run.

For each tests/data/kernel-6.1/runs/*.json (see scripts/record-kernel-runs.sh) runs
`ufq sim` with the guest model of tests/data/kernel-6.1/guest-model.json (the machine:
1 CPU, dummy device, NOHZ idle tick; the harness's sender: one task, epoll, full
sockets; docs/simulator.md "The guest model") and the run's workload (rate-paced
sockets for `pace` runs, EDT-stamped for `txtime` runs), and prints a markdown table:
timer interrupts/s over the sender's send period and fq's counters, kernel against
simulator, each run marked `fit` (used to fit the model's parameters) or `hold-out`.
fq's packets and flows are compared with the kernel's less what the guest itself sent
(fq_packets - fqload's sent: one packet, one flow in every run); throttled as is.
Usage: scripts/kernel_compare.py [UFQ_BINARY] [RUNS_DIR] [--old] [--seed=N] [--without=OPT] [--with=OPT=V]
(--old: the
model before issue 15: refill on completion, a tick that never stops; --seed: another
draw of the model's random phases and latencies; --without/--with: the model less one
option, or with another value)
"""
import glob, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

argv = sys.argv[1:] if __name__ == "__main__" else []  # imported (event_compare.py): the defaults
args = [a for a in argv if not a.startswith("--")]
old = "--old" in argv
seed = next((a.split("=", 1)[1] for a in argv if a.startswith("--seed=")), None)  # --seed=N: another draw
# --without=OPT drops one of the model's options, --with=OPT=VALUE sets one: what each part does.
without = [a.split("=", 1)[1] for a in argv if a.startswith("--without=")]
override = dict(a.split("=", 1)[1].split("=", 1) for a in argv if a.startswith("--with="))
ufq = args[0] if len(args) > 0 else "build/release/tools/ufq/ufq"
runs_dir = args[1] if len(args) > 1 else "tests/data/kernel-6.1/runs"
model = json.load(open(os.path.join(os.path.dirname(os.path.abspath(runs_dir.rstrip("/"))), "guest-model.json")))


def slack_of(run):
    return run["run"].split("-s", 1)[1].removesuffix("-trace")


def command(k):
    flows, pps, size, dur = int(k["FLOWS"]), float(k["PPS"]), int(k["SIZE"]), int(k["DUR"])
    traffic = "rate" if k["MODE"] == "pace" else "edt"
    opts = {o: v for o, v in dict(model["options"], **override).items() if o not in without}
    size += int(opts.pop("--packet-size-extra"))
    if old:
        opts = {"--queues": "1", "--cpus": "1", "--nic-dummy": "", "--other-irq-rate": "0", "--irq-latency": "2us",
                "--nic-latency": "20us", "--inflight": "5", "--compat": "latest"}
        span = f"{dur}s"
    else:
        opts["--guest-send-for"] = f"{dur}s"
        if traffic == "edt":
            opts["--guest-lead"] = model["txtime_lead"]
        span = f"{dur + 2}s"  # the send period, its lead and the drain
    cmd = [ufq, "sim", "--traffic", traffic, "--flows", str(flows), "--rate", str(flows * pps),
           "--packet-size", str(size), "--duration", span, "--interval", "1s", "--json", "-q"]
    for o, v in opts.items():
        cmd += [o] + ([v] if v != "" else [])
    if seed:
        cmd += ["--seed", seed]
    return cmd + ["fq", "timer_slack", slack_of(k)]


def compare(path):
    k = json.load(open(path))
    cmd = command(k)
    s = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    if old:
        sim_irq = s["timer_interrupts_per_s"]
    else:
        sim_irq = s["guest"]["window_timer_interrupts_per_s"]
    own = k["fq_packets"] - k["sent"]  # the guest's own packets in fq (not fqload's)
    q = s["qdisc"]
    return dict(run=k["run"], mode=k["MODE"], flows=int(k["FLOWS"]), pps=int(k["PPS"]), slack=slack_of(k),
                role="fit" if k["run"] in model["fit"] else "hold-out",
                k_irq=k["LOC_per_s"], s_irq=sim_irq,
                k_thr=k["fq_throttled"], s_thr=q["throttled"],
                k_pkt=k["fq_packets"] - own, s_pkt=q["packets"],
                k_flows=k["fq_flows"] - (1 if own else 0), s_flows=q["flows"], cmd=cmd)


def rows():
    paths = [p for p in sorted(glob.glob(os.path.join(runs_dir, "*.json")))
             # Traced runs carry the tracer's own cost in the guest: summaries only, not compared.
             if not p.endswith("-trace.json")]
    with ThreadPoolExecutor(2) as ex:
        return list(ex.map(compare, paths))


def main():
    rs = rows()
    print("| run | fit/hold-out | kernel timer irq/s | sim | sim/kernel | kernel throttled | sim | sim/kernel |"
          " packets sim/kernel | flows sim/kernel |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rs:
        print(f"| {r['run']} | {r['role']} | {r['k_irq']:,.0f} | {r['s_irq']:,.0f} | {r['s_irq'] / r['k_irq']:.3f} | "
              f"{r['k_thr']:,} | {r['s_thr']:,} | {r['s_thr'] / r['k_thr']:.4f} | {r['s_pkt'] / r['k_pkt']:.4f} | "
              f"{r['s_flows'] / r['k_flows']:.4f} |")
    for role in ("fit", "hold-out"):
        sel = [r for r in rs if r["role"] == role]
        if not sel:
            continue
        worst = max(sel, key=lambda r: abs(r["s_irq"] / r["k_irq"] - 1))
        within = sum(1 for r in sel if abs(r["s_irq"] / r["k_irq"] - 1) <= 0.10)
        cnt = sum(1 for r in sel if all(abs(r["s_" + x] / r["k_" + x] - 1) <= 0.01 for x in ("thr", "pkt", "flows")))
        print(f"\n{role}: {within} of {len(sel)} runs within 10 % on timer interrupts (worst "
              f"{worst['s_irq'] / worst['k_irq']:.3f}, {worst['run']}); {cnt} of {len(sel)} with throttled, packets "
              f"and flows within 1 %")
    print("\none command, e.g.: " + " ".join(rs[0]["cmd"]))


if __name__ == "__main__":
    main()
