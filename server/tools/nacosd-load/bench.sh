#!/usr/bin/env bash
# Starts nacosd from bin/ on loopback, drives it with nacosd-load and prints
# its RSS. With JAVA_NACOS_ADDR=127.0.0.1:PORT set, drives that server too in
# the same run (e.g. the conformance suite's Java Nacos 1.4.8 reference).
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s build
go build -o bin/nacosd-load ./server/tools/nacosd-load
dir=$(mktemp -d)
port=${NACOSD_BENCH_PORT:-18848}
./bin/nacosd -port "$port" -host 127.0.0.1 -ip 127.0.0.1 -data-dir "$dir" -raft-addr 127.0.0.1:$((port - 1000)) -log-level error &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/nacos/v1/console/health/readiness" >/dev/null 2>&1 && break; sleep 0.1; done
./bin/nacosd-load -addr "127.0.0.1:$port" -label nacosd "$@"
echo "nacosd   RSS after load: $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$pid/status)"
if [ -n "${JAVA_NACOS_ADDR:-}" ]; then
  ./bin/nacosd-load -addr "$JAVA_NACOS_ADDR" -label java "$@"
fi
