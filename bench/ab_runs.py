#!/usr/bin/env python3
"""Side-by-side timings of builds or settings that one process cannot hold at
once (two builds of bench_scheduler, huge pages on and off): every round runs
each variant once, in its own process, in a new random order, all pinned to one
CPU; the report is the median CPU time per packet of each benchmark per
variant over the rounds, and the issue-14 ratios of each variant (fast / heap
shuffled, shuffled / round robin, when those benchmarks are in the filter).

Usage: bench/ab_runs.py [--rounds N] [--cpu C] [--filter REGEX] [--min-time S]
                        LABEL=[ENV=VALUE,...:]BINARY ...
Example (huge pages on against off, the same binary):
  bench/ab_runs.py --rounds 5 --cpu 1 \\
      on=build/perf-bench/bench/bench_scheduler \\
      off=UFQ_HUGE_PAGES=0:build/perf-bench/bench/bench_scheduler
"""
import argparse, json, os, random, re, statistics, subprocess, sys

DEFAULT_FILTER = r"^BM_Paced(Shuffled)?Burst<(Fast|HeapPacer)>/(100000|1000000)/32$"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--filter", default=DEFAULT_FILTER)
    ap.add_argument("--min-time", default="0.2")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--isolate", action="store_true",
                    help="each benchmark in its own process (no benchmark sees memory another freed: "
                         "glibc reuses it, with its pages, huge or not)")
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    variants = []
    for v in a.variants:
        label, spec = v.split("=", 1)
        env = dict(os.environ)
        if ":" in spec:
            envs, binary = spec.rsplit(":", 1)
            for kv in envs.split(","):
                k, val = kv.split("=", 1)
                env[k] = val
        else:
            binary = spec
        variants.append((label, env, binary))
    times = {}  # label -> name -> [ns per packet]
    rng = random.Random(14)
    filters = [a.filter]
    if a.isolate:
        listed = subprocess.run([variants[0][2], "--benchmark_list_tests", "--benchmark_filter=" + a.filter],
                                check=True, capture_output=True, text=True).stdout.split()
        filters = ["^" + re.escape(n) + "$" for n in listed]
    for r in range(a.rounds):
        order = [(v, f) for v in variants for f in filters]
        rng.shuffle(order)
        for (label, env, binary), flt in order:
            cmd = ["taskset", "-c", a.cpu, binary, "--benchmark_filter=" + flt,
                   "--benchmark_min_time=" + a.min_time, "--benchmark_format=json"]
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
            for b in json.loads(out)["benchmarks"]:
                ns = 1e9 / b["items_per_second"] if "items_per_second" in b else b["cpu_time"]
                times.setdefault(label, {}).setdefault(b["name"], []).append(ns)
        print(f"round {r + 1} done", file=sys.stderr, flush=True)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{a.rounds} rounds, CPU {a.cpu}, load average at the end {' '.join(load)}")
    med = {l: {n: statistics.median(v) for n, v in d.items()} for l, d in times.items()}
    names = sorted({n for d in med.values() for n in d})
    print("| benchmark (ns per packet, CPU time, median) | " + " | ".join(l for l, _, _ in variants) + " |")
    print("|---|" + "---|" * len(variants))
    for n in names:
        print(f"| {n} | " + " | ".join(f"{med[l].get(n, float('nan')):.1f}" for l, _, _ in variants) + " |")
    # Ratios of medians, and (in brackets) the median of the ratios within each
    # process: both benchmarks of a ratio ran seconds apart in the same process,
    # so the pairing cancels most of the load's drift.
    def paired(l, num, den):
        a, b = times[l].get(num), times[l].get(den)
        return statistics.median(x / y for x, y in zip(a, b)) if a and b else None
    for flows in (100000, 1000000):
        for l, _, _ in variants:
            m = med[l]
            fsn, hsn, frn = (f"BM_PacedShuffledBurst<Fast>/{flows}/32", f"BM_PacedShuffledBurst<HeapPacer>/{flows}/32",
                             f"BM_PacedBurst<Fast>/{flows}/32")
            fs, hs, fr = m.get(fsn), m.get(hsn), m.get(frn)
            parts = []
            if fs and hs: parts.append(f"heap/fast shuffled {hs / fs:.2f}x [{paired(l, hsn, fsn):.2f}x]")
            if fs and fr: parts.append(f"shuffled/round-robin {fs / fr:.2f}x [{paired(l, fsn, frn):.2f}x]")
            if parts: print(f"{flows} flows, {l}: " + ", ".join(parts))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"load": load, "times": times, "medians": med}, f, indent=1)

main()
