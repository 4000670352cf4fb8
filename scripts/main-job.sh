#!/usr/bin/env bash
# The main job on its built-in default workload.
set -euo pipefail
cd "$(dirname "$0")/.."
exec build/release/examples/quickstart
