#!/usr/bin/env bash
# Where the pacer thread's CPU goes: samples the `ufq-pacer` thread of a
# `ufq pace` run with perf (cpu-clock, kernel call chains) and sorts every
# sample into one bucket by what its stack holds: the send system call
# (split into the send path proper and the loopback receive softirq that
# runs inside it), the sleep/wake-up system calls (futex, clock_nanosleep,
# epoll/poll), interrupts, the scheduler library (ufq::FqScheduler), and the
# rest of the pacer's user-space loop.
#
# Usage: bench/profile_pacer.sh [UFQ] [SECONDS] -- [ufq pace arguments...]
#   e.g. bench/profile_pacer.sh build/release/tools/ufq/ufq 4 -- fq timer_slack 10us
# Needs perf (Debian's linux-perf) and root.
set -euo pipefail
ufq=${1:-build/release/tools/ufq/ufq}
secs=${2:-4}
shift 2 || true
[[ ${1:-} == -- ]] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ufq" pace --duration $((secs + 3)) -q --no-probe "$@" > "$tmp/pace.txt" &
pace=$!
sleep 1.5
tid=""
for t in /proc/$pace/task/*; do
  [[ $(cat "$t/comm" 2>/dev/null) == ufq-pacer ]] && tid=$(basename "$t")
done
[[ -n $tid ]] || { echo "no ufq-pacer thread in $pace" >&2; exit 1; }
perf record -q -e cpu-clock -F 4999 -g -t "$tid" -o "$tmp/perf.data" -- sleep "$secs" 2>/dev/null
wait "$pace"
perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null | python3 -c '
import sys, collections
buckets = collections.Counter()
stack = []
def classify(st):
    s = " ".join(st)
    top = st[0] if st else ""
    if "sendmmsg" in s or "sendmsg" in s:
        if any(k in s for k in ("net_rx_action", "process_backlog", "__netif_receive_skb", "ip_rcv", "udp_rcv")):
            return "send call: loopback receive (softirq inside the send)"
        return "send call: UDP/IP send path"
    if "futex" in s: return "sleep/wake: futex"
    if "nanosleep" in s: return "sleep/wake: clock_nanosleep"
    if "epoll" in s or "do_sys_poll" in s or "ppoll" in s: return "sleep/wake: epoll/poll"
    if "timerfd" in s: return "sleep/wake: timerfd"
    if "sysvec_" in s or "irq" in top: return "interrupts"
    if "schedule" in s or "finish_task_switch" in s: return "context switch (other)"
    if "ufq::FqScheduler" in top or "ufq::reference" in top: return "user: fq scheduler"
    if top.startswith("[k]") or "entry_SYSCALL" in s or "do_syscall" in s: return "kernel: other"
    return "user: pacer loop, completions, ring"
for line in sys.stdin:
    line = line.strip()
    if not line:
        if stack: buckets[classify(stack)] += 1
        stack = []
        continue
    parts = line.split(None, 1)
    stack.append(parts[1] if len(parts) > 1 else parts[0])
if stack: buckets[classify(stack)] += 1
total = sum(buckets.values()) or 1
print(f"pacer thread samples: {total}")
print("| where | share |")
print("|---|---|")
for k, v in buckets.most_common():
    print(f"| {k} | {100.0 * v / total:.1f} % |")
'
grep -E "per packet|wake-ups/s" "$tmp/pace.txt" | head -3
