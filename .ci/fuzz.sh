#!/usr/bin/env bash
# `make fuzz`: every Go fuzz target in the tree, both modules (the root and
# conformance/), each for FUZZTIME (default 20s). The targets are found, not
# listed: the packages whose tests declare a `func FuzzX(`, then `go test
# -list` in each (in its own module) for the names the build really has. --list prints them (package target) without fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
list=0
[[ "${1:-}" == "--list" ]] && list=1
dirs=$(git ls-files -co --exclude-standard -- '*_test.go' |
  xargs grep -l -E '^func Fuzz[A-Za-z0-9_]*\(' | xargs -n1 dirname | sort -u)
# module DIR: the directory of the go.mod DIR belongs to (the root module
# or conformance/, which has its own)
module() {
  local m=$1
  until [[ -f "$m/go.mod" ]]; do m=$(dirname "$m"); done
  echo "$m"
}
n=0
for d in $dirs; do
  m=$(module "$d")
  rel=./${d#"$m"}
  rel=${rel/#.\/\//./}
  for t in $("$GO" -C "$m" test -list '^Fuzz' "$rel" | grep '^Fuzz' || true); do
    n=$((n + 1))
    if ((list)); then
      echo "./$d $t"
      continue
    fi
    echo "== fuzz ./$d $t ($FUZZTIME)"
    "$GO" -C "$m" test "$rel" -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME"
  done
done
if ((n == 0)); then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
((list)) || echo "== fuzz: $n targets, $FUZZTIME each"
