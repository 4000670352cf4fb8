#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`, clang) and runs each for a bounded time.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   SECONDS  time per target (default 60)
#   TARGET   tc_parser, tc_config_json, scheduler_diff (default: all three)
# New corpus entries go to build/fuzz/corpus/<target> (the seeds in
# fuzz/corpus/<target> are only read); crashing inputs to
# build/fuzz/artifacts/<target>/. Exits non-zero on the first finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
(($# > 0)) && shift
targets=("$@")
((${#targets[@]} > 0)) || targets=(tc_parser tc_config_json scheduler_diff)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

for t in "${targets[@]}"; do
  work=build/fuzz/corpus/$t
  artifacts=build/fuzz/artifacts/$t/
  mkdir -p "$work" "$artifacts"
  dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  echo "== fuzz_$t for ${seconds}s"
  "build/fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "${dict[@]}" "$work" "fuzz/corpus/$t"
done
