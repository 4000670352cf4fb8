#!/usr/bin/env python3
"""Turns the Google Benchmark JSON of bench/run.sh into results.md, summary.json, scaling.dat."""
import json, os, platform, re, subprocess, sys

out, reps = sys.argv[1], sys.argv[2]
sched = json.load(open(os.path.join(out, "bench_scheduler.json")))
sim = json.load(open(os.path.join(out, "bench_sim.json")))

def medians(doc):
    m = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") == "median":
            m[b["run_name"]] = b
    return m

ms, mm = medians(sched), medians(sim)

def ns(name):
    b = ms.get(name)
    if not b:
        return None
    t = b["real_time"] if "Memory" in name else b["cpu_time"]
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    per = t * unit
    if "items_per_second" in b and b["items_per_second"]:
        per = 1e9 / b["items_per_second"]
    return per

impls = [("Reference", "reference"), ("Fast", "fast"), ("HeapPacer", "binary heap"), ("FifoFloor", "FIFO floor")]
rows = []
def row(label, bench, arg):
    vals = [ns(f"{bench}<{i}>/{arg}") for i, _ in impls]
    rows.append((label, vals))
    return vals

ctx = sched["context"]
cpu = ""
try:
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
except Exception:
    pass
machine = (f"{platform.node()}: {cpu}, {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
           f"{platform.system()} {platform.release()}, load average {ctx.get('load_avg')}, "
           f"Google Benchmark library built as {ctx.get('library_build_type')}")
# run.sh pins each suite to the CPU that ran a short probe fastest just before it.
probe_path = os.path.join(out, "cpu_probe.txt")
probes = open(probe_path).read().split("\n") if os.path.exists(probe_path) else []
probes = [p for p in probes if p.strip()]
cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]

flows_list = [1, 1000, 100000, 1000000]
for slack in (0, 10000):
    for f in flows_list:
        row(f"paced, timer-driven, {f:,} flows, slack {slack // 1000} us", "BM_PacedTimer", f"{f}/{slack}")
for slack in (0, 10000):
    for f in flows_list:
        row(f"paced, dequeue after every packet, {f:,} flows, slack {slack // 1000} us", "BM_Paced", f"{f}/{slack}")
for f in (1000, 100000, 1000000):
    row(f"paced, shuffled order, {f:,} flows, slack 10 us", "BM_PacedShuffled", f"{f}/10000")
for burst in (32, 8):
    for f in (1000, 100000, 1000000):
        row(f"paced, bursts of {burst} (enqueue_burst/dequeue_burst), {f:,} flows", "BM_PacedBurst", f"{f}/{burst}")
    for f in (1000, 100000, 1000000):
        row(f"paced, bursts of {burst}, shuffled order, {f:,} flows", "BM_PacedShuffledBurst", f"{f}/{burst}")
for f in flows_list:
    row(f"unpaced, {f:,} flows", "BM_Unpaced", f"{f}")
for f in (1000, 1000000):
    row(f"flow lookup alone, {f:,} flows", "BM_Lookup", f"{f}")
for f in (1000, 100000):
    row(f"throttle alone (per flow), {f:,} flows", "BM_Throttle", f"{f}")
    row(f"unthrottle alone (per flow), {f:,} flows", "BM_Unthrottle", f"{f}")

def mem(impl, f, key):
    b = ms.get(f"BM_Memory<{impl}>/{f}/iterations:1")
    return b.get(key) if b else None

def fmt(v):
    return "—" if v is None else (f"{v:.1f}" if v < 1000 else f"{v:,.0f}")

lines = ["# Benchmark results", "",
         f"Machine: {machine}; compiler: {cxx}.",
         "CPU pinning (`bench/run.sh` probes each vCPU and pins each suite to the faster: a busy "
         "neighbour on the host slows one of them at a time): " + ("; ".join(probes) if probes else "not pinned") + ".",
         f"Medians of {reps} repetitions, ns per packet (or per flow where said), all "
         "implementations measured in the same run. The FIFO floor (bench/fifo_floor.hpp) releases "
         "packets in arrival order at their departure time and decides nothing: the cost of moving "
         "a packet at all. Command: `bench/run.sh`.", "",
         "| benchmark | reference (kernel structures) | fast | binary heap pacer | FIFO floor | reference / fast | fast / floor |",
         "|---|---|---|---|---|---|---|"]
for label, (r, f, h, fl) in rows:
    ratio = f"{r / f:.2f}x" if r and f else "—"
    floor_ratio = f"{f / fl:.2f}x" if f and fl else "—"
    lines.append(f"| {label} | {fmt(r)} | {fmt(f)} | {fmt(h)} | {fmt(fl)} | {ratio} | {floor_ratio} |")
lines += ["", "| memory | reference | fast |", "|---|---|---|"]
for f in (1000, 1000000):
    lines.append(f"| bytes per idle flow, {f:,} flows | {fmt(mem('Reference', f, 'bytes_per_flow'))} | "
                 f"{fmt(mem('Fast', f, 'bytes_per_flow'))} |")
    lines.append(f"| scheduler bytes per queued packet, {f:,} flows | {fmt(mem('Reference', f, 'bytes_per_packet'))} | "
                 f"{fmt(mem('Fast', f, 'bytes_per_packet'))} |")
simrate = {}
for name, b in mm.items():
    simrate[name] = b.get("sim_packets_per_cpu_s")
lines += ["", "| simulator (`ufq sim`, the main job) | simulated packets per CPU second |", "|---|---|"]
for name, v in simrate.items():
    lines.append(f"| {name} | {fmt(v)} |")
open(os.path.join(out, "results.md"), "w").write("\n".join(lines) + "\n")

# The headline workload: the seed's paced flows as a pacer thread runs them,
# dequeuing when its timer fires (BM_PacedTimer, slack 10 us). BM_Paced, which
# dequeues after every packet whatever the slack, is reported beside it.
def ratio_or_none(a, b):
    return a / b if a and b else None
def diff_or_none(a, b):
    return a - b if a and b else None
def paced(impl, f):
    return ns(f"BM_PacedTimer<{impl}>/{f}/10000")
def paced_every(impl, f):
    return ns(f"BM_Paced<{impl}>/{f}/10000")
summary = {
    "machine": machine,
    "repetitions": int(reps),
    "ns_per_packet": {
        "1k": paced("Fast", 1000),
        "1M": paced("Fast", 1000000),
        "workload": "BM_PacedTimer, slack 10 us: paced flows, dequeued when the watchdog fires",
        "paced": {str(f): paced("Fast", f) for f in flows_list},
        "paced_slack0": {str(f): ns(f"BM_PacedTimer<Fast>/{f}/0") for f in flows_list},
        "paced_dequeue_every_packet": {str(f): paced_every("Fast", f) for f in flows_list},
        "reference_paced_dequeue_every_packet": {str(f): paced_every("Reference", f) for f in flows_list},
        "heap_paced_dequeue_every_packet": {str(f): paced_every("HeapPacer", f) for f in flows_list},
        "unpaced": {str(f): ns(f"BM_Unpaced<Fast>/{f}") for f in flows_list},
        "paced_shuffled": {str(f): ns(f"BM_PacedShuffled<Fast>/{f}/10000") for f in (1000, 100000, 1000000)},
        "reference_paced_shuffled": {str(f): ns(f"BM_PacedShuffled<Reference>/{f}/10000")
                                     for f in (1000, 100000, 1000000)},
        "heap_paced_shuffled": {str(f): ns(f"BM_PacedShuffled<HeapPacer>/{f}/10000") for f in (1000, 100000, 1000000)},
        "reference_paced": {str(f): paced("Reference", f) for f in flows_list},
        "heap_paced": {str(f): paced("HeapPacer", f) for f in flows_list},
        "floor_paced": {str(f): paced("FifoFloor", f) for f in flows_list},
    },
    # The FIFO floor in the headline workload at 1k flows.
    "floor_ns_per_packet": paced("FifoFloor", 1000),
    # None where the whole suite's JSON lacks a row (e.g. one written before a
    # rename), so that a focus-only run (SUITES=focus) still summarizes.
    "speedup_vs_reference": {
        "1k": ratio_or_none(paced("Reference", 1000), paced("Fast", 1000)),
        "1M": ratio_or_none(paced("Reference", 1000000), paced("Fast", 1000000)),
    },
    "speedup_vs_reference_dequeue_every_packet": {
        "1k": ratio_or_none(paced_every("Reference", 1000), paced_every("Fast", 1000)),
        "1M": ratio_or_none(paced_every("Reference", 1000000), paced_every("Fast", 1000000)),
    },
    "bytes_per_flow": mem("Fast", 1000000, "bytes_per_flow"),
    "bytes_per_flow_1k": mem("Fast", 1000, "bytes_per_flow"),
    "bytes_per_packet": mem("Fast", 1000000, "bytes_per_packet"),
    "sim_packets_per_s": max((v for v in simrate.values() if v), default=None),
    "sim_packets_per_s_by_benchmark": simrate,
}

# The batched calls (BM_PacedBurst, BM_PacedShuffledBurst: bursts of 32 arrivals
# per wake-up, enqueue_burst + dequeue_burst; the heap and the floor, which have
# no batched calls, run the same harness with the single calls in a loop) and
# the ratios. `get` gives ns/packet of a benchmark name; computed from
# the whole suite here and again, below, from the focused run when there is one
# (ratios of medians measured side by side in one run).
def burst_keys(get):
    def b(impl, f, shuffled=False):
        return get(f"BM_Paced{'Shuffled' if shuffled else ''}Burst<{impl}>/{f}/32")
    sizes = (1000, 100000, 1000000)
    label = {1000: "1k", 100000: "100k", 1000000: "1M"}
    ns_keys = {}
    for impl, key in (("Fast", "paced_burst"), ("Reference", "reference_paced_burst"),
                      ("HeapPacer", "heap_paced_burst"), ("FifoFloor", "floor_paced_burst"),
                      ("FlowFloor", "flow_floor_paced_burst")):
        ns_keys[key] = {str(f): b(impl, f) for f in sizes}
        ns_keys[key.replace("paced_burst", "paced_shuffled_burst")] = {str(f): b(impl, f, True) for f in sizes}
    keys = {
        "ratios_workload": "BM_PacedBurst / BM_PacedShuffledBurst, bursts of 32 (the batched calls; the heap and "
                           "the floor: single calls in a loop); *_single_calls: BM_PacedShuffled and BM_PacedTimer",
        # Shuffled order, 1M flows: the binary heap's time over the fast scheduler's (target >= 4).
        "speedup_vs_heap_shuffled_1M": ratio_or_none(b("HeapPacer", 1000000, True), b("Fast", 1000000, True)),
        "speedup_vs_heap_shuffled_1M_single_calls": ratio_or_none(get("BM_PacedShuffled<HeapPacer>/1000000/10000"),
                                                                  get("BM_PacedShuffled<Fast>/1000000/10000")),
        # Shuffled over round robin, 1M flows, the same harness (target <= 4); and over the
        # timer-driven headline figure (BM_PacedTimer, single calls).
        "shuffled_vs_roundrobin_1M": ratio_or_none(b("Fast", 1000000, True), b("Fast", 1000000)),
        "shuffled_vs_roundrobin_1M_vs_headline": ratio_or_none(b("Fast", 1000000, True),
                                                               get("BM_PacedTimer<Fast>/1000000/10000")),
        "shuffled_vs_roundrobin_1M_single_calls": ratio_or_none(get("BM_PacedShuffled<Fast>/1000000/10000"),
                                                                get("BM_PacedTimer<Fast>/1000000/10000")),
        # Round robin, 1k flows: the fast scheduler's time over the FIFO floor's (target <= 2.5).
        "fast_vs_floor_1k": ratio_or_none(b("Fast", 1000), b("FifoFloor", 1000)),
        "fast_vs_floor_1k_timer": ratio_or_none(get("BM_PacedTimer<Fast>/1000/10000"),
                                                get("BM_PacedTimer<FifoFloor>/1000/10000")),
        "speedup_vs_reference_burst": {label[f]: ratio_or_none(b("Reference", f), b("Fast", f)) for f in (1000, 1000000)},
        "speedup_vs_reference_shuffled_burst_1M": ratio_or_none(b("Reference", 1000000, True), b("Fast", 1000000, True)),
        "floor_ns_per_packet_burst": b("FifoFloor", 1000),
        # The per-flow floor (bench/flow_floor.hpp): what shuffled order costs a queue that keeps
        # per-flow state and prefetches, over its round robin, 1M flows; the yardstick for
        # shuffled_vs_roundrobin_1M.
        "flow_floor_shuffled_vs_roundrobin_1M": ratio_or_none(b("FlowFloor", 1000000, True), b("FlowFloor", 1000000)),
        # What shuffled order adds per packet, in ns: the fast scheduler, and the per-flow floor.
        "shuffled_extra_ns_1M": {"fast": diff_or_none(b("Fast", 1000000, True), b("Fast", 1000000)),
                                 "flow_floor": diff_or_none(b("FlowFloor", 1000000, True), b("FlowFloor", 1000000))},
    }
    return ns_keys, keys

ns_burst, burst_ratio_keys = burst_keys(ns)
summary["ns_per_packet"].update(ns_burst)
summary.update(burst_ratio_keys)

# Adversarial flow keys (bench_adversarial.json, when present): per family and
# workload, ns/packet of both schedulers and their ratio to the random keys of
# the same classification (owner ids: "random"; packet hashes: "hash_random").
adv_path = os.path.join(out, "bench_adversarial.json")
if os.path.exists(adv_path):
    adv = json.load(open(adv_path))
    ma = medians(adv)
    adv_impls = [("Fast", "fast"), ("Reference", "reference")]
    sizes = [(100000, "100k"), (1000000, "1M")]
    pat = re.compile(r"BM_Adversarial<(\w+)>/(\w+)/(\w+)/(\d+)")
    fams, labels = [], {}
    for name, b in ma.items():
        m = pat.match(name)
        if m and m.group(3) not in fams:
            fams.append(m.group(3))
            labels[m.group(3)] = b.get("label")
    order = ["random", "sequential", "low16", "low20", "low32", "pow2", "high", "ref_bucket",
             "hash_random", "hash_sequential", "hash_low12"]
    fams.sort(key=lambda f: (order.index(f) if f in order else len(order), f))
    adv_reps = next((b.get("repetitions") for b in ma.values()), reps)

    def adv_ns(impl, workload, fam, flows):
        b = ma.get(f"BM_Adversarial<{impl}>/{workload}/{fam}/{flows}/iterations:{max(flows, 1000000)}")
        if not b or not b.get("items_per_second"):
            return None
        return 1e9 / b["items_per_second"]

    def baseline(fam):
        return "hash_random" if fam.startswith("hash_") else "random"

    detail, worst = {}, {}
    for workload in ("paced", "unpaced"):
        detail[workload] = {}
        for fam in fams:
            detail[workload][fam] = {}
            for flows, label in sizes:
                cell = {}
                for impl, short in adv_impls:
                    v, base = adv_ns(impl, workload, fam, flows), adv_ns(impl, workload, baseline(fam), flows)
                    cell[short] = v
                    cell[f"{short}_ratio"] = v / base if v and base else None
                detail[workload][fam][label] = cell
                r = cell["fast_ratio"]
                if fam != baseline(fam) and r is not None and (label not in worst or r > worst[label][0]):
                    worst[label] = (r, fam, workload)
    actx = adv["context"]
    summary["adversarial_vs_random"] = {label: worst[label][0] for _, label in sizes if label in worst}
    summary["adversarial_vs_random"]["worst_family"] = {
        label: f"{worst[label][1]} ({worst[label][2]})" for _, label in sizes if label in worst}
    summary["adversarial"] = {
        "what": "Fast ns/packet with chosen flow keys / with random keys, medians of "
                "interleaved repetitions in one run; worst over families and the paced and unpaced workloads",
        "repetitions": adv_reps,
        "load_avg": actx.get("load_avg"),
        "date": actx.get("date"),
        "families": labels,
        **detail,
    }
    alines = ["", "## Adversarial flow keys", "",
              f"Medians of {adv_reps} interleaved repetitions (bench_adversarial), ns per packet; ratio = "
              "against random keys of the same kind (owner ids: `random`, packet hashes: `hash_random`) "
              f"in the same run, {actx.get('date')} (bench/results/bench_adversarial.json; not re-run "
              f"when run.sh's SUITES leaves it out). Load average {actx.get('load_avg')}.", "",
              "| workload | keys | flows | fast | fast / random | reference | reference / random |",
              "|---|---|---|---|---|---|---|"]
    for workload in ("paced", "unpaced"):
        for fam in fams:
            for _, label in sizes:
                c = detail[workload][fam][label]
                fr = "—" if c["fast_ratio"] is None else f"{c['fast_ratio']:.2f}x"
                rr = "—" if c["reference_ratio"] is None else f"{c['reference_ratio']:.2f}x"
                alines.append(f"| {workload} | {fam} | {label} | {fmt(c['fast'])} | {fr} | "
                              f"{fmt(c['reference'])} | {rr} |")
    alines += ["", "Worst fast / random: " + ", ".join(
        f"{label} {worst[label][0]:.2f}x ({worst[label][1]}, {worst[label][2]})" for _, label in sizes if label in worst)
        + "."]
    with open(os.path.join(out, "results.md"), "a") as md:
        md.write("\n".join(alines) + "\n")

# The headline keys come from the focused run when there is one (bench_focus.json:
# paced 1k/1M only, 5 interleaved repetitions), the rest from the whole suite.
focus_path = os.path.join(out, "bench_focus.json")
if os.path.exists(focus_path):
    fm = medians(json.load(open(focus_path)))
    def fns(name):
        b = fm.get(name)
        return 1e9 / b["items_per_second"] if b and b.get("items_per_second") else None
    f1k, f1m = fns("BM_PacedTimer<Fast>/1000/10000"), fns("BM_PacedTimer<Fast>/1000000/10000")
    r1k, r1m = fns("BM_PacedTimer<Reference>/1000/10000"), fns("BM_PacedTimer<Reference>/1000000/10000")
    if f1k and f1m and r1k and r1m:
        summary["ns_per_packet"]["1k"], summary["ns_per_packet"]["1M"] = f1k, f1m
        summary["speedup_vs_reference"] = {"1k": r1k / f1k, "1M": r1m / f1m}
        summary["headline_source"] = "bench_focus.json (5 interleaved repetitions, load average %s)" % (
            json.load(open(focus_path))["context"].get("load_avg"))
        summary["focus"] = {n: fns(n) for n in fm}
    # The ratios from the one focused run (its medians side by side);
    # a benchmark the focus filter left out keeps the whole suite's figure.
    focus_ns, focus_keys = burst_keys(lambda n: fns(n) if fm.get(n) else ns(n))
    for k, v in focus_ns.items():
        summary["ns_per_packet"][k] = v
    summary.update(focus_keys)
    # The shuffled single calls and the floor, from the same run where it has them.
    for impl, key in (("Fast", "paced_shuffled"), ("Reference", "reference_paced_shuffled"),
                      ("HeapPacer", "heap_paced_shuffled"), ("FifoFloor", "floor_paced_shuffled")):
        for f in (1000, 100000, 1000000):
            name = f"BM_PacedShuffled<{impl}>/{f}/10000"
            if fm.get(name):
                summary["ns_per_packet"].setdefault(key, {})[str(f)] = fns(name)
    for f in (1000, 1000000):
        if fm.get(f"BM_PacedTimer<FifoFloor>/{f}/10000"):
            summary["ns_per_packet"]["floor_paced"][str(f)] = fns(f"BM_PacedTimer<FifoFloor>/{f}/10000")
    # Memory per idle flow and per queued packet, when the focused run measured it.
    def fmem(impl, f, key):
        b = fm.get(f"BM_Memory<{impl}>/{f}/iterations:1")
        return b.get(key) if b else None
    if fmem("Fast", 1000000, "bytes_per_flow") is not None:
        summary["bytes_per_flow"] = fmem("Fast", 1000000, "bytes_per_flow")
        summary["bytes_per_flow_1k"] = fmem("Fast", 1000, "bytes_per_flow")
        summary["bytes_per_packet"] = fmem("Fast", 1000000, "bytes_per_packet")
    if fm.get("BM_PacedTimer<FifoFloor>/1000/10000"):
        summary["floor_ns_per_packet"] = fns("BM_PacedTimer<FifoFloor>/1000/10000")
    summary["ratios_source"] = "bench_focus.json (load average %s)" % (
        json.load(open(focus_path))["context"].get("load_avg"))
# One pacer per core (bench/mq_pacer.sh): the pacer with the sink egress, the
# highest aggregate rate with every flow within 1 %, 2 queues against 1.
mq_path = os.path.join(out, "mq_pacer.json")
if os.path.exists(mq_path):
    mq = json.load(open(mq_path))
    summary["mq"] = {
        "speedup_2_queues": mq.get("speedup_2_queues"),
        "pps_1_queue": mq.get("pps_1_queue"),
        "pps_2_queues": mq.get("pps_2_queues"),
        "flow_rate_error_max": mq.get("flow_rate_error_max"),
        "balanced": mq.get("balanced"),
        "cpu_per_packet_ratio_2_vs_1": mq.get("cpu_per_packet_ratio_2_vs_1"),
        "load_avg": mq.get("load_avg_before"),
        "date": mq.get("date"),
        "what": mq.get("what"),
    }
    one = (mq.get("same_rate_per_queue") or {}).get("1") or {}
    summary.setdefault("pacer", {})
    summary["pacer"]["sink_pps_1_queue"] = mq.get("pps_1_queue")
    summary["pacer"]["sink_cpu_ns_per_packet_at_half_capacity"] = one.get("pacer_cpu_ns_per_packet")
    with open(os.path.join(out, "results.md"), "a") as md:
        md.write("\n".join([
            "", "## One pacer per core (sink egress)", "",
            f"bench/mq_pacer.sh, {mq.get('date')}, {mq.get('uptime')}: {mq.get('what')}.", "",
            "| queues | packets/s sustained (median) | runs |", "|---|---|---|",
            f"| 1 (CPU 0) | {fmt(mq.get('pps_1_queue'))} | {', '.join(fmt(x) for x in mq.get('runs_1_queue', []))} |",
            f"| 2 (CPUs 0, 1) | {fmt(mq.get('pps_2_queues'))} | {', '.join(fmt(x) for x in mq.get('runs_2_queues', []))} |",
            "", f"2 queues / 1 queue: {mq.get('speedup_2_queues') or 0:.2f}x; worst flow rate error at capacity "
            f"{100 * (mq.get('flow_rate_error_max') or 0):.3f} %; every packet accounted for: {mq.get('balanced')}."]) + "\n")
# The price of precision (bench/price_of_precision.sh): `ufq pace` CPU per packet
# at 10us slack over the 1 ms tick, and their lateness p50, on the default
# workload (100k packets/s); the focus suite's run when there is one.
for pop_name in ("price-of-precision-focus.json", "price-of-precision.json"):
    pop_path = os.path.join(out, pop_name)
    if not os.path.exists(pop_path):
        continue
    pop = json.load(open(pop_path))
    rate = "100k" if "100k" in pop.get("rates", {}) else next(iter(pop.get("rates", {})), None)
    if rate is None:
        continue
    r, modes = pop["rates"][rate]["ratios"], pop["rates"][rate]["modes"]
    summary.setdefault("pacer", {}).update({
        "cpu_ratio_10us_vs_tick": r.get("cpu_10us_vs_tick"),
        "lateness_p50_ratio_10us_vs_tick": r.get("late_p50_10us_vs_tick"),
        "cpu_ratio_10us_vs_blast": r.get("cpu_10us_vs_blast"),
        "cpu_ns_per_packet": {m: v.get("with_ksoftirqd_ns") for m, v in modes.items()},
        "lateness_p50_ns": {m: v.get("late_p50_ns") for m, v in modes.items()},
        "precision_source": f"{pop_name}: {rate} packets/s, medians of {pop.get('reps')} runs of "
                            f"{pop.get('duration_s')} s per mode, load average after {' '.join(pop.get('loadavg_after', []))}",
    })
    break
# A suite left out of this run (SUITES) leaves its keys None: keep the figures
# of the earlier summary for those, and list them, so one focused run does not
# erase what only the whole suite measures.
summary_path = os.path.join(out, "summary.json")
carried = []
if os.path.exists(summary_path):
    earlier = json.load(open(summary_path))
    def carry(new, old, prefix):
        for k, v in old.items():
            if k in ("carried_over", "machine", "repetitions"):
                continue
            if isinstance(v, dict) and isinstance(new.get(k), dict):
                carry(new[k], v, prefix + k + ".")
            elif new.get(k) is None and v is not None and k in new:
                new[k] = v
                carried.append(prefix + k)
    carry(summary, earlier, "")
summary["carried_over"] = {
    "what": "keys this run did not measure (a suite left out by SUITES), kept from the earlier summary.json",
    "keys": carried,
}
json.dump(summary, open(summary_path, "w"), indent=2)
if paced("Fast", 1000) is None:  # the whole scheduler suite's rows are absent: keep the old plot data
    print(open(os.path.join(out, "results.md")).read())
    sys.exit(0)
with open(os.path.join(out, "scaling.dat"), "w") as d:
    d.write("# flows reference fast heap (paced, timer-driven, slack 10us, ns/packet), the same in shuffled "
            "order, then dequeuing after every packet\n")
    def shuffled(impl, f):
        v = ns(f"BM_PacedShuffled<{impl}>/{f}/10000")
        return "NaN" if v is None else v
    for f in flows_list:
        d.write(f"{f} {paced('Reference', f)} {paced('Fast', f)} {paced('HeapPacer', f)} "
                f"{shuffled('Reference', f)} {shuffled('Fast', f)} {shuffled('HeapPacer', f)} "
                f"{paced_every('Reference', f)} {paced_every('Fast', f)} {paced_every('HeapPacer', f)}\n")
print(open(os.path.join(out, "results.md")).read())
print(json.dumps(summary["speedup_vs_reference"]), summary["ns_per_packet"]["1k"], summary["ns_per_packet"]["1M"])
