#!/usr/bin/env python3
"""The guest model against the kernel event by event (docs/results.md section 3).

  scripts/event_compare.py derive RUN_DIR OUT.json
      From a kernel-fq run made with --trace (RUN_DIR/trace.txt, summary.json): the
      distributions below, a small file for tests/data/kernel-6.1/events/.
  scripts/event_compare.py compare EVENTS.json [UFQ_BINARY]
      Runs the guest model (tests/data/kernel-6.1/guest-model.json, as
      scripts/kernel_compare.py) on the same workload with --event-trace and prints
      kernel and model side by side.

Both sides are measured over the same span: from 0.2 s after the first departure to
0.2 s before the end of the send period. Distributions: packets per watchdog expiry
(departures from one expiry to the next), watchdog expiry - soft expiry and - hard
expiry, the interval between watchdog expiries, tick expiries/s, the share of
departures made by the sender's own send (task context) rather than by a softirq,
and interrupts that expired at least one timer (expiries less than 3 us apart count
as one interrupt). Timer interrupts/s are over the whole send period on both sides.
"""
import json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def summarise(events, t0, t1):
    """events: (t_ns, kind, extra) sorted; kind wd (extra=(soft, hard)), tick, xmit (extra=ctx)."""
    ev = [e for e in events if t0 <= e[0] < t1]
    span = (t1 - t0) / 1e9
    wd = [e for e in ev if e[1] == "wd"]
    ticks = [e for e in ev if e[1] == "tick"]
    xmit = [e for e in ev if e[1] == "xmit"]
    per, n, seen = [], 0, False
    for e in ev:
        if e[1] == "wd":
            if seen:
                per.append(n)
            seen, n = True, 0
        elif e[1] == "xmit":
            n += 1
    late_soft = [(e[0] - e[2][0]) / 1e3 for e in wd]
    late_hard = [(e[0] - e[2][1]) / 1e3 for e in wd]
    gaps = [(b[0] - a[0]) / 1e3 for a, b in zip(wd, wd[1:])]
    # Distinct interrupts that expired something: expiries less than 3 us apart share one.
    irq_times = sorted(e[0] for e in ev if e[1] in ("wd", "tick"))
    distinct = sum(1 for i, t in enumerate(irq_times) if i == 0 or t - irq_times[i - 1] > 3000)
    return {
        "span_s": span,
        "watchdog_expiries_per_s": len(wd) / span,
        "tick_expiries_per_s": len(ticks) / span,
        "departures_per_s": len(xmit) / span,
        "departures_in_task_share": sum(1 for e in xmit if e[2] == "task") / max(len(xmit), 1),
        "interrupts_expiring_something_per_s": distinct / span,
        "packets_per_expiry": {"mean": sum(per) / max(len(per), 1), "p50": pct(per, .5), "p90": pct(per, .9),
                               "p99": pct(per, .99)},
        "expiry_minus_soft_us": {"p1": pct(late_soft, .01), "p50": pct(late_soft, .5), "p99": pct(late_soft, .99)},
        "expiry_minus_hard_us": {"p1": pct(late_hard, .01), "p50": pct(late_hard, .5), "p99": pct(late_hard, .99)},
        "interval_between_expiries_us": {"p10": pct(gaps, .1), "p50": pct(gaps, .5), "p90": pct(gaps, .9)},
    }


LINE = re.compile(r"^\s*(\S+)-(\d+)\s+\[\d+\]\s+(\S+)\s+([\d.]+): (\w+): (.*)$")


def kernel_events(trace):
    events, armed = [], {}
    for line in open(trace):
        m = LINE.match(line)
        if not m:
            continue
        task, flags, ts, ev, rest = m.group(1), m.group(3), m.group(4), m.group(5), m.group(6)
        t = round(float(ts) * 1e9)
        if ev == "hrtimer_start" and "function=qdisc_watchdog" in rest:
            h = re.search(r"hrtimer=(\S+)", rest).group(1)
            armed[h] = (int(re.search(r"softexpires=(\d+)", rest).group(1)), int(re.search(r" expires=(\d+)", rest).group(1)))
        elif ev == "hrtimer_expire_entry":
            now = int(re.search(r"now=(\d+)", rest).group(1))
            if "function=qdisc_watchdog" in rest:
                events.append((now, "wd", armed.get(re.search(r"hrtimer=(\S+)", rest).group(1), (now, now))))
            elif "function=tick_sched_timer" in rest:
                events.append((now, "tick", None))
        elif ev == "net_dev_xmit":
            softirq = len(flags) > 2 and flags[2] in "sSH"
            events.append((t, "xmit", "softirq" if softirq or task != "fqload" else "task"))
    events.sort(key=lambda e: e[0])
    return events


def window(events, dur_s):
    first = next(e[0] for e in events if e[1] == "xmit")
    return first + 200_000_000, first + int(dur_s * 1e9) - 200_000_000


def derive(run_dir, out):
    k = json.load(open(os.path.join(run_dir, "summary.json")))
    ev = kernel_events(os.path.join(run_dir, "trace.txt"))
    t0, t1 = window(ev, float(k["DUR"]))
    s = summarise(ev, t0, t1)
    s["interrupts_per_s"] = k["LOC_per_s"]  # over the whole send period (not the span above)
    keep = {x: k[x] for x in ("FLOWS", "PPS", "SIZE", "DUR", "MODE", "FQOPTS", "fq_options", "LOC_per_s")}
    json.dump({"run": os.path.basename(run_dir.rstrip("/")), "workload": keep, "kernel": s}, open(out, "w"), indent=1)
    print(json.dumps(s, indent=1))


def model_events(path):
    events = []
    for line in open(path):
        p = line.split()
        t = int(p[0])
        if p[1] == "wd":
            events.append((t, "wd", (int(p[2]), int(p[3]))))
        elif p[1] == "tick":
            events.append((t, "tick", None))
        elif p[1] == "xmit":
            events.append((t, "xmit", p[2]))
    return events


def compare(events_file, ufq):
    import kernel_compare as kc
    d = json.load(open(events_file))
    k = dict(d["workload"])
    k["run"] = d["run"]
    k["run"] = f"{k['MODE']}-f{int(k['FLOWS'])}-p{int(k['PPS'])}-s" + \
        re.search(r"timer_slack\\?\s*(\S+)", k["FQOPTS"].replace("\\ ", " ")).group(1)
    kc.ufq = ufq
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "events.txt")
        cmd = kc.command(k) + []
        cmd = cmd[:-3] + ["--event-trace", trace] + cmd[-3:]
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        ev = model_events(trace)
    t0, t1 = window(ev, float(k["DUR"]))
    s = summarise(ev, t0, t1)
    s["interrupts_per_s"] = out["guest"]["window_timer_interrupts_per_s"]  # over the send period
    kern = d["kernel"]
    print(f"## {k['run']} (kernel: traced run {d['run']}; model: {' '.join(cmd[1:])})\n")
    print("| measure | kernel | model |\n|---|---|---|")
    for key, kv in kern.items():
        if key == "span_s":
            continue
        mv = s.get(key)
        if isinstance(kv, dict):
            print(f"| {key.replace('_', ' ')} | " + ", ".join(f"{q} {v:.2f}" for q, v in kv.items()) + " | " +
                  ", ".join(f"{q} {v:.2f}" for q, v in mv.items()) + " |")
        else:
            print(f"| {key.replace('_', ' ')} | {kv:,.3f} | {mv:,.3f} |")
    print()


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "derive":
        derive(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "compare":
        for f in sys.argv[2:]:
            if f.endswith(".json"):
                compare(f, next((a for a in sys.argv[2:] if not a.endswith(".json")), "build/release/tools/ufq/ufq"))
    else:
        sys.exit(__doc__)
