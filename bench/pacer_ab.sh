#!/usr/bin/env bash
# Two `ufq` binaries side by side on the pacer with the sink egress (no sockets:
# the scheduler, the driver loop and the sleeper alone), runs interleaved A B A B
# so both see the same machine; prints the median pacer CPU per packet and
# wake-ups/s of each and their ratio.
# Usage: bench/pacer_ab.sh UFQ_A UFQ_B [RUNS] [RATE] [FLOWS] [DURATION]
#   (defaults 5 runs, 1M packets/s, 1000 flows, 4 s)
set -euo pipefail
a=$1 b=$2 runs=${3:-5} rate=${4:-1M} flows=${5:-1000} dur=${6:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < runs; i++)); do
  for side in a b; do
    bin=$a; [[ $side == b ]] && bin=$b
    "$bin" pace --egress sink --flows "$flows" --rate "$rate" --duration "$dur" --json -q --no-probe \
      > "$tmp/$side.$i.json"
  done
done
python3 - "$tmp" "$runs" "$a" "$b" "$rate" "$flows" <<'PY'
import json, statistics, sys
tmp, runs, a, b, rate, flows = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
res = {}
for side in "ab":
    rows = [json.load(open(f"{tmp}/{side}.{i}.json"))[0] for i in range(runs)]
    ns = [r["pacer_cpu_pct"] / 100 * r["seconds"] * 1e9 / r["packets_sent"] for r in rows]
    ok = all(r["packets_sent"] == r["packets_generated"] for r in rows)
    res[side] = (statistics.median(ns), statistics.median(r["wakeups_per_s"] for r in rows),
                 statistics.median(r["pps"] for r in rows), ok, ns)
print(f"pacer, sink egress, {flows} flows, {rate} packets/s, medians of {runs} interleaved runs")
for side, name in (("a", a), ("b", b)):
    n, w, p, ok, all_ns = res[side]
    print(f"  {side}: {name}: {n:.0f} ns pacer CPU per packet, {w:,.0f} wake-ups/s, {p:,.0f} packets/s"
          f"{'' if ok else ' (NOT every packet sent)'}; runs: {', '.join(f'{x:.0f}' for x in all_ns)}")
print(f"  a / b: {res['a'][0] / res['b'][0]:.2f}x")
PY
