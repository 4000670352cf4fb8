#!/usr/bin/env bash
# Instructions and simulated cache misses per packet of the burst harness
# (bench/paced_burst.hpp) under callgrind --cache-sim=yes: independent of the
# machine's load, unlike wall-clock time. Runs bench_probe_burst with W and 2W
# wake-ups and divides the difference by the W * BURST packets between them,
# so set-up and warm-up cancel out. Simulated caches: L1d 32 KiB, LL 32 MiB
# (this machine's L3; the L2 is not modelled), or LL=bytes: 4194304 at 100k
# flows keeps the working set / LL ratio of 1M flows against 32 MiB, at a tenth
# of the run time (callgrind at 1M flows takes over 10 minutes per run here).
# Usage: bench/count_burst.sh IMPL ORDER FLOWS [BURST] [WAKES]
#   IMPL fast|fast-single|reference|heap|floor|flow-floor (flow-floor: bench/flow_floor.hpp; fast-single: the fast scheduler's single calls in the same harness), ORDER roundrobin|shuffled; BURST 32, WAKES 2000 by default.
# Prints: impl order flows burst Ir/packet D1-misses/packet LL-misses/packet
# Environment: BUILD_DIR (default build/perf-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
impl=$1 order=$2 flows=$3 burst=${4:-32} wakes=${5:-2000}
build=${BUILD_DIR:-build/perf-bench}
probe=$build/bench/bench_probe_burst
[[ -x $probe ]] || cmake --build "$build" --target bench_probe_burst >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
totals() {  # Ir D1mr D1mw DLmr DLmw of one run
  valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --I1=32768,8,64 --LL="${LL:-33554432}",16,64 \
    --callgrind-out-file="$tmp/out.$1" "$probe" "$impl" "$order" "$flows" "$burst" "$1" 2>"$tmp/log.$1"
  awk '/^events:/ { for (i = 2; i <= NF; i++) name[i - 1] = $i }
       /^summary:/ { for (i = 2; i <= NF; i++) v[name[i - 1]] = $i }
       END { print v["Ir"], v["D1mr"], v["D1mw"], v["DLmr"], v["DLmw"] }' "$tmp/out.$1"
}
read -r i1 r1 w1 l1 m1 < <(totals "$wakes")
read -r i2 r2 w2 l2 m2 < <(totals $((2 * wakes)))
awk -v p=$((wakes * burst)) -v i="$((i2 - i1))" -v d="$((r2 + w2 - r1 - w1))" -v l="$((l2 + m2 - l1 - m1))" \
    -v tag="$impl $order $flows $burst" 'BEGIN { printf "%s %.1f %.2f %.2f\n", tag, i / p, d / p, l / p }'
