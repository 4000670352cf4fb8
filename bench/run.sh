#!/usr/bin/env bash
# Builds and runs the benchmark suite, writes bench/results/:
#   bench_scheduler.json, bench_sim.json  Google Benchmark output (medians of repetitions)
#   bench_adversarial.json                adversarial flow keys (repetitions interleaved)
#   bench_focus.json                      the headline paced 1k/1M figures (5 interleaved repetitions)
#   results.md                            the table, with the machine noted
#   summary.json                          headline figures (ns_per_packet, speedup_vs_reference,
#                                         speedup_vs_heap_shuffled_1M, shuffled_vs_roundrobin_1M,
#                                         fast_vs_floor_1k, bytes_per_flow, bytes_per_packet,
#                                         sim_packets_per_s, adversarial_vs_random, adversarial, mq, pacer)
#   mq_pacer.json                         1 queue against 2 (bench/mq_pacer.sh; suites focus, mq)
#   scaling.dat                           ns/packet against flows (docs/img/bench/scaling.png)
# Usage: bench/run.sh [REPETITIONS] [MIN_TIME_S]   (defaults 5 and 0.2)
# Environment: BUILD_DIR (default build/perf-bench), JOBS (default 1), FILTER (benchmark regex),
#   SUITES (default "scheduler focus sim adversarial": the ones to run; the others' JSON in
#   bench/results/ is summarized as it is), ADV_FILTER (regex for bench_adversarial),
#   BENCH_CPU (default "auto": pin every suite to the CPU where a short probe runs fastest
#   just before it; a number pins to that CPU; "" = not pinned).
# Why pinned: on this shared VM one vCPU at a time runs the same binary 1.3-1.65x slower
# than the other (a busy neighbour on the host; which vCPU changes over minutes), and an
# unpinned process stays on whichever it started on, so unpinned figures were bimodal.
# The probes are written to bench/results/cpu_probe.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
min_time=${2:-0.2}
build=${BUILD_DIR:-build/perf-bench}
jobs=${JOBS:-1}
out=bench/results
suites=" ${SUITES:-scheduler focus sim adversarial} "
mkdir -p "$out"
want_cpu=${BENCH_CPU-auto}
pin=()
: > "$out/cpu_probe.txt"
# Pins the suites that follow (sets `pin`), probing each CPU first when asked to.
choose_cpu() {
  local suite=$1 cpu=$want_cpu best_ns="" c ns
  pin=()
  [[ -n $cpu ]] && command -v taskset >/dev/null || return 0
  if [[ $cpu == auto ]]; then
    cpu=""
    for ((c = 0; c < $(nproc); c++)); do
      ns=$(taskset -c "$c" "$build/bench/bench_scheduler" --benchmark_filter='BM_PacedTimer<Fast>/1000/10000$' \
             --benchmark_min_time=0.2 --benchmark_format=json 2>/dev/null |
           python3 -c 'import json, sys; b = json.load(sys.stdin)["benchmarks"][0]; print("%.1f" % (1e9 / b["items_per_second"]))')
      echo "$(date -u +%FT%TZ) before $suite: probe on CPU $c: $ns ns per packet" | tee -a "$out/cpu_probe.txt"
      if [[ -z $best_ns ]] || awk -v a="$ns" -v b="$best_ns" 'BEGIN { exit !(a < b) }'; then
        cpu=$c
        best_ns=$ns
      fi
    done
  fi
  pin=(taskset -c "$cpu")
  echo "$(date -u +%FT%TZ) $suite: pinned to CPU $cpu" | tee -a "$out/cpu_probe.txt"
  export UFQ_BENCH_PINNED_CPU=$cpu
}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUFQ_WERROR=ON -DUFQ_BUILD_BENCH=ON \
  >/dev/null
cmake --build "$build" -j "$jobs" --target bench_scheduler bench_sim bench_adversarial

common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
        --benchmark_min_time="$min_time" --benchmark_out_format=json)
if [[ $suites == *" scheduler "* ]]; then
  choose_cpu scheduler
  "${pin[@]}" "$build/bench/bench_scheduler" "${common[@]}" --benchmark_out="$out/bench_scheduler.json" \
    ${FILTER:+--benchmark_filter="$FILTER"}
fi
# The headline figures (summary.json's ns_per_packet 1k/1M and speedup_vs_reference)
# and the ratios of issue 14 (speedup_vs_heap_shuffled_1M, shuffled_vs_roundrobin_1M,
# fast_vs_floor_1k): timer-driven paced 1k and 1M flows, shuffled 1M with single
# calls, and the burst harness (enqueue_burst/dequeue_burst, 32 per wake-up) at 1k
# and 1M round robin and 1k/1M shuffled (with the fast scheduler's single calls in the
# same harness beside it), shuffled single calls at 1k/100k/1M, and the memory per
# flow and per queued packet; 5 repetitions interleaved, so the implementations
# see the same machine state; run this one when the machine is quiet. About 5
# minutes on a quiet machine (most of it the 1M-flow warm-ups).
if [[ $suites == *" focus "* ]]; then
  choose_cpu focus
  "${pin[@]}" "$build/bench/bench_scheduler" \
    --benchmark_filter='^BM_(PacedTimer<.*>/(1000|1000000)/10000|PacedShuffled<.*>/(1000|100000|1000000)/10000|PacedBurst<(Reference|Fast|HeapPacer|FifoFloor)>/(1000|1000000)/32|PacedShuffledBurst<(Reference|Fast|HeapPacer|FifoFloor|FastSingleCalls)>/(1000|1000000)/32|Paced(Shuffled)?Burst<FlowFloor>/1000000/32|Memory<(Fast|Reference)>/(1000|1000000)/iterations:1)$' \
    --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
    --benchmark_enable_random_interleaving=true --benchmark_out_format=json \
    --benchmark_out="$out/bench_focus.json"
fi
if [[ $suites == *" sim "* ]]; then
  choose_cpu sim
  "${pin[@]}" "$build/bench/bench_sim" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_out_format=json --benchmark_out="$out/bench_sim.json"
fi
# Fixed iterations per benchmark (one packet per flow at least); repetitions
# interleaved in random order so that random and adversarial keys share the
# machine's load alike, and their medians are compared.
if [[ $suites == *" adversarial "* ]]; then
  choose_cpu adversarial
  "${pin[@]}" "$build/bench/bench_adversarial" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_enable_random_interleaving=true --benchmark_out_format=json \
    --benchmark_out="$out/bench_adversarial.json" ${ADV_FILTER:+--benchmark_filter="$ADV_FILTER"}
fi

# The price of precision on the default workload (100k packets/s): slack 0,
# 10us, 50us, the 1 ms tick and the unpaced blast, interleaved (bench/
# price_of_precision.sh; about 1.5 minutes; summary.json pacer.*_10us_vs_tick).
# Writes price-of-precision-focus.{json,md}; the longer run quoted in
# docs/results.md is `bench/price_of_precision.sh` itself.
if [[ $suites == *" focus "* || $suites == *" precision "* ]]; then
  cmake --build "$build" -j "$jobs" --target ufq
  OUT=price-of-precision-focus bench/price_of_precision.sh "$build/tools/ufq/ufq" "${POP_REPS:-3}" "${POP_DURATION:-3}" 100k
fi

# One pacer per core: `ufq pace --egress sink` on 1 queue and on 2
# (bench/mq_pacer.sh, about 3 minutes; summary.json mq.*, pacer.sink_*).
# Not pinned by choose_cpu: it places its own threads on both CPUs.
if [[ $suites == *" focus "* || $suites == *" mq "* ]]; then
  cmake --build "$build" -j "$jobs" --target ufq
  bench/mq_pacer.sh "$build/tools/ufq/ufq" "$out/mq_pacer.json" "${MQ_REPS:-3}"
fi

python3 bench/summarize.py "$out" "$reps"
# The scaling plot is drawn from the whole scheduler suite only.
if [[ $suites == *" scheduler "* ]] && command -v gnuplot >/dev/null; then
  mkdir -p docs/img/bench
  cp "$out/scaling.dat" docs/img/bench/scaling.dat
  gnuplot bench/scaling.gp
fi
echo "wrote $out/results.md and $out/summary.json"
