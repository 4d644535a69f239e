#!/usr/bin/env bash
# side.sh: the Nacos 2.x gRPC figures of docs/benchmarks.md, side by side
# in one run: Java Nacos 2.5.1 (conformance/reference2.sh; standalone,
# embedded Derby), r-nacos (bin/rnacos/bin/rnacos, `make rnacos`) and
# nacosd, one server at a time, then the gRPC ceilings (nacosd-ceiling -grpc-addr: a
# server that answers every request with a canned answer, on grpc-go or
# on nacosd's own transport; unary steps and connect only):
#
#   query, publish, register, connect  nacosd-grpcload, -warmup then -d
#   push   5 000 subscribers of one service, a change every 2 s
#   hold   10 000 connections, each listening to a config and subscribed
#          to a service (RSS with them)
#
# Environment: GRPCLOAD_SERVERS (default "java rnacos nacosd ceiling-go ceiling-wire"),
# GRPCLOAD_STEPS (default all: "query publish register connect push hold"),
# GRPCLOAD_D (15s), GRPCLOAD_WARMUP (20s), GRPCLOAD_HOST (127.0.0.51: nacosd
# and r-nacos bind it), GRPCLOAD_PORT (HTTP port base, 24000: nacosd
# +0, r-nacos +20, Java +490; gRPC on HTTP+1000; Java's raft binds
# HTTP-1000). Output: one line per step (nacosd-grpcload's) prefixed with
# the server's name, in $GRPCLOAD_OUT (default /tmp/grpcload-side.txt).
set -euo pipefail
cd "$(dirname "$0")/../../.."
GO=${GO:-go}
servers=${GRPCLOAD_SERVERS:-java rnacos nacosd ceiling-go ceiling-wire}
d=${GRPCLOAD_D:-15s}
warm=${GRPCLOAD_WARMUP:-20s}
host=${GRPCLOAD_HOST:-127.0.0.51}
base=${GRPCLOAD_PORT:-24000}
out=${GRPCLOAD_OUT:-/tmp/grpcload-side.txt}
steps=" ${GRPCLOAD_STEPS:-query publish register connect push hold} "
log() { echo "side.sh: $*" >&2; }

mkdir -p bin
CGO_ENABLED=0 $GO build -o bin/nacosd ./server/cmd/nacosd
$GO build -o bin/nacosd-grpcload ./server/tools/nacosd-grpcload
$GO build -o bin/nacosd-ceiling ./server/tools/nacosd-ceiling
load=bin/nacosd-grpcload
java_home=""
if [[ " $servers " == *" java "* ]]; then
  java_home=$(bash conformance/reference2.sh) || { log "no Java 2.5.1 reference: Java skipped"; servers=${servers/java/}; }
fi
rnacos_bin=""
if [[ " $servers " == *" rnacos "* ]]; then
  for c in "${NACOSD_RNACOS_BIN:-}" bin/rnacos/bin/rnacos; do
    [[ -n "$c" && -x "$c" ]] && { rnacos_bin=$(realpath "$c"); break; }
  done
  [[ -n "$rnacos_bin" ]] || { log "no r-nacos binary (make rnacos): r-nacos skipped"; servers=${servers/rnacos/}; }
fi

work=$(mktemp -d)
pid=""
stop_server() {
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT

# start_server NAME: a fresh process and data dir; sets pid, grpc.
start_server() {
  local name=$1 dir http url
  dir=$(mktemp -d "$work/$name.XXXX")
  case $name in
    java)
      http=$((base + 490)); grpc=127.0.0.1:$((http + 1000))
      (cd "$dir" && cp -r "$java_home/conf" conf && exec java -Xms512m -Xmx512m -Xmn256m \
        --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED \
        -Dnacos.standalone=true -Dnacos.home="$dir" -Dserver.port=$http -Dnacos.inetutils.ip-address=127.0.0.1 \
        -jar "$java_home/target/nacos-server.jar" \
        --spring.config.additional-location=file:"$dir"/conf/ --logging.config="$dir"/conf/nacos-logback.xml) >"$dir/out.log" 2>&1 &
      url=http://127.0.0.1:$http/nacos/v1/console/health/readiness ;;
    rnacos)
      http=$((base + 20)); grpc=$host:$((http + 1000))
      (cd "$dir" && RNACOS_HTTP_PORT=$http RNACOS_GRPC_PORT=$((http + 1000)) RNACOS_HTTP_CONSOLE_PORT=$((http + 1)) \
        RNACOS_SDK_HOST=$host RNACOS_CONSOLE_HOST=$host RNACOS_DATA_DIR="$dir/db" RUST_LOG=warn \
        exec "$rnacos_bin") >"$dir/out.log" 2>&1 &
      url=http://$host:$http/nacos/v1/console/health/readiness ;;
    nacosd)
      http=$base; grpc=$host:$((http + 1000))
      (cd "$dir" && exec "$OLDPWD/bin/nacosd" -port $http -host $host -ip $host -data-dir "$dir/data" \
        -raft-addr $host:$((http + 1)) -log-level error) >"$dir/out.log" 2>&1 &
      url=http://$host:$http/nacos/v1/console/health/readiness ;;
    ceiling-go|ceiling-wire)
      http=$((base + 40)); grpc=$host:$((http + 1000))
      bin/nacosd-ceiling -addr $host:$http -grpc-addr "$grpc" -grpc-stack "${name#ceiling-}" >"$dir/out.log" 2>&1 &
      pid=$!
      for _ in $(seq 100); do (exec 3<>"/dev/tcp/$host/$((http + 1000))") 2>/dev/null && return 0; sleep 0.1; done
      log "$name did not listen"; exit 1 ;;
  esac
  pid=$!
  for _ in $(seq 600); do
    curl -fs -o /dev/null "$url" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  log "$name did not answer"; tail -20 "$dir/out.log" >&2; exit 1
}

: >"$out"
echo "# $(date -u +%FT%TZ) $(nproc) CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) $(free -g | awk '/Mem:/ {print $2}') GiB; d=$d warmup=$warm" | tee -a "$out"
for name in $servers; do
  # the unary steps on one process (the JIT of one step warms the next),
  # publish last (the history and dump writes a server does after its
  # publishes must not count in the next step); push and hold each on a
  # fresh one
  extra=""
  [[ $name != rnacos ]] || extra="-tenant load" # r-nacos refuses a config request without a tenant
  unary=""
  for step in query register connect publish; do [[ "$steps" == *" $step "* ]] && unary+=" $step"; done
  [[ -z "$unary" ]] || start_server "$name"
  for step in $unary; do
    la=$(cut -d' ' -f1 /proc/loadavg)
    r=$($load -addr "$grpc" -op $step $extra -d "$d" -warmup "$warm" -pid "$pid" 2>&1 | tail -1 || true)
    rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
    echo "$name $step load=$la rss-end=${rss}MiB $r" | tee -a "$out"
  done
  stop_server
  for step in push hold; do
    [[ "$steps" == *" $step "* && $name != ceiling-* ]] || continue
    start_server "$name"
    la=$(cut -d' ' -f1 /proc/loadavg)
    case $step in
      push) r=$($load -addr "$grpc" -op push -conns 5000 -c 64 -interval 2s -d 20s -pid "$pid" 2>&1 | tail -1 || true) ;;
      hold) r=$($load -addr "$grpc" -op hold $extra -subscribe -conns 10000 -c 64 -keys 1000 -d 10s -pid "$pid" 2>&1 | tail -1 || true) ;;
    esac
    rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
    stop_server
    echo "$name $step load=$la rss-end=${rss}MiB $r" | tee -a "$out"
  done
done
