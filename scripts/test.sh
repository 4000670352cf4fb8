#!/usr/bin/env bash
# Second command of the README: build and run the whole test suite (fails if any test fails).
# Usage: scripts/test.sh [release|asan]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
