#!/usr/bin/env bash
# The fault-injection checker (make jepsen; conformance/jepsen/README.md):
# builds nacosd, runs three nodes on 127.0.0.21-23 under the seeded nemesis
# and workload for NACOSD_JEPSEN_DURATION (default 3m) and checks the
# histories. Needs root for iptables (the partitions), which it installs
# when missing. The whole log goes to $NACOSD_JEPSEN_LOG (default
# /tmp/nacosd-jepsen.log); the report is printed and kept, with the saved
# run and the node logs, in $NACOSD_JEPSEN_OUT (default
# /tmp/nacosd-jepsen-<seed>).
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v iptables >/dev/null 2>&1; then
  echo "jepsen: installing iptables" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iptables) </dev/null >/dev/null 2>&1 \
    || { echo "jepsen: cannot install iptables" >&2; exit 1; }
fi

# Remove the rules the checker adds (comment nacosd-jepsen, only between
# 127.0.0.21-23) if the test binary died before it could (a test timeout).
cleanup() {
  iptables -S INPUT 2>/dev/null | grep -- '--comment nacosd-jepsen' |
    grep -E -- '-s 127\.0\.0\.2[1-3]/32 -d 127\.0\.0\.2[1-3]/32' |
    while read -r _ rest; do
      # shellcheck disable=SC2086
      iptables -D $rest || true
    done
}
trap cleanup EXIT INT TERM

dur="${NACOSD_JEPSEN_DURATION:-3m}"
# the test's timeout: the run (Go duration: 3m, 90s, 1h, 2m30s), the final
# settle and the checks
secs=0
rest="$dur"
while [[ "$rest" =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
  case "${BASH_REMATCH[2]}" in
    h) secs=$((secs + BASH_REMATCH[1] * 3600)) ;;
    m) secs=$((secs + BASH_REMATCH[1] * 60)) ;;
    s) secs=$((secs + BASH_REMATCH[1])) ;;
  esac
  rest="${BASH_REMATCH[3]}"
done
if [[ -n "$rest" || "$secs" == 0 ]]; then
  echo "jepsen: bad duration $dur (use e.g. 3m, 90s, 1h30m)" >&2
  exit 2
fi
timeout="$((secs + 900))s"
log="${NACOSD_JEPSEN_LOG:-/tmp/nacosd-jepsen.log}"
NACOSD_JEPSEN_DURATION="$dur" go -C conformance test -tags jepsen -count=1 -timeout "$timeout" -v -run 'TestJepsen$' ./jepsen/ "$@" >"$log" 2>&1
rc=$?
# the report (printed by the test) and the verdict
sed -n '/^# nacosd fault-injection check/,/^jepsen: checks took/p' "$log"
grep -E '^(jepsen: seed|--- |ok|FAIL|PASS)|jepsen_test\.go:[0-9]+:' "$log"
if [[ $rc != 0 ]]; then
  echo "jepsen: FAILED (full log: $log)" >&2
  if ! grep -q '^# nacosd fault-injection check' "$log"; then
    tail -100 "$log" >&2
  fi
fi
exit $rc
