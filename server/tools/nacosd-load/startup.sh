#!/usr/bin/env bash
# Start to first answer with a full store (issue 13): one nacosd is filled
# with 100 000 configs of 1 KB and 100 000 persistent instances (1 000
# services), then restarted NACOSD_START_ROUNDS times (default 5; SIGTERM,
# and once kill -9); each start is timed from exec to the first 200 from
# /v1/console/health/readiness. Records the median and the range, RSS after
# start and the data directory's size; writes the section "Start-up with a
# full store (issue 13)" of docs/benchmarks.md (NACOSD_BENCH_DOC to write
# elsewhere).
set -euo pipefail
cd "$(dirname "$0")/../../.."
. server/tools/nacosd-load/benchdoc.sh
log() { echo "startup.sh: $*" >&2; }

rounds=${NACOSD_START_ROUNDS:-5}
doc=${NACOSD_BENCH_DOC:-docs/benchmarks.md}
GO=${GO:-go}
make -s build
$GO build -o bin/nacosd-scale ./server/tools/nacosd-scale

work=$(mktemp -d)
pid=""
trap 'stop_server; rm -rf "$work"' EXIT
port=$(./bin/nacosd-scale freeport)

machine=$(machine_line)
wait_load
start_nacosd "$port" "$work"
empty_ms=$started_ms
t0=$(date +%s)
./bin/nacosd-scale preload -addr "127.0.0.1:$port" -set configs100k
./bin/nacosd-scale preload -addr "127.0.0.1:$port" -set persistent100k
fill_s=$(($(date +%s) - t0))
log "filled in ${fill_s}s"
times=()
for r in $(seq "$rounds"); do
  if ((r == rounds)); then stop_server KILL; else stop_server TERM; fi
  wait_load
  start_nacosd "$port" "$work"
  times+=("$started_ms")
  rss=$(awk '/^VmRSS:/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
  log "start $r: ${started_ms} ms, RSS ${rss} MiB"
done
# a read that needs the data: the configs and instances are all there
cfg=$(curl -fsS "http://127.0.0.1:$port/nacos/v1/cs/configs?dataId=start-99999.yaml&group=START" | head -c 20)
inst=$(curl -fsS "http://127.0.0.1:$port/nacos/v1/ns/instance/list?serviceName=start.svc.999" | grep -o '"ip"' | wc -l)
du_data=$(du -sm "$work/data" | cut -f1)
stop_server
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(sed -n "$(((rounds + 1) / 2))p" <<<"$sorted")
lo=$(head -1 <<<"$sorted"); hi=$(tail -1 <<<"$sorted")
log "empty start ${empty_ms} ms; full: median ${median} ms (${lo}-${hi}); config read ${cfg:0:10}..., ${inst} instances in start.svc.999"

sec="$work/section.md"
{
  echo "## Start-up with a full store (issue 13)"
  echo ""
  echo "Written by \`make bench-start\` (\`server/tools/nacosd-load/startup.sh\`) on $machine."
  echo "One nacosd filled with 100 000 configs of 1 KB and 100 000 persistent instances (1 000 services) in ${fill_s} s (\`nacosd-scale preload\`),"
  echo "then restarted $rounds times (SIGTERM; the last after kill -9), each timed from exec to the first 200 from \`/v1/console/health/readiness\`."
  echo ""
  echo "| | value |"
  echo "|---|---|"
  echo "| start to first answer, empty store | ${empty_ms} ms |"
  echo "| start to first answer, full store: median (range) | ${median} ms (${lo}–${hi} ms) |"
  echo "| RSS after the last start | ${rss} MiB |"
  echo "| data directory | ${du_data} MiB |"
  echo "| after the starts: instances of start.svc.999 listed | ${inst} (of 100) |"
  echo ""
  echo "Replaced on every run."
  echo ""
} >"$sec"
replace_section "$doc" "Start-up with a full store (issue 13)" "$sec"
cat "$sec"
