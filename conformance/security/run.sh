#!/usr/bin/env bash
# make security: the attack suite against nacosd with auth on and, when the
# Java Nacos 1.4.8 reference can be had (conformance/reference.sh), against
# one Java node started here with auth on (the shipped secret from its jar,
# identity serverIdentity/security, user caching off), to show what each
# attack does there; plus the server-level cases (slow headers, the
# connection reserve, a three-node cluster with auth on). Java's answers are
# logged ("java: <attack>: REFUSED|WORKS"), never judged, and collected in
# conformance/security/.work/java-verdicts.txt; the run fails only when nacosd lets an
# attack through. docs/security.md records the results. Some attacks come
# from other loopback addresses (127.0.0.2-127.0.0.20): Linux routes all of
# 127.0.0.0/8 to lo.
set -uo pipefail
cd "$(dirname "$0")/../.."
work=conformance/security/.work
mkdir -p "$work"
GO="${GO:-go}"

rc=0
$GO test -tags integration -count=1 -run 'TestSlowHeadersDropped|TestLongPollOutlivesHeaderTimeout|TestConnectionReserve|TestClusterAuth|TestDefaultAdminPassword' ./server/ || rc=1
$GO test -tags integration -count=1 ./server/auth/ ./internal/connlimit/ || rc=1
# issue 26: bodies (encodings, node paths), the naming resource, push targets and budgets
$GO test -tags integration -count=1 -run 'TestGzipBomb|TestContentEncoding|TestNodeBodyNeedsIdentity|TestNamingResource' ./server/httpapi/ || rc=1
$GO test -tags integration -count=1 -run 'TestPushGoesToTheSource|TestPushBytesCappedPerTarget' ./server/push/ || rc=1
$GO test -tags integration -count=1 -run 'TestSearchTenantExact' ./server/config/ || rc=1

java_pid=""
cleanup() { [[ -n "$java_pid" ]] && kill "$java_pid" 2>/dev/null && wait "$java_pid" 2>/dev/null; }
trap cleanup EXIT
if [[ -z "${NACOSD_SECURITY_JAVA:-}" ]] && command -v java >/dev/null && home=$(bash conformance/reference.sh 2>/dev/null); then
  port=""
  for _ in $(seq 1 50); do
    p=$((30000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && ! (exec 3<>/dev/tcp/127.0.0.1/$((p - 1000))) 2>/dev/null; then port=$p; break; fi
  done
  if [[ -n "$port" ]]; then
    rm -rf "$work/reference"
    NACOS_REFERENCE_HOME="$home" NACOS_REFERENCE_WORK="$PWD/$work/reference" \
    NACOS_REFERENCE_JAVA_OPTS="-Dnacos.core.auth.enabled=true -Dnacos.core.auth.server.identity.key=serverIdentity -Dnacos.core.auth.server.identity.value=security -Dnacos.core.auth.caching.enabled=false" \
      bash javatest/reference/run.sh "$port" >"$work/reference.log" 2>&1 </dev/null &
    java_pid=$!
    for _ in $(seq 1 240); do
      if curl -fs -m 2 -o /dev/null -X POST "http://127.0.0.1:$port/nacos/v1/auth/users/login" -d 'username=nacos&password=nacos' 2>/dev/null; then
        export NACOSD_SECURITY_JAVA="127.0.0.1:$port"; break
      fi
      kill -0 "$java_pid" 2>/dev/null || break
      sleep 1
    done
    [[ -n "${NACOSD_SECURITY_JAVA:-}" ]] || echo "conformance/security/run.sh: WARNING: the Java reference did not start (see $work/reference.log); nacosd only" >&2
  fi
else
  echo "conformance/security/run.sh: no Java reference here; the attack suite runs against nacosd only" >&2
fi
$GO -C conformance test -count=1 -v ./security/ 2>&1 | tee "$work/go-test.log" | grep -aE '^(=== RUN|--- |FAIL|ok|PASS)|java: |nacosd: '
[[ ${PIPESTATUS[0]} == 0 ]] || rc=1
grep -ao 'java: .*' "$work/go-test.log" >"$work/java-verdicts.txt" 2>/dev/null || true
[[ -s "$work/java-verdicts.txt" ]] && echo "conformance/security/run.sh: Java's answers in $work/java-verdicts.txt" >&2
exit "$rc"
