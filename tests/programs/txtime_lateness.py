#!/usr/bin/env python3
"""SO_TXTIME with SCM_TXTIME through Python's socket module: a sender gives
each datagram a departure time (CLOCK_MONOTONIC ns), a receiver takes the
kernel's receive timestamp of each, and the lateness (arrival - departure)
is reported as a distribution next to this machine's timer latency and the
timer slack given to `ufq run` (docs/run.md, "Measured").

  tests/programs/txtime_lateness.py --ufq build/release/tools/ufq/ufq [--check] [--json FILE]

The sender runs as the program, once without and once with
`ufq run fq timer_slack SLACK flow_limit COUNT --` (room for every datagram,
so that the sender never waits for room and what is measured is the
pacer's timing alone). Without fq on the path (loopback has no
qdisc) the kernel ignores the departure times and every datagram leaves at
once, early. --check (the ctest) exits 1 unless, with ufq run, every datagram arrives,
none more than --early-tolerance before its departure time, and the
lateness stays within slack + --late-allowance + 4 x the timer's p99 (p99)
and slack + --max-late-allowance + 4 x the timer's max (max); and unless the run without ufq run fails that
check (so the test is shown able to fail). Exit 77: no `ufq run` in this
build (skipped).

Quantiles are nearest rank on the exact values (the definition of
include/ufq/histogram.hpp, without its buckets).
"""
import argparse
import ctypes
import json
import math
import os
import shlex
import socket
import struct
import subprocess
import sys
import time

SKIP = 77
SO_TXTIME = 61          # = SCM_TXTIME (asm-generic/socket.h)
SO_TIMESTAMPNS = 35     # SO_TIMESTAMPNS_OLD: struct timespec, CLOCK_REALTIME
CLOCK_MONOTONIC = 1
TIMER_ABSTIME = 1
PR_SET_TIMERSLACK = 29
HEADER = struct.Struct("!IIQ")  # magic, sequence number, departure ns
MAGIC = 0x75667174


def quantile(sorted_values, q):
    """Nearest rank: the ceil(q * n)-th smallest (at least the first)."""
    if not sorted_values:
        return 0
    if q <= 0:
        return sorted_values[0]
    if q >= 1:
        return sorted_values[-1]
    r = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[r - 1]


def summary(values):
    v = sorted(values)
    out = {"count": len(v)}
    if v:
        out.update({"min": v[0], "p1": quantile(v, 0.01), "p10": quantile(v, 0.10),
                    "p50": quantile(v, 0.50), "p90": quantile(v, 0.90), "p99": quantile(v, 0.99),
                    "max": v[-1]})
    return out


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def timer_latency(samples=200, period_ns=200_000):
    """How late clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) returns with
    the thread's timer slack at 1 ns (as a pacer sets it), measured from
    Python (a microsecond or two of interpreter on top)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0)
    late = []
    for _ in range(samples):
        target = time.monotonic_ns() + period_ns
        ts = Timespec(target // 1_000_000_000, target % 1_000_000_000)
        libc.clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ctypes.byref(ts), None)
        late.append(time.monotonic_ns() - target)
    libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(0), 0, 0, 0)  # back to the default
    return summary(late)


def send(a):
    """The program: datagrams with departure times, then wait past the last."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_TXTIME, struct.pack("iI", CLOCK_MONOTONIC, 0))
    s.connect(("127.0.0.1", a.port))
    start = time.monotonic_ns() + a.lead_us * 1000
    pad = b"\0" * max(0, a.size - HEADER.size)
    last = start
    for i in range(a.count):
        # Even spacing with every fifth gap three times longer: a schedule no timer tick gives.
        dep = start + i * a.gap_us * 1000 + (i // 5) * 2 * a.gap_us * 1000
        last = dep
        s.sendmsg([HEADER.pack(MAGIC, i, dep) + pad], [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", dep))])
    # Stay until every datagram is due (and a margin), so what is measured is
    # the pacing, not the drain at exit.
    time.sleep(max(0.0, (last - time.monotonic_ns()) / 1e9) + 0.05)
    s.close()
    return 0


def realtime_minus_monotonic():
    """CLOCK_REALTIME - CLOCK_MONOTONIC (ns), from the tightest of a few reads."""
    best = None
    for _ in range(20):
        m0 = time.monotonic_ns()
        r = time.time_ns()
        m1 = time.monotonic_ns()
        if best is None or m1 - m0 < best[0]:
            best = (m1 - m0, r - (m0 + m1) // 2)
    return best[1]


def measure(a, mode):
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.2)
    port = rx.getsockname()[1]
    prefix = [] if mode == "without" else (
        shlex.split(a.with_prefix) if a.with_prefix else
        [a.ufq, "run", "fq", "timer_slack", a.slack, "flow_limit", str(max(100, a.count)), "--"])
    cmd = prefix + [sys.executable, os.path.abspath(__file__), "--role", "send", "--port", str(port),
                    "--count", str(a.count), "--gap-us", str(a.gap_us), "--size", str(a.size),
                    "--lead-us", str(a.lead_us)]
    print("# $", " ".join(shlex.quote(w) for w in cmd), file=sys.stderr, flush=True)
    sender = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    lateness, seen, per = [], set(), []
    deadline = time.monotonic() + 30
    while len(seen) < a.count and time.monotonic() < deadline:
        try:
            data, anc, _, _ = rx.recvmsg(2048, 256)
        except socket.timeout:
            if sender.poll() is not None:
                break
            continue
        if len(data) < HEADER.size:
            continue
        magic, seq, dep = HEADER.unpack_from(data)
        if magic != MAGIC or seq in seen:
            continue
        for level, kind, blob in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", blob[:16])
                arrival_real = sec * 1_000_000_000 + nsec
                seen.add(seq)
                lateness.append(arrival_real - realtime_minus_monotonic() - dep)
                per.append([seq, lateness[-1]])
    err = sender.communicate(timeout=30)[1]
    rx.close()
    early = [v for v in lateness if v < -a.early_tolerance_us * 1000]
    return {"mode": mode, "command": cmd, "exit_status": sender.returncode,
            "stderr_tail": err.strip().splitlines()[-8:], "sent": a.count, "received": len(seen),
            "early": len(early), "lateness_ns": summary(lateness), "per_datagram": per}


def slack_ns(word):
    for suf, f in (("us", 1000), ("ms", 1_000_000), ("ns", 1), ("s", 1_000_000_000)):
        if word.endswith(suf):
            return int(float(word[: -len(suf)]) * f)
    return int(float(word) * 1000)  # tc: a bare number is microseconds


def checks(a, r, timer):
    """The lateness bounds scale with the timer latency measured just before
    (a loaded machine's timers run milliseconds late at p99): p99 within
    slack + allowance + 4 x timer p99, max within slack + max allowance +
    4 x timer max."""
    fail = []
    slack = slack_ns(a.slack)
    late_p99 = a.late_allowance_us * 1000 + 4 * timer.get("p99", 0)
    late_max = a.max_late_allowance_us * 1000 + 4 * timer.get("max", 0)
    lat = r["lateness_ns"]
    if r["exit_status"] != 0:
        fail.append(f"the sender exited with {r['exit_status']}")
    if r["received"] != r["sent"]:
        fail.append(f"{r['received']} of {r['sent']} datagrams arrived")
    if r["early"]:
        fail.append(f"{r['early']} datagrams arrived more than {a.early_tolerance_us} us before their "
                    f"departure time (earliest {lat.get('min', 0) / 1000:.1f} us)")
    if lat.get("p99", 0) > slack + late_p99:
        fail.append(f"p99 lateness {lat['p99'] / 1000:.1f} us is above slack {slack / 1000:g} us + "
                    f"{late_p99 / 1000:.1f} us")
    if lat.get("max", 0) > slack + late_max:
        fail.append(f"max lateness {lat['max'] / 1000:.1f} us is above slack {slack / 1000:g} us + "
                    f"{late_max / 1000:.1f} us")
    return fail


def us(v):
    return f"{v / 1000:.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--role", choices=["measure", "send"], default="measure")
    p.add_argument("--ufq", default="build/release/tools/ufq/ufq")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--gap-us", type=int, default=300, help="base spacing of departure times")
    p.add_argument("--size", type=int, default=1200)
    p.add_argument("--lead-us", type=int, default=50_000, help="first departure this far after start")
    p.add_argument("--slack", default="10us", help="fq timer_slack given to ufq run")
    p.add_argument("--with-prefix", default="", help="replaces `ufq run fq timer_slack SLACK flow_limit COUNT --`")
    p.add_argument("--modes", default="without,with")
    p.add_argument("--check", action="store_true")
    p.add_argument("--early-tolerance-us", type=int, default=10,
                   help="clock conversion allowance (receive stamps are CLOCK_REALTIME)")
    # Generous: on a loaded machine the pacer thread waits ticks (4 ms at HZ=250) for a CPU; one
    # run under the full suite at load 12 had every datagram 14-38 ms late. A library that sent
    # only at exit would be 50-180 ms late, one that ignored SCM_TXTIME early.
    p.add_argument("--late-allowance-us", type=int, default=50000)
    p.add_argument("--max-late-allowance-us", type=int, default=100000)
    p.add_argument("--json")
    a = p.parse_args()
    if a.role == "send":
        return send(a)

    modes = a.modes.split(",")
    have_run = bool(a.with_prefix) or subprocess.run(
        [a.ufq, "run", "--", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if "with" in modes and not have_run:
        if a.check:
            print("SKIPPED: this build has no `ufq run` (the preload library): nothing to check")
            return SKIP
        modes = [m for m in modes if m != "with"]
    timer = timer_latency()
    rows = [measure(a, m) for m in modes]
    for r in rows:
        r["checks"] = checks(a, r, timer)
    print(f"timer latency (clock_nanosleep, 200 x 200 us, slack 1 ns, from Python): p50 {us(timer['p50'])} us, "
          f"p99 {us(timer['p99'])} us, max {us(timer['max'])} us; ufq run slack {a.slack}")
    print("| mode | datagrams | arrived | early | lateness p1 | p10 | p50 | p90 | p99 | max (us) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lat = r["lateness_ns"]
        print(f"| {r['mode']} | {r['sent']} | {r['received']} | {r['early']} | " +
              " | ".join(us(lat.get(k, 0)) for k in ("p1", "p10", "p50", "p90", "p99", "max")) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"timer_latency_ns": timer, "slack": a.slack, "runs": rows}, f, indent=1)
    if not a.check:
        return 0
    bad = 0
    for r in rows:
        if r["mode"] == "with" and r["checks"]:
            bad += 1
            print("FAIL with ufq run: " + "; ".join(r["checks"]))
            print("  stderr: " + " / ".join(r["stderr_tail"]))
        if r["mode"] == "without" and not r["checks"]:
            bad += 1
            print("FAIL without ufq run passed: the test cannot tell paced from unpaced here "
                  "(an fq qdisc on lo?)")
    print("PASS" if not bad else f"{bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
