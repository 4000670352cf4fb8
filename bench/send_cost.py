#!/usr/bin/env python3
"""One sendto() call's cost as a program sees it, plainly and under
`ufq run`, side by side in one run (docs/run.md, "Measured").

  bench/send_cost.py --ufq build/release/tools/ufq/ufq \
      --send-cost build/release/tests/programs/send_cost --reps 3

Runs the send_cost program (tests/programs/send_cost.cpp: each call timed
alone, calls spaced so the pacer keeps up) alternately without and with
`ufq run fq --`, for unconnected sendto() and connected send(), and prints
the medians of the per-run medians with their ratio. Under `ufq run` the
call copies the datagram into the pacer's queue and returns; the kernel's
send path then runs on the pacer thread, so the program's call can be
cheaper than the plain one: the pacer's CPU is the other half of the cost.

--check (the ctest): every call succeeded both ways; exit 77 when the build
has no `ufq run`. No bound on the figures (a loaded machine).
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys

SKIP = 77


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ufq", default="build/release/tools/ufq/ufq")
    p.add_argument("--send-cost", default="build/release/tests/programs/send_cost")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--size", type=int, default=1200)
    p.add_argument("--intervals-ns", default="20000,2000",
                   help="comma list: spacing of the calls (20 us: the pacer sleeps between calls; "
                        "2 us: it is kept awake)")
    p.add_argument("--with-prefix", default="", help="replaces `ufq run fq --`")
    p.add_argument("--json")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()

    have_run = bool(a.with_prefix) or subprocess.run(
        [a.ufq, "run", "--", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if not have_run:
        if a.check:
            print("SKIPPED: this build has no `ufq run` (the preload library)")
            return SKIP
        print("# no `ufq run` in this build: measuring without it only", file=sys.stderr)
    prefixes = {"without": []}
    if have_run:
        prefixes["with"] = shlex.split(a.with_prefix) if a.with_prefix else [a.ufq, "run", "fq", "--"]
    runs, bad = [], 0
    intervals = [int(x) for x in a.intervals_ns.split(",")]
    for rep in range(a.reps):
        for interval, kind in ((i, k) for i in intervals for k in ("sendto", "send")):
            for mode, prefix in prefixes.items():
                cmd = prefix + [a.send_cost, "--count", str(a.count), "--size", str(a.size),
                                "--interval-ns", str(interval)] + (["--connected"] if kind == "send" else [])
                print("# $", " ".join(shlex.quote(w) for w in cmd), file=sys.stderr, flush=True)
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                try:
                    j = json.loads(r.stdout.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    j = {}
                j.update({"mode": mode, "kind": kind, "interval_ns": interval, "rep": rep,
                          "exit_status": r.returncode,
                          "stderr_tail": r.stderr.strip().splitlines()[-5:]})
                if r.returncode != 0 or j.get("failed", 1) != 0:
                    bad += 1
                    print(f"FAIL {kind} {mode}: exit {r.returncode}, {j.get('failed')} failed calls; "
                          + " / ".join(j["stderr_tail"]))
                runs.append(j)
    print("| call | spacing | without ufq run: median (p10) ns | with ufq run: median (p10) ns | with / without |")
    print("|---|---|---|---|---|")
    for interval in intervals:
        for kind in ("sendto", "send"):
            med = {}
            for mode in prefixes:
                sel = [r for r in runs if r["kind"] == kind and r["mode"] == mode and r["interval_ns"] == interval
                       and "median_ns" in r]
                med[mode] = ((statistics.median(r["median_ns"] for r in sel),
                              statistics.median(r["p10_ns"] for r in sel)) if sel else None)
            w, u = med.get("without"), med.get("with")
            ratio = f"{u[0] / w[0]:.2f}" if w and u else "-"
            cell = lambda m: f"{m[0]:g} ({m[1]:g})" if m else "-"
            print(f"| {kind}() {a.size} B, {a.count} calls x {a.reps} runs | {interval / 1000:g} us | {cell(w)} | "
                  f"{cell(u)} | {ratio} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "runs": runs}, f, indent=1)
    if a.check:
        print("PASS" if not bad else f"{bad} failed")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
