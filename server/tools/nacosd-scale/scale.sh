#!/usr/bin/env bash
# The scale figures of issue 13 (`make bench-scale`, not in CI): runs each
# measurement of nacosd-scale against a fresh nacosd and writes the section
# "Scale figures (issue 13)" of docs/benchmarks.md (replacing an earlier
# run's, nothing else), with the command, the machine and the load average.
#
#   NACOSD_SCALE_BEATS_DURATION  how long the 100 000 instances beat (default 5m)
#   NACOSD_SCALE_ONLY            which measurements (default "beats holders push listeners")
#   NACOSD_BENCH_DOC             file to write (default docs/benchmarks.md)
set -euo pipefail
cd "$(dirname "$0")/../../.."
. server/tools/nacosd-load/benchdoc.sh
GO=${GO:-go}
doc=${NACOSD_BENCH_DOC:-docs/benchmarks.md}
dur=${NACOSD_SCALE_BEATS_DURATION:-5m}
only=${NACOSD_SCALE_ONLY:-beats holders holders18k push listeners}
make -s build
$GO build -o bin/nacosd-scale ./server/tools/nacosd-scale

machine=$(machine_line)
rows=$(mktemp)
trap 'rm -f "$rows" "$rows.sec" "$rows.err"' EXIT
for m in $only; do
  case $m in
    beats) args=(beats -instances 100000 -services 1000 -period 5s -c 100 -d "$dur") ;;
    holders) args=(holders -holders 19000) ;;
    holders18k) args=(holders -holders 18000) ;; # below the 5 % reserve of a 20 000 limit
    push) args=(push -subs 5000 -loss 0.05) ;;
    listeners) args=(listeners -keys 10000 -clients 1000 -publishes 300) ;;
    *) echo "scale.sh: unknown measurement $m" >&2; exit 2 ;;
  esac
  wait_load
  echo "scale.sh: bin/nacosd-scale ${args[*]}" >&2
  if ! row=$(./bin/nacosd-scale "${args[@]}" 2>"$rows.err"); then
    row="| $m | | **failed**: $(tail -1 "$rows.err" | tr '|' '/') | $(cut -d' ' -f1-3 /proc/loadavg) |"
  fi
  cat "$rows.err" >&2
  echo "$row" >&2
  echo "${row} \`bin/nacosd-scale ${args[*]}\` |" >>"$rows"
done

{
  echo "## Scale figures (issue 13)"
  echo ""
  echo "Written by \`make bench-scale\` (\`server/tools/nacosd-scale/scale.sh\`) on $machine."
  echo "Each row is one fresh nacosd (\`bin/nacosd\`, empty data directory) driven from \`nacosd-scale\` on the same machine (the"
  echo "long-poll holders from a child process: the descriptor limit is per process), over plain keep-alive connections with"
  echo "pre-built requests. The machine is shared: the load average (1/5/15 min) before and after each run is in its row."
  echo "Replaced on every run."
  echo ""
  echo "| figure | shape | result | load before → after | command |"
  echo "|---|---|---|---|---|"
  cat "$rows"
  echo ""
} >"$rows.sec"
replace_section "$doc" "Scale figures (issue 13)" "$rows.sec"
echo "scale.sh: wrote the section of $doc" >&2
