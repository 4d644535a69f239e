#!/usr/bin/env bash
# HTTP side by side (issue 13): the wrk workloads of ../shared/bench/wrk/
# (register, beat, instance/list over 100 services x 100 instances, config
# get, durable config publish) against Java Nacos 1.4.8 (the reference in
# ../shared/reference, when Java 17 is installed), r-nacos 0.8.8 (when its
# binary is there: `make rnacos` builds it with cargo), nacosd and the
# trivial ceiling server (server/tools/nacosd-ceiling), one server at a time, a fresh
# process and data directory for every workload. Records req/s, wrk's
# p50/p99, RSS after the run and start-to-first-answer, writes the section
# "HTTP side by side (issue 13)" of docs/benchmarks.md (replacing the one of
# an earlier run, nothing else) and prints the ratios nacosd/Java and
# nacosd/r-nacos and nacosd/ceiling.
#
#   NACOSD_WRK_SCRIPTS  directory of the Lua scripts (default ../shared/bench/wrk,
#                       then /work/shared/bench/wrk); read in place, not copied
#   NACOSD_WRK_DURATION wrk -d per workload (default 8s)
#   NACOSD_WRK_WARMUP   a first wrk run of this length per workload, not
#                       counted (default 4s; 0 = none): a cold JVM compiles
#                       its hot paths in the first seconds
#   NACOSD_WRK_SERVERS  which servers (default "java rnacos nacosd fiber ceiling";
#                       fiber: the ceiling's answer through a bare fiber app)
#   NACOSD_RNACOS_BIN   the r-nacos binary (default bin/rnacos/bin/rnacos, then
#                       rnacos on PATH); its column is skipped when there is none
#   NACOSD_BENCH_DOC    file to write (default docs/benchmarks.md)
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
. server/tools/nacosd-load/benchdoc.sh
log() { echo "wrk.sh: $*" >&2; }

scripts=$(wrk_scripts "$root" register.lua)
dur=${NACOSD_WRK_DURATION:-8s}
warm=${NACOSD_WRK_WARMUP:-4s}
servers=${NACOSD_WRK_SERVERS:-java rnacos nacosd fiber ceiling}
doc=${NACOSD_BENCH_DOC:-docs/benchmarks.md}

ensure_wrk
GO=${GO:-go}
make -s build
$GO build -o bin/nacosd-ceiling ./server/tools/nacosd-ceiling
$GO build -o bin/nacosd-scale ./server/tools/nacosd-scale

java_home=""
if [[ " $servers " == *" java "* ]]; then
  if grep -q 'version "17' <<<"$(java -version 2>&1)"; then
    java_home=$(bash conformance/reference.sh 2>/dev/null) || java_home=""
  fi
  [[ -n "$java_home" ]] || { log "no Java 17 or no reference distribution: Java column skipped"; servers=${servers/java/}; }
fi

rnacos_bin=""
if [[ " $servers " == *" rnacos "* ]]; then
  for c in "${NACOSD_RNACOS_BIN:-}" bin/rnacos/bin/rnacos "$(command -v rnacos || true)"; do
    [[ -n "$c" && -x "$c" ]] && { rnacos_bin=$(realpath "$c"); break; }
  done
  [[ -n "$rnacos_bin" ]] || { log "no r-nacos binary (make rnacos builds one): r-nacos column skipped"; servers=${servers/rnacos/}; }
fi

work=$(mktemp -d)
pid=""
trap 'stop_server; rm -rf "$work"' EXIT


# start_server NAME: a fresh process and data dir; sets pid, port, started_ms.
start_server() {
  local name=$1 d t0 url
  d=$(mktemp -d "$work/$name.XXXX")
  t0=$(date +%s%N)
  case $name in
    java)
      port=$(./bin/nacosd-scale freeport)
      NACOS_REFERENCE_HOME=$java_home NACOS_REFERENCE_WORK=$d \
        bash javatest/reference/run.sh $port >"$d/out.log" 2>&1 &
      url="http://127.0.0.1:$port/nacos/v1/console/health/readiness" ;;
    nacosd)
      port=$(./bin/nacosd-scale freeport)
      ./bin/nacosd -port $port -host 127.0.0.1 -ip 127.0.0.1 -data-dir "$d/data" \
        -raft-addr 127.0.0.1:$((port - 1000)) -log-level error >"$d/out.log" 2>&1 &
      url="http://127.0.0.1:$port/nacos/v1/console/health/readiness" ;;
    rnacos)
      # every port on 127.0.0.1 and distinct (gRPC and console default to
      # HTTP+1000 and +2000 on 0.0.0.0; raft to 127.0.0.1:gRPC)
      port=$(./bin/nacosd-scale freeport)
      local grpc console
      grpc=$(./bin/nacosd-scale freeport)
      console=$(./bin/nacosd-scale freeport)
      (cd "$d" && RNACOS_HTTP_PORT=$port RNACOS_GRPC_PORT=$grpc RNACOS_HTTP_CONSOLE_PORT=$console \
        RNACOS_SDK_HOST=127.0.0.1 RNACOS_CONSOLE_HOST=127.0.0.1 RNACOS_DATA_DIR="$d/db" RUST_LOG=warn \
        exec "$rnacos_bin") >"$d/out.log" 2>&1 &
      url="http://127.0.0.1:$port/nacos/v1/console/health/readiness" ;;
    fiber)
      port=$(./bin/nacosd-scale freeport)
      ./bin/nacosd-ceiling -fiber -addr 127.0.0.1:$port >"$d/out.log" 2>&1 &
      url="http://127.0.0.1:$port/" ;;
    ceiling)
      port=$(./bin/nacosd-scale freeport)
      ./bin/nacosd-ceiling -addr 127.0.0.1:$port >"$d/out.log" 2>&1 &
      url="http://127.0.0.1:$port/" ;;
  esac
  pid=$!
  started_ms=$(./bin/nacosd-scale wait -url "$url" -since "$t0") || { log "$name did not answer; log:"; tail -20 "$d/out.log" >&2; exit 1; }
}

machine=$(machine_line)
rows="$work/rows"
: >"$rows"
for name in $servers; do
  for w in register beat list cfgget cfgpub; do
    wait_load
    start_server "$name"
    la=$(cut -d' ' -f1-3 /proc/loadavg)
    set=""
    case $w in list) set=instances ;; cfgget) set=configs ;; esac
    if [[ -n "$set" ]] && ! ./bin/nacosd-scale preload -addr 127.0.0.1:$port -set $set; then
      log "$name $w: preload failed; no figure"
      stop_server
      echo "$name $w 0 - - 0 0 $started_ms $la" >>"$rows"
      continue
    fi
    [[ "$warm" == 0 ]] || wrk -t1 -c32 -d"$warm" -s "$scripts/$w.lua" "http://127.0.0.1:$port" >/dev/null 2>&1 || true
    out=$(wrk -t1 -c32 -d"$dur" --latency -s "$scripts/$w.lua" "http://127.0.0.1:$port" 2>&1)
    rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    bad=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' <<<"$out")
    serr=$(grep -o 'Socket errors:.*' <<<"$out" || true)
    rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
    stop_server
    log "$name $w: ${rps:-?} req/s p50 ${p50:-?} p99 ${p99:-?} non-2xx ${bad:-0} ${serr} RSS ${rss} MiB start ${started_ms} ms load $la"
    echo "$name $w ${rps:-0} ${p50:--} ${p99:--} ${bad:-0} $rss $started_ms $la" >>"$rows"
  done
done

# Render the section.
sec="$work/section.md"
awk -v machine="$machine" -v ncpu="$(nproc)" -v dur="$dur" -v warm="$([[ $warm == 0 ]] || echo "$warm")" -v servers="$servers" -v endload="$(cut -d' ' -f1-3 /proc/loadavg)" '
function fmt(n,   s, i) { n = sprintf("%.0f", n); s = ""; while (length(n) > 3) { s = " " substr(n, length(n) - 2) s; n = substr(n, 1, length(n) - 3) }; return n s }
function ratio(a, b) { return (b > 0 && a > 0) ? sprintf("%.2f×", a / b) : "—" }
{ rps[$1, $2] = $3; p50[$1, $2] = $4; p99[$1, $2] = $5; bad[$1, $2] = $6; rss[$1, $2] = $7; st[$1, $2] = $8
  la[$1, $2] = $9 " " $10 " " $11; has[$1] = 1; if ($9 + 0 > maxload) maxload = $9 + 0 }
END {
  split("register beat list cfgget cfgpub", W, " ")
  name["register"] = "register"; name["beat"] = "beat (full beat JSON)"; name["list"] = "instance/list (100 hosts)"
  name["cfgget"] = "config get (1 KB)"; name["cfgpub"] = "config publish (durable)"
  split("java rnacos nacosd fiber ceiling", S, " ")
  title["java"] = "Java 1.4.8"; title["rnacos"] = "r-nacos 0.8.8"; title["nacosd"] = "nacosd"; title["fiber"] = "bare fiber \"ok\""; title["ceiling"] = "ceiling (fasthttp \"ok\")"
  print "## HTTP side by side (issue 13)"
  print ""
  print "Written by `make bench` (`server/tools/nacosd-load/wrk.sh`) on " machine "."
  print "One server at a time, a fresh process and data directory per workload, `wrk -t1 -c32 -d" dur " --latency -s ../shared/bench/wrk/WORKLOAD.lua`" (warm ? " after an uncounted " warm " run of the same script" : "")
  print "(list reads 100 services × 100 instances and config get 100 keys of 1 KB, preloaded by `nacosd-scale preload`). The machine is shared:"
  print "the load average (1/5/15 min) before each run is in the second table. Replaced on every run."
  print ""
  if (maxload > ncpu) { print "**Measured under load: the 1-minute load average reached " maxload " on " ncpu " CPUs before these runs (other work shared"
    print "the machine), so the figures are lower bounds and noisy, the Java ones most (a cold JVM starved of CPU); compare ratios within one run.**"; print "" }
  h = "| workload |"; s = "|---|"
  for (i = 1; i <= 5; i++) if (S[i] in has) { h = h " " title[S[i]] " |"; s = s "---|" }
  h = h " nacosd/Java | nacosd/r-nacos | nacosd/fiber | nacosd/ceiling |"; s = s "---|---|---|---|"
  print h; print s
  for (j = 1; j <= 5; j++) {
    w = W[j]; l = "| " name[w] " |"
    for (i = 1; i <= 5; i++) if (S[i] in has) l = l " " fmt(rps[S[i], w]) "/s" (bad[S[i], w] > 0 ? " (" fmt(bad[S[i], w]) " non-2xx)" : "") " |"
    l = l " " ratio(rps["nacosd", w], rps["java", w]) " | " ratio(rps["nacosd", w], rps["rnacos", w]) " | " ratio(rps["nacosd", w], rps["fiber", w]) " | " ratio(rps["nacosd", w], rps["ceiling", w]) " |"
    print l
  }
  l = "| RSS after the run (largest of the five) |"
  for (i = 1; i <= 5; i++) if (S[i] in has) { m = 0; for (j = 1; j <= 5; j++) if (rss[S[i], W[j]] > m) m = rss[S[i], W[j]]; l = l " " m " MiB |" }
  print l " | | | |"
  l = "| start to first answer (median of five) |"
  for (i = 1; i <= 5; i++) if (S[i] in has) { n = 0; for (j = 1; j <= 5; j++) v[++n] = st[S[i], W[j]] + 0
    for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
    l = l " " v[3] " ms |" }
  print l " | | | |"
  print ""
  print "| server | workload | req/s | p50 | p99 | non-2xx | RSS after | start to first answer | load before |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= 5; i++) if (S[i] in has) for (j = 1; j <= 5; j++) { k = S[i] SUBSEP W[j]
    print "| " S[i] " | " W[j] " | " fmt(rps[k]) " | " p50[k] " | " p99[k] " | " bad[k] " | " rss[k] " MiB | " st[k] " ms | " la[k] " |" }
  print ""
  print "Load average at the end: " endload "."
  print ""
}' "$rows" >"$sec"

replace_section "$doc" "HTTP side by side (issue 13)" "$sec"
log "wrote the section of $doc"

awk '{ r[$1, $2] = $3 } END {
  split("register beat list cfgget cfgpub", W, " ")
  for (j = 1; j <= 5; j++) { w = W[j]
    printf "%-9s nacosd/Java %s  nacosd/r-nacos %s  nacosd/ceiling %s\n", w,
      (r["java", w] > 0 ? sprintf("%.2f", r["nacosd", w] / r["java", w]) : "-"),
      (r["rnacos", w] > 0 ? sprintf("%.2f", r["nacosd", w] / r["rnacos", w]) : "-"),
      (r["ceiling", w] > 0 ? sprintf("%.2f", r["nacosd", w] / r["ceiling", w]) : "-") } }' "$rows"
