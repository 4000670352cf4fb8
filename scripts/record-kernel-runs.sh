#!/usr/bin/env bash
# Records ground truth from the real kernel's fq (Linux 6.1 under qemu, the team's
# kernel-fq harness, KFQ=path) into tests/data/kernel-6.1/runs/: one summary JSON
# per run, named MODE-fFLOWS-pPPS-sSLACK.json. Not run by CI (each run boots a VM:
# 30-90 s of wall time); the simulator's validation test reads the files.
# Usage: KFQ=../shared/kernel-fq scripts/record-kernel-runs.sh [MATRIX]
#   MATRIX: "FLOWSxPPS ..." (default "1000x20 200x100 50x400"); MODES (default
#   "pace txtime"), SLACKS (default "0 10us 20us 50us 100us 200us 500us 1ms"),
#   DUR guest seconds (default 3), SKIP_EXISTING=1 keeps files already recorded,
#   TRACE=1 also records the guest's hrtimer/NET_TX/xmit trace and keeps its summary
#   (NAME.trace-summary.txt; run names get a -trace suffix).
# With icount fixed (-icount shift=1,sleep=off) the guest's timing does not depend
# on the host's load, so the runs repeat whatever else the machine does.
set -euo pipefail
cd "$(dirname "$0")/.."
kfq=${KFQ:-../shared/kernel-fq}
matrix=${1:-"1000x20 200x100 50x400"}
modes=${MODES:-"pace txtime"}
slacks=${SLACKS:-"0 10us 20us 50us 100us 200us 500us 1ms"}
dur=${DUR:-3}
dest=tests/data/kernel-6.1/runs
mkdir -p "$dest"
"$kfq/setup.sh" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for fp in $matrix; do
  flows=${fp%x*} pps=${fp#*x}
  for mode in $modes; do
    for slack in $slacks; do
      name="$mode-f$flows-p$pps-s$slack${TRACE:+-trace}"
      [[ ${SKIP_EXISTING:-0} == 1 && -f $dest/$name.json ]] && continue
      echo "== $name"
      "$kfq/run.sh" --name "$name" --out "$work/$name" --flows "$flows" --pps "$pps" --dur "$dur" \
        --slack "$slack" --icount 1 --mode "$mode" ${TRACE:+--trace} > "$work/$name.log" 2>&1 ||
        { echo "run $name failed: $work/$name.log"; tail -n 20 "$work/$name.log"; exit 1; }
      cp "$work/$name/summary.json" "$dest/$name.json"
      if [[ -n ${TRACE:-} ]]; then
        cp "$work/$name/trace-summary.txt" "$dest/$name.trace-summary.txt"
      fi
    done
  done
done
