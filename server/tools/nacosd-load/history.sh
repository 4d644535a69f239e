#!/usr/bin/env bash
# Config history off the heap (issue 13): publishes NACOSD_HISTORY_PUBLISHES
# configs (default 1 000 000) over 100 keys with wrk and
# ../shared/bench/wrk/cfgpub.lua into a fresh nacosd, then records
#   - RSS (VmRSS, anonymous and file-backed) before, after the publishes,
#     after paging every key's whole history, and after a restart;
#   - that history is complete (the totalCount of the 100 keys adds up to
#     the publishes acknowledged) and pageable (first and last page);
#   - the data directory's size and the time from restart to first answer.
# Writes the section "History on disk (issue 13)" of docs/benchmarks.md
# (NACOSD_BENCH_DOC to write elsewhere).
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
. server/tools/nacosd-load/benchdoc.sh
log() { echo "history.sh: $*" >&2; }

want=${NACOSD_HISTORY_PUBLISHES:-1000000}
doc=${NACOSD_BENCH_DOC:-docs/benchmarks.md}
scripts=$(wrk_scripts "$root" cfgpub.lua)
ensure_wrk
GO=${GO:-go}
make -s build
$GO build -o bin/nacosd-scale ./server/tools/nacosd-scale

work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT

port=$(./bin/nacosd-scale freeport)
base="http://127.0.0.1:$port/nacos"
# rss: "VmRSS RssAnon RssFile" in MiB
rss() { awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%.0f ", $2/1024}' "/proc/$pid/status"; }
# history_total: the totalCount of the 100 keys' histories, summed
history_total() {
  local sum=0 n i
  for i in $(seq 0 99); do
    n=$(curl -fsS "$base/v1/cs/history?search=accurate&dataId=wrkp-$i.yaml&group=WRK&pageNo=1&pageSize=1" |
      sed -n 's/.*"totalCount":\([0-9]*\).*/\1/p')
    sum=$((sum + ${n:-0}))
  done
  echo "$sum"
}

machine=$(machine_line)
wait_load
start_nacosd "$port" "$work"
rss0=$(rss)
start0=$started_ms
log "started in ${start0} ms, RSS $rss0"
done_n=0 bad=0 secs=0
t0=$(date +%s)
while ((done_n < want)); do
  out=$(wrk -t1 -c32 -d20s -s "$scripts/cfgpub.lua" "http://127.0.0.1:$port" 2>&1)
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  b=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' <<<"$out")
  done_n=$((done_n + ${n:-0})); bad=$((bad + ${b:-0}))
  log "$done_n of $want published ($bad not 2xx), RSS $(rss)"
done
secs=$(($(date +%s) - t0))
sleep 2
rss1=$(rss)
total=$(history_total)
# page every key's whole history (pageSize 500, Java's cap) and the last page
t1=$(date +%s%N)
pages=0
for i in $(seq 0 99); do
  p=1
  while :; do
    body=$(curl -fsS "$base/v1/cs/history?search=accurate&dataId=wrkp-$i.yaml&group=WRK&pageNo=$p&pageSize=500")
    pages=$((pages + 1))
    avail=$(sed -n 's/.*"pagesAvailable":\([0-9]*\).*/\1/p' <<<"$body")
    ((p >= ${avail:-0})) && break
    p=$((p + 1))
  done
done
page_ms=$((($(date +%s%N) - t1) / 1000000))
rss2=$(rss)
du_data=$(du -sm "$work/data" | cut -f1)
du_fsm=$(du -sm "$work/data/raft/fsm.db" 2>/dev/null | cut -f1 || echo 0)
stop_server
start_nacosd "$port" "$work"
start1=$started_ms
rss3=$(rss)
total3=$(history_total)
stop_server
log "published $done_n ($bad not 2xx) in ${secs}s; history total $total, after restart $total3; RSS before $rss0, after $rss1, after paging $rss2, after restart $rss3; restart ${start1} ms"

read -r v0 a0 f0 <<<"$rss0"; read -r v1 a1 f1 <<<"$rss1"; read -r v2 a2 f2 <<<"$rss2"; read -r v3 a3 f3 <<<"$rss3"
acked=$((done_n - bad))
sec="$work/section.md"
{
  echo "## History on disk (issue 13)"
  echo ""
  echo "Written by \`make bench-history\` (\`server/tools/nacosd-load/history.sh\`) on $machine."
  echo "One fresh nacosd; \`wrk -t1 -c32 -s ../shared/bench/wrk/cfgpub.lua\` (100 keys, ~240-byte contents) in 20 s rounds until $want publishes."
  echo "History lives in raftstore's disk buckets (\`<data>/raft/fsm.db\`, \`raftstore/cold.go\`), not in the heap."
  echo ""
  echo "| | value |"
  echo "|---|---|"
  echo "| publishes acknowledged | $acked of $done_n in ${secs} s ($((done_n / (secs > 0 ? secs : 1)))/s) |"
  echo "| history rows (sum of the 100 keys' totalCount) | $total; after a restart $total3 |"
  echo "| RSS at start (VmRSS / anon / file) | $v0 / $a0 / $f0 MiB |"
  echo "| RSS after the publishes | $v1 / $a1 / $f1 MiB |"
  echo "| RSS after paging every key's whole history ($pages pages of 500 in $page_ms ms) | $v2 / $a2 / $f2 MiB |"
  echo "| RSS after a restart | $v3 / $a3 / $f3 MiB |"
  echo "| data directory / of it fsm.db | $du_data / $du_fsm MiB |"
  echo "| start to first answer: empty / after the publishes | $start0 / $start1 ms |"
  echo ""
  echo "Replaced on every run."
  echo ""
} >"$sec"
replace_section "$doc" "History on disk (issue 13)" "$sec"
cat "$sec"
