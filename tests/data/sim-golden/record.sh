#!/bin/sh
# Records every case of cases.txt with the given ufq binary (default: the
# release build). Run it only when a change of output is intended, and say why
# in the commit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ufq=$(cd "$here/../../.." && pwd)/build/release/tools/ufq/ufq
ufq=${1:-$ufq}
cd "$here"
grep -v '^#' cases.txt | while IFS="$(printf '\t')" read -r name args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  "$ufq" $args > "$name.out"
  echo "recorded $name"
done
