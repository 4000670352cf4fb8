#!/usr/bin/env bash
# The main job on its built-in default workload: the seed's timer-slack
# experiment in the simulator (1000 paced flows, 1 Mpps, timer_slack 10us).
set -euo pipefail
cd "$(dirname "$0")/.."
exec build/release/tools/ufq/ufq sim "$@"
