#!/usr/bin/env python3
"""Measure real UDP programs without and with `ufq run`, the same way: the
datagrams of the program's one flow captured on loopback by `ufq gaps`
(nanosecond timestamps at lo's transmit side), next to the rate the program's
own receiver reports (docs/run.md, "Measured").

  scripts/run_programs.py --ufq build/release/tools/ufq/ufq \
      --cases iperf3,iperf2-video --duration 5 --md out.md --json out.json

Each case runs once per mode:
  without   the program as it is (the prefix "")
  with      `ufq run --stats FILE fq OPTIONS -- ` before it
--with-prefix replaces the second prefix (words; {stats} is replaced by a
temporary file name); a mode whose prefix cannot run (no `ufq run` in this
build) is reported as skipped.

--check turns it into a test (exit 1 on failure, 77 when skipped: iperf3 or
`ufq run` missing, or no permission to capture): with ufq run the receiver's
rate must be at most --rate-tolerance above the expected one and at most
--rate-floor below it, the median gap within --gap-tolerance of fq's (when
the fq variant sets quantum) and at most --max-burst of the gaps below 20 us;
without ufq run the same checks must fail (so the test is shown able to
fail: both programs burst on their own). A paced run that fails is measured
again, up to --retries times, and fails the test only if every attempt
fails: on a loaded machine the program itself can be starved (iperf3 then
offers one datagram per 1 ms tick, half the rate asked of fq), which no
pacer can make up; a wrong rate or gap fails every attempt.

Needs Python's standard library, iperf3 / iperf (scripts/install-deps.sh),
and root or CAP_NET_RAW for the capture.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
FRAME_OVERHEAD = 8 + 20 + 14  # UDP, IPv4, Ethernet: what fq charges per datagram beyond its payload
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("#", *a, file=sys.stderr, flush=True)


def free_udp_port():
    """A port free for both UDP and TCP (iperf3 uses both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                    t.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def rate_bits(word):
    """100M, 10mbit, 1.5g, 800k -> bits/s (iperf and tc suffixes)."""
    w = word.lower()
    for suf, f in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1),
                   ("g", 1e9), ("m", 1e6), ("k", 1e3)):
        if w.endswith(suf):
            return float(w[: -len(suf)]) * f
    return float(w)


class ThreadCpu:
    """Samples /proc of a process tree every 100 ms: CPU seconds per thread
    (utime + stime), keeping each thread's last sample (a thread's figures
    vanish when it exits)."""

    def __init__(self, root_pid):
        self.root = root_pid
        self.threads = {}  # (pid, tid) -> [comm, first_ticks, last_ticks, first_t, last_t]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def tree(self):
        kids = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
                ppid = int(s[s.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError):
                pass
        out, todo = [], [self.root]
        while todo:
            p = todo.pop()
            out.append(p)
            todo += kids.get(p, [])
        return out

    def sample(self):
        now = time.monotonic()
        for pid in self.tree():
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as f:
                        s = f.read()
                except OSError:
                    continue
                comm = s[s.index("(") + 1: s.rindex(")")]
                v = s[s.rindex(")") + 2:].split()
                ticks = int(v[11]) + int(v[12])
                key = (pid, int(tid))
                if key not in self.threads:
                    self.threads[key] = [comm, ticks, ticks, now, now]
                else:
                    e = self.threads[key]
                    e[0], e[2], e[4] = comm, ticks, now

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(0.1)

    def start(self):
        self.thread.start()

    def finish(self):
        self.stop.set()
        self.thread.join()
        out = []
        for (pid, tid), (comm, t0, t1, s0, s1) in sorted(self.threads.items()):
            out.append({"pid": pid, "tid": tid, "comm": comm, "cpu_s": t1 / CLK_TCK,
                        "cpu_pct_sampled": 100.0 * (t1 - t0) / CLK_TCK / (s1 - s0) if s1 > s0 else 0.0})
        return out


class Capture:
    """`ufq gaps` on lo for one UDP destination port, started before the
    program and stopped once the flow has been idle for a while."""

    def __init__(self, ufq, port, max_s, segment, idle="700ms", min_len=100):
        # `greater N` drops iperf3's 4-byte setup datagrams (N counts the Ethernet header).
        filt = f"udp dst port {port} and greater {min_len}"
        self.cmd = [ufq, "gaps", "-i", "lo", "--filter", filt, "--idle", idle,
                    "--duration", f"{max_s}s", "--segment", str(segment), "--json"]
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if "capturing" not in line:
            out, err = self.proc.communicate()
            raise PermissionError((line + err).strip() or "ufq gaps did not start")

    def result(self, timeout):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            out, err = self.proc.communicate(timeout=5)
        if self.proc.returncode != 0:
            raise RuntimeError(f"ufq gaps failed: {err.strip()}")
        return json.loads(out)


# ---------------------------------------------------------------- the programs

class Iperf3:
    """iperf3 -u with --fq-rate R (SO_MAX_PACING_RATE) and -b above R: its own
    1 ms timer (--pacing-timer) sends -b; only fq would hold it to R."""
    name = "iperf3"
    binary = "iperf3"

    def __init__(self, a):
        self.a = a
        self.target = rate_bits(a.fq_rate)

    def fq_options(self):
        return self.a.iperf3_fq.split()

    def start_receiver(self, port):
        return subprocess.Popen(["iperf3", "-s", "-1", "-J", "-p", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def client(self, port):
        return ["iperf3", "-u", "-c", "127.0.0.1", "-p", str(port), "-b", self.a.iperf3_b,
                "--fq-rate", self.a.fq_rate, "-l", str(self.a.size), "-t", str(self.a.duration),
                "-J", "--get-server-output"]

    def receiver_rate(self, client_stdout, receiver):
        receiver.wait(timeout=10)
        j = json.loads(client_stdout)
        srv = j.get("server_output_json") or {}
        s = srv.get("end", {}).get("sum_received") or srv.get("end", {}).get("sum") or {}
        return {"bits_per_second": s.get("bits_per_second"), "packets": s.get("packets"),
                "lost_packets": s.get("lost_packets"),
                "sender_bits_per_second": j.get("end", {}).get("sum", {}).get("bits_per_second")}

    def expected(self, mode):
        """The payload rate the receiver should see: fq charges each datagram
        as its frame (payload + UDP 8 + IPv4 20 + Ethernet 14, as the kernel's
        qdisc_pkt_len), so R of frames is R * size / (size + 42) of payload.
        The same figure without ufq run: what the program asked fq for."""
        return self.target * self.a.size / (self.a.size + FRAME_OVERHEAD)


    def pacing_rate(self):
        return self.target


class Iperf2Video:
    """iperf2 --isochronous FPS:MEAN,0: a video sender's frame bursts (one
    frame's datagrams back to back every 1/FPS s), paced by `fq maxrate`."""
    name = "iperf2-video"
    binary = "iperf"

    def __init__(self, a):
        self.a = a

    def fq_options(self):
        return ["maxrate", self.a.video_maxrate] + self.a.video_fq.split()

    def start_receiver(self, port):
        return subprocess.Popen(["iperf", "-s", "-u", "-p", str(port), "-y", "C", "-l", "65000"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def client(self, port):
        return ["iperf", "-u", "-c", "127.0.0.1", "-p", str(port), "-l", str(self.a.size),
                f"--isochronous={self.a.video_fps}:{self.a.video_mean},0m", "-t", str(self.a.duration)]

    def receiver_rate(self, client_stdout, receiver):
        # The server reports one CSV line per test once the client's FIN datagram arrives.
        deadline = time.monotonic() + 5
        line = ""
        while time.monotonic() < deadline:
            line = receiver.stdout.readline()
            if line.count(",") >= 8:
                break
        receiver.terminate()
        receiver.wait(timeout=5)
        f = line.strip().split(",")
        if len(f) < 9:
            return {"bits_per_second": None}
        return {"bits_per_second": float(f[8]), "bytes": int(f[7]),
                "lost_packets": int(f[10]) if f[10].lstrip("-").isdigit() else None,
                "packets": int(f[11]) if len(f) > 11 and f[11].lstrip("-").isdigit() else None}

    def expected(self, mode):
        if mode == "without":
            return rate_bits(self.a.video_mean)
        return min(rate_bits(self.a.video_mean),
                   rate_bits(self.a.video_maxrate) * self.a.size / (self.a.size + FRAME_OVERHEAD))


    def pacing_rate(self):
        return rate_bits(self.a.video_maxrate)


CASES = {c.name: c for c in (Iperf3, Iperf2Video)}


def expected_gap_ns(a, case, variant):
    """fq's gap between datagrams of a paced flow: max(frame, quantum) at the
    pacing rate (fq delays a flow by a quantum once its credit is spent);
    None when the quantum is not given in the variant (the default quantum
    sends 2-3 datagrams per gap: the median gap is then 0)."""
    w = variant.split()
    if "quantum" not in w:
        return None
    quantum = int(w[w.index("quantum") + 1])
    return max(a.size + FRAME_OVERHEAD, quantum) * 8e9 / case.pacing_rate()


# ---------------------------------------------------------------- one run

def ufq_run_available(ufq):
    try:
        r = subprocess.run([ufq, "run", "--", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=10)
        return r.returncode == 0
    except OSError:
        return False


def with_prefix(a, case, stats, variant):
    if a.with_prefix:
        return [w.replace("{stats}", stats) for w in shlex.split(a.with_prefix)]
    return [a.ufq, "run", "--stats", stats, "fq"] + case.fq_options() + variant.split() + ["--"]


def measure(a, case, mode, variant=""):
    with open("/proc/loadavg") as f:
        load = float(f.read().split()[0])
    port = free_udp_port()
    stats = tempfile.NamedTemporaryFile(prefix="ufq-run-stats-", suffix=".json", delete=False).name
    os.unlink(stats)
    prefix = [] if mode == "without" else with_prefix(a, case, stats, variant)
    cmd = prefix + case.client(port)
    receiver = case.start_receiver(port)
    time.sleep(0.3)  # the receiver binds
    cap = Capture(a.ufq, port, max_s=a.duration + 20, segment=a.size)
    log("$", " ".join(shlex.quote(w) for w in cmd))
    t0 = time.monotonic()
    client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu = ThreadCpu(client.pid)
    cpu.start()
    try:
        out, err = client.communicate(timeout=a.duration + 30)
    except subprocess.TimeoutExpired:
        client.kill()
        out, err = client.communicate()
        err += "\n(killed: did not finish)"
    wall = time.monotonic() - t0
    threads = cpu.finish()
    gaps = cap.result(timeout=a.duration + 25)
    try:
        rx = case.receiver_rate(out, receiver)
    except Exception as e:  # a receiver that reported nothing: the row says so
        rx = {"bits_per_second": None, "error": str(e)}
    finally:
        if receiver.poll() is None:
            receiver.kill()
    run_stats = None
    if os.path.exists(stats):
        # One JSON line per report and process (`ufq run --stats`): keep the
        # program's final one (its first process's).
        reports = []
        with open(stats) as f:
            for line in f:
                try:
                    reports.append(json.loads(line))
                except ValueError:
                    reports.append({"unreadable": line[:200]})
        os.unlink(stats)
        finals = [r for r in reports if r.get("final")]
        run_stats = (finals or reports or [None])[0]
    row = {"case": case.name, "mode": mode, "variant": variant, "command": cmd, "exit_status": client.returncode,
           "stderr_tail": err.strip().splitlines()[-12:], "wall_s": wall, "loadavg_1min_before": load,
           "target_bps": case.expected(mode),
           "expected_gap_ns": expected_gap_ns(a, case, variant) if mode == "with" else None, "receiver": rx, "gaps": gaps, "threads": threads,
           "ufq_run_stats": run_stats}
    row["checks"] = checks(a, row)
    return row


def checks(a, row):
    """The test's conditions for a paced run; a list of failures (empty: pass)."""
    fail = []
    g = row["gaps"]
    rx = row["receiver"].get("bits_per_second")
    target = row["target_bps"]
    if row["exit_status"] != 0:
        fail.append(f"exit status {row['exit_status']}")
    if g["datagrams"] < 50:
        fail.append(f"only {g['datagrams']} datagrams captured")
    if rx is None:
        fail.append("the receiver reported no rate")
    elif not (1 - a.rate_floor) * target <= rx <= (1 + a.rate_tolerance) * target:
        fail.append(f"receiver rate {rx / 1e6:.3f} Mbit/s is not within -{100 * a.rate_floor:g} % .. "
                    f"+{100 * a.rate_tolerance:g} % of {target / 1e6:.3f} Mbit/s")
    gap = row.get("expected_gap_ns")
    if gap and abs(g["gap_ns"]["p50"] - gap) > a.gap_tolerance * gap:
        fail.append(f"median gap {g['gap_ns']['p50'] / 1000:.1f} us is not within {100 * a.gap_tolerance:g} % "
                    f"of fq's {gap / 1000:.1f} us")
    if g["burst_fraction"] > a.max_burst:
        fail.append(f"{100 * g['burst_fraction']:.1f} % of gaps are below {g['burst_gap_ns'] / 1000:g} us "
                    f"(at most {100 * a.max_burst:g} % allowed)")
    return fail


# ---------------------------------------------------------------- output

def pacer_cpu(row):
    """The pacer thread's CPU, % of one CPU over the program's run: the
    pacer's own CPU time from the `ufq run --stats` report (pacer.cpu_ns)."""
    st = row.get("ufq_run_stats") or {}
    ns = (st.get("pacer") or {}).get("cpu_ns") if isinstance(st, dict) else None
    if not isinstance(ns, (int, float)) or not row.get("wall_s"):
        return None
    return 100.0 * ns / 1e9 / row["wall_s"]


def program_cpu(row):
    """All the program's threads (the pacer's included), % of one CPU, from /proc samples."""
    if not row.get("threads") or not row.get("wall_s"):
        return None
    return 100.0 * sum(t["cpu_s"] for t in row["threads"]) / row["wall_s"]


def us(ns):
    return f"{ns / 1000:.1f}"


def markdown(rows):
    h = ("| program | mode | datagrams | rate at lo (Mbit/s) | receiver (Mbit/s) | lost | expected (Mbit/s) | error | "
         "gap p1 | p10 | p50 | p90 | p99 | max (us) | burst < 20 us | longest run | pacer CPU | program CPU | load |")
    out = [h, "|" + "---|" * (h.count("|") - 1)]
    for r in rows:
        if r.get("skipped"):
            out.append(f"| {r['case']} | {r['mode']} | skipped: {r['skipped']} |" + " |" * 17)
            continue
        g, q = r["gaps"], r["gaps"]["gap_ns"]
        rx = r["receiver"].get("bits_per_second")
        err = f"{100 * (rx - r['target_bps']) / r['target_bps']:+.2f} %" if rx else "-"
        cpu = pacer_cpu(r)
        label = r["mode"] + (f" (fq {r['variant']})" if r.get("variant") else "")
        out.append("| " + " | ".join([
            r["case"], label, str(g["datagrams"]), f"{g['payload_rate_bps'] / 1e6:.3f}",
            f"{rx / 1e6:.3f}" if rx else "-", str(r["receiver"].get("lost_packets", "-")),
            f"{r['target_bps'] / 1e6:.3f}", err,
            us(q["p1"]), us(q["p10"]), us(q["p50"]), us(q["p90"]), us(q["p99"]), us(q["max"]),
            f"{100 * g['burst_fraction']:.1f} %", str(g["longest_run"]),
            f"{cpu:.1f} %" if cpu is not None else "-",
            f"{program_cpu(r):.1f} %" if program_cpu(r) is not None else "-",
            f"{r['loadavg_1min_before']:.1f}"]) + " |")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ufq", default="build/release/tools/ufq/ufq")
    p.add_argument("--cases", default="iperf3,iperf2-video", help=f"comma list of {','.join(CASES)}")
    p.add_argument("--modes", default="without,with")
    p.add_argument("--duration", type=int, default=5, help="seconds each program sends")
    p.add_argument("--reps", type=int, default=1, help="runs per case and mode, interleaved")
    p.add_argument("--size", type=int, default=1200, help="UDP payload bytes per datagram")
    p.add_argument("--fq-rate", default="100M", help="iperf3 --fq-rate (SO_MAX_PACING_RATE), bits/s")
    p.add_argument("--iperf3-b", default="200M", help="iperf3 -b: its own pacing target, above --fq-rate")
    p.add_argument("--iperf3-fq", default="", help="fq options for the iperf3 case with ufq run")
    p.add_argument("--video-fps", type=int, default=30)
    p.add_argument("--video-mean", default="8m", help="iperf2 --isochronous mean rate")
    p.add_argument("--video-maxrate", default="12mbit", help="fq maxrate for the iperf2 case")
    p.add_argument("--video-fq", default="", help="more fq options for the iperf2 case")
    p.add_argument("--variants", default="",
                   help="';'-separated fq option sets added for the with mode, one run each (default: one, none)")
    p.add_argument("--with-prefix", default="", help="replaces `ufq run --stats {stats} fq OPTIONS --`")
    p.add_argument("--json", help="write every run here")
    p.add_argument("--md", help="write the markdown table here")
    p.add_argument("--check", action="store_true", help="exit 1 unless the paced runs pass (77: skipped)")
    p.add_argument("--rate-tolerance", type=float, default=0.05,
                   help="--check: the receiver's rate at most this far above the expected one")
    p.add_argument("--rate-floor", type=float, default=0.05,
                   help="--check: ... and at most this far below (a loaded machine's pacer thread loses rate)")
    p.add_argument("--gap-tolerance", type=float, default=0.10,
                   help="--check: median gap this close to fq's (when the variant sets quantum)")
    p.add_argument("--max-burst", type=float, default=0.10)
    p.add_argument("--retries", type=int, default=2,
                   help="--check: measure a failed paced run again up to this many times (0..5)")
    a = p.parse_args()
    if not 0 <= a.retries <= 5:
        p.error(f"--retries: {a.retries} is not in 0..5")

    cases = []
    for name in a.cases.split(","):
        if name not in CASES:
            p.error(f"--cases: unknown case \"{name}\" (known: {', '.join(CASES)})")
        cases.append(CASES[name](a))
    modes = a.modes.split(",")
    for m in modes:
        if m not in ("without", "with"):
            p.error(f"--modes: unknown mode \"{m}\" (without, with)")
    for c in cases:
        if not shutil.which(c.binary):
            msg = f"{c.binary} is not installed (scripts/install-deps.sh installs it)"
            if a.check:
                print("SKIPPED:", msg)
                return SKIP
            p.error(msg)
    have_run = a.with_prefix != "" or ufq_run_available(a.ufq)
    if a.check and "with" in modes and not have_run:
        print("SKIPPED: this build has no `ufq run` (the preload library): nothing to check")
        return SKIP

    rows = []
    for _ in range(a.reps):
        for c in cases:
            for m in modes:
                if m == "with" and not have_run:
                    rows.append({"case": c.name, "mode": m, "skipped": "no `ufq run` in this build"})
                    continue
                for v in (a.variants.split(";") if m == "with" else [""]):
                    try:
                        row = measure(a, c, m, v.strip())
                        # A failed paced run is measured again (see above);
                        # the failed attempts are kept in the row.
                        for _ in range(a.retries if a.check and m == "with" else 0):
                            if not row["checks"]:
                                break
                            earlier = row.get("failed_attempts", []) + [row["checks"]]
                            print(f"retry {c.name} with ufq run after: " + "; ".join(row["checks"]))
                            row = measure(a, c, m, v.strip())
                            row["failed_attempts"] = earlier
                        rows.append(row)
                    except PermissionError as e:
                        print(f"SKIPPED: cannot capture on lo: {e}")
                        return SKIP if a.check else 2
    md = markdown(rows)
    print(md, end="")
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": dict(zip(("sysname", "nodename", "release", "version", "machine"), os.uname())), "args": vars(a), "runs": rows}, f, indent=1)
    if not a.check:
        return 0
    bad = 0
    for r in rows:
        if r.get("skipped"):
            continue
        if r["mode"] == "with" and r["checks"]:
            bad += 1
            print(f"FAIL {r['case']} with ufq run: " + "; ".join(r["checks"]))
            print("  stderr: " + " / ".join(r["stderr_tail"]))
        if r["mode"] == "without" and not r["checks"]:
            bad += 1
            print(f"FAIL {r['case']} without ufq run passed the paced checks: the test cannot tell paced "
                  "from unpaced here (an fq qdisc on lo?)")
    print("PASS" if not bad else f"{bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
