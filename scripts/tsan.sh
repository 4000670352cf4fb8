#!/usr/bin/env bash
# The runtime's tests under ThreadSanitizer (preset tsan: rt_tests, and the
# ufq binary the CLI tests run), and `ufq sim --jobs` (sim_test_jobs: a sweep
# on threads). Fails on any report (halt_on_error).
# Usage: scripts/tsan.sh [ctest args...]   e.g. scripts/tsan.sh -R Pacer
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc); [ "$jobs" -gt 2 ] && jobs=2
start=$(date +%s)
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
built=$(date +%s)
# GCC 12's TSan needs the address layout it knows: without ASLR it works
# whatever vm.mmap_rnd_bits the kernel uses.
run=()
if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
  run=(setarch "$(uname -m)" -R)
fi
"${run[@]}" ctest --preset tsan -j "$jobs" "$@"
end=$(date +%s)
echo "tsan: build $((built - start)) s, tests $((end - built)) s"
