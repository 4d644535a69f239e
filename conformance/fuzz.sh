#!/usr/bin/env bash
# make conformance-fuzz: differential fuzzing of nacosd against Java Nacos 1.4.8
# (conformance/fuzz_test.go). Starts both as plain processes on free ports
# (nacosd from this tree, the reference from conformance/reference.sh), runs
# TestConformanceFuzz for NACOSD_FUZZ_TIME (default 2m), writes the report to
# NACOSD_FUZZ_REPORT (default conformance/.work/fuzz-report.md) and stops both.
# Needs Go and Java 17; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$PATH:/usr/local/go/bin"
work="${NACOSD_CONFORMANCE_WORK:-$root/conformance/.work}/fuzz"
rm -rf "$work"; mkdir -p "$work"
home=$(bash conformance/reference.sh)
free_port() { # a port p with p-1000 free as well (raft binds there)
  python3 - <<'PY'
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    try:
        t = socket.socket(); t.bind(("127.0.0.1", p - 1000)); t.close(); s.close(); print(p); break
    except OSError:
        s.close()
PY
}
np=$(free_port); jp=$(free_port)
go build -o "$work/nacosd" ./server/cmd/nacosd
"$work/nacosd" -port "$np" -host 127.0.0.1 -ip 127.0.0.1 -push-addr 127.0.0.1:0 -context-path /nacos \
  -data-dir "$work/nacosd-data" -home "$work" -standalone >"$work/nacosd.log" 2>&1 &
npid=$!
NACOS_REFERENCE_HOME="$home" NACOS_REFERENCE_WORK="$work/reference" setsid bash javatest/reference/run.sh "$jp" >"$work/reference.log" 2>&1 &
jpid=$!
cleanup() { kill "$npid" 2>/dev/null || true; kill "$jpid" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
for port in "$np" "$jp"; do
  for _ in $(seq 1 240); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/nacos/v1/ns/operator/metrics" && break
    sleep 0.5
  done
done
sleep 6 # Java settles (old naming raft stops, role cache loads)
NACOSD_CORPUS_NACOSD="$np" NACOSD_CORPUS_JAVA="$jp" \
  NACOSD_FUZZ_REPORT="${NACOSD_FUZZ_REPORT:-$root/conformance/.work/fuzz-report.md}" \
  go -C conformance test -tags conformance -count=1 -timeout 60m -run 'TestConformanceFuzz$' -v . | grep -v '^=== \|^--- \|^PASS\|^ok'
