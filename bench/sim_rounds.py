#!/usr/bin/env python3
"""bench_sim side by side: several builds of the `ufq` command, each round
running bench/bench_sim once per build (UFQ_SIM_TOOL set to it) in a new
random order, pinned to one CPU; prints every measurement as
"round label benchmark M-packets-per-CPU-s", then per benchmark the median,
range and ratio of each build to the first (docs/simulator.md, "Speed").

Usage: bench/sim_rounds.py [--rounds N] [--cpu C] [--bench PATH] LABEL=UFQ ...
Example (the issue's start against this build):
  bench/sim_rounds.py --rounds 9 start=/tmp/b49cb03/tools/ufq/ufq \\
      now=build/release/tools/ufq/ufq
"""
import argparse, json, os, random, statistics, subprocess

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--bench", default="build/perf-bench/bench/bench_sim")
    ap.add_argument("tools", nargs="+", help="LABEL=path of a ufq command")
    a = ap.parse_args()
    tools = [t.split("=", 1) for t in a.tools]
    res = {}  # benchmark -> label -> [packets per CPU second]
    rng = random.Random(15)
    for r in range(1, a.rounds + 1):
        order = list(tools)
        rng.shuffle(order)
        for label, tool in order:
            env = dict(os.environ, UFQ_SIM_TOOL=tool)
            out = subprocess.run(["taskset", "-c", a.cpu, a.bench, "--benchmark_format=json"], env=env,
                                 check=True, capture_output=True, text=True).stdout
            for b in json.loads(out)["benchmarks"]:
                name = b["name"].replace("/iterations:1/manual_time", "")
                v = b["sim_packets_per_cpu_s"]
                print(f"{r} {label} {name} {v / 1e6:.3f}M", flush=True)
                res.setdefault(name, {}).setdefault(label, []).append(v)
    first = tools[0][0]
    for name, by in res.items():
        base = statistics.median(by[first])
        for label, _ in tools:
            v = by[label]
            m = statistics.median(v)
            print(f"# {name} {label}: median {m / 1e6:.3f} M/s ({min(v) / 1e6:.3f}-{max(v) / 1e6:.3f}, "
                  f"{len(v)} rounds), {m / base:.3f}x {first}")

if __name__ == "__main__":
    main()
