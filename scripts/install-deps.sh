#!/usr/bin/env bash
# Installs the Debian 12 packages ufq builds with, only those that are missing.
set -euo pipefail
pkgs=(
  g++ cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev libpcap-dev
  clang libclang-rt-14-dev   # libFuzzer targets
  gnuplot-nox                # plots
  iperf3 iperf               # real programs paced by `ufq run` (scripts/run_programs.py)
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "all build dependencies present"
fi
