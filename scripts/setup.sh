#!/usr/bin/env bash
# First command of the README: install what is missing, build (Release), run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
exec scripts/main-job.sh
