#!/usr/bin/env python3
"""Measure `ufq pace` over a sweep of fq timer_slack values and wake-up
strategies, with repetitions interleaved, and write the median table and a
plot for docs/results.md.

  scripts/pace_sweep.py --ufq build/release/tools/ufq/ufq --reps 3 --duration 8 \
      --out docs/img/pace-sweep

Writes <out>/pace_sweep.jsonl (every run), <out>/pace_sweep.md (tables) and
<out>/pace_sweep.png and .svg (gnuplot). Needs only Python's standard library and
gnuplot. Runs on loopback only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SLACKS = ["0", "5us", "10us", "20us", "50us", "100us", "200us", "500us", "1ms"]
STRATEGIES = ["nanosleep", "epoll", "timerfd", "hybrid", "busy", "tick"]


def cpu_busy_other(seconds=1.0):
    """Non-idle CPU of the machine over `seconds`, % of one CPU (nothing of ours runs)."""
    import time
    def read():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return sum(v), v[3] + v[4]
    t0, i0 = read()
    time.sleep(seconds)
    t1, i1 = read()
    ncpu = os.cpu_count() or 1
    return 100.0 * ncpu * (1 - (i1 - i0) / max(1, t1 - t0))


def wait_quiet(limit_pct, max_wait):
    """Wait (bounded) until other processes use less than limit_pct of one CPU."""
    import time
    start = time.time()
    while True:
        busy = cpu_busy_other()
        if busy < limit_pct or time.time() - start > max_wait:
            print(f"# machine busy {busy:.0f}% of one CPU before the run", file=sys.stderr, flush=True)
            return busy


def run(ufq, args):
    cmd = [ufq, "pace", "--json", "-q"] + args
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def slack_ns(word):
    units = {"us": 1000, "ms": 1000000, "s": 1000000000}
    for u, f in units.items():
        if word.endswith(u) and word[: -len(u)].replace(".", "").isdigit():
            return int(float(word[: -len(u)]) * f)
    return int(word)


def other_load(r):
    # Non-idle CPU of the whole machine (2 CPUs = 200 %) not used by us.
    sysbusy = 100.0 - r["system_cpu"]["idle_pct"]
    ncpu = os.cpu_count() or 1
    return max(0.0, sysbusy * ncpu - r["process_cpu_pct"])


def med(rows, key, sub=None):
    vals = [(r[key][sub] if sub else r[key]) for r in rows]
    return statistics.median(vals)


def spread(rows, key, sub=None):
    vals = [(r[key][sub] if sub else r[key]) for r in rows]
    return min(vals), max(vals)


def fmt_k(v):
    return f"{v/1000:.1f}k" if v >= 10000 else f"{v:.0f}"


def table(groups, order, label_name, out):
    out.append(f"| {label_name} | wake-ups/s | packets/wake-up | packets/s | interrupts/s (system) | cs/s (system) | pacer CPU | sender CPU | lateness p50 / p99 / max | rate error max | lost | other load |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in order:
        rows = groups.get(key, [])
        if not rows:
            continue
        lo, hi = spread(rows, "wakeups_per_s")
        out.append(
            "| {k} | {w} ({lo}–{hi}) | {ppw:.1f} | {pps} | {intr} | {cs} | {pc:.0f}% | {sc:.0f}% | {p50:.0f} / {p99:.0f} / {mx:.0f} µs | {re:.3f}% | {lost} | {ol:.0f}% |".format(
                k=key,
                w=fmt_k(med(rows, "wakeups_per_s")),
                lo=fmt_k(lo),
                hi=fmt_k(hi),
                ppw=med(rows, "packets_per_wakeup"),
                pps=fmt_k(med(rows, "pps")),
                intr=fmt_k(med(rows, "interrupts_per_s")),
                cs=fmt_k(med(rows, "context_switches_per_s")),
                pc=med(rows, "pacer_cpu_pct"),
                sc=med(rows, "cpu_pct"),
                p50=med(rows, "lateness_ns", "p50") / 1000,
                p99=med(rows, "lateness_ns", "p99") / 1000,
                mx=med(rows, "lateness_ns", "max") / 1000,
                re=100 * max(r["flow_rate_error_max"] for r in rows),
                lost=max(r["packets_lost"] for r in rows),
                ol=statistics.median(other_load(r) for r in rows),
            )
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ufq", default="build/release/tools/ufq/ufq")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", default="8")
    ap.add_argument("--out", default="docs/img/pace-sweep")
    ap.add_argument("--extra", default="", help="more ufq pace options, space separated")
    ap.add_argument("--skip-strategies", action="store_true")
    ap.add_argument("--slacks", default=None, help="timer_slack values to sweep (comma-separated)")
    ap.add_argument("--strategies", default=None, help="wake-up strategies to compare")
    ap.add_argument("--quiet-pct", type=float, default=30.0, help="wait for other load below this (%% of one CPU)")
    ap.add_argument("--max-wait", type=float, default=60.0, help="give up waiting after this many seconds")
    ap.add_argument("--report-only", action="store_true", help="re-read the jsonl, do not run")
    a = ap.parse_args()
    if a.slacks:
        SLACKS[:] = a.slacks.split(",")
    if a.strategies:
        STRATEGIES[:] = a.strategies.split(",")
    os.makedirs(a.out, exist_ok=True)
    jsonl = os.path.join(a.out, "pace_sweep.jsonl")
    extra = a.extra.split() if a.extra else []
    if not a.report_only:
        with open(jsonl, "w") as f:
            for rep in range(a.reps):
                wait_quiet(a.quiet_pct, a.max_wait)
                runs = run(a.ufq, ["--duration", a.duration, "--compare", "timer_slack=" + ",".join(SLACKS)] + extra)
                for r in runs:
                    r["sweep"] = "slack"
                    r["rep"] = rep
                    f.write(json.dumps(r) + "\n")
                if not a.skip_strategies:
                    wait_quiet(a.quiet_pct, a.max_wait)
                    runs = run(a.ufq, ["--duration", a.duration, "--compare", "timer=" + ",".join(STRATEGIES)] + extra)
                    for r in runs:
                        r["sweep"] = "timer"
                        r["rep"] = rep
                        f.write(json.dumps(r) + "\n")
                f.flush()
    rows = [json.loads(l) for l in open(jsonl)]
    slack = {}
    timer = {}
    for r in rows:
        if r["sweep"] == "slack":
            slack.setdefault(r["label"].split("=", 1)[1], []).append(r)
        else:
            timer.setdefault(r["label"].split("=", 1)[1], []).append(r)
    out = []
    first = rows[0]
    out.append(f"Workload: {first['flows']} flows, {first['rate_pps']:.0f} packets/s in total, {first['packet_size']} B payload, "
               f"{first['seconds']:.0f} s per run, egress `{first['egress']}`, path {first['path'].split(':')[0]}; "
               f"median of {a.reps} interleaved runs (wake-ups/s: min–max in brackets). "
               "\"other load\" = CPU used by other processes during the run (% of one CPU).")
    out.append("")
    out.append("**fq timer_slack sweep** (strategy `nanosleep`: clock_nanosleep with PR_SET_TIMERSLACK = the window)")
    out.append("")
    table(slack, SLACKS, "timer_slack", out)
    if timer:
        out.append("")
        out.append("**Wake-up strategies** (fq timer_slack 10us; `tick` = wake on a 1 ms grid, the common QUIC-stack pacer)")
        out.append("")
        table(timer, STRATEGIES, "strategy", out)
    md = os.path.join(a.out, "pace_sweep.md")
    with open(md, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))

    # Plot: wake-ups/s, interrupts/s (left) and pacer CPU (right) against slack.
    dat = os.path.join(a.out, "pace_sweep.dat")
    with open(dat, "w") as f:
        for s in SLACKS:
            g = slack.get(s)
            if not g:
                continue
            x = max(slack_ns(s) / 1000.0, 0.5)  # 0 drawn at 0.5 us on the log axis
            f.write(f"{x} {med(g,'wakeups_per_s')} {med(g,'interrupts_per_s')} {med(g,'pacer_cpu_pct')} {med(g,'lateness_ns','p50')/1000} {med(g,'lateness_ns','p99')/1000}\n")
    png = os.path.join(a.out, "pace_sweep.png")
    svg = os.path.join(a.out, "pace_sweep.svg")
    # gnuplot runs in the output directory and the script names only files
    # there (single-quoted: no backquote substitution), so no directory name
    # is ever interpreted; PNG and SVG, one colour and marker per curve, the
    # legend below the plot, 0 placed and labelled on the log axis.
    title = f"ufq pace: {first['flows']} flows, {first['rate_pps']:.0f} pkt/s, real UDP on loopback (median of {a.reps})"
    gp = f"""
set title '{title.replace("'", "''")}'
set logscale x
set xlabel 'fq timer_slack (us, log scale; 0 drawn at 0.5)'
set xtics add ('0' 0.5)
set xrange [0.3:*]
set ylabel 'per second'
set y2label 'pacer thread CPU (%)'
set ytics nomirror
set y2tics
set y2range [0:100]
set yrange [0:*]
set key outside bottom center horizontal
set grid
set terminal pngcairo size 900,560 font ',10' noenhanced
set output 'pace_sweep.png'
plot 'pace_sweep.dat' using 1:2 with linespoints lw 2 lc rgb '#0072B2' pt 7 title 'pacer wake-ups/s (left)', \\
     'pace_sweep.dat' using 1:3 with linespoints lw 2 lc rgb '#D55E00' pt 5 title 'system interrupts/s (left)', \\
     'pace_sweep.dat' using 1:4 axes x1y2 with linespoints lw 2 dt 2 lc rgb '#009E73' pt 9 title 'pacer CPU % (right)'
set terminal svg size 900,560 font ',10' noenhanced dynamic
set output 'pace_sweep.svg'
replot
unset output
"""
    subprocess.run(["gnuplot"], input=gp, text=True, check=True, cwd=a.out)
    print(f"wrote {md}, {png}, {svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
