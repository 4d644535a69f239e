#!/usr/bin/env bash
# The cluster fault suite (make cluster-test): builds nacosd, runs three
# nodes on 127.0.0.11-13 and the fault scenarios of this directory. Needs
# root for iptables (the partition), which it installs when missing. The
# whole log goes to $NACOSD_CLUSTER_LOG (default /tmp/nacosd-cluster-test.log);
# the summary lines (timings, convergence) are printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v iptables >/dev/null 2>&1; then
  echo "cluster-test: installing iptables" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iptables) </dev/null >/dev/null 2>&1 \
    || { echo "cluster-test: cannot install iptables" >&2; exit 1; }
fi
if ! command -v mariadbd >/dev/null 2>&1; then
  echo "cluster-test: installing mariadb-server (the Java member of the mixed-cluster test runs on MySQL)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server) </dev/null >/dev/null 2>&1 \
    || { echo "cluster-test: cannot install mariadb-server" >&2; exit 1; }
fi
# the Java Nacos 1.4.8 reference for the mixed cluster (never optional)
NACOS_REFERENCE_HOME=$(bash conformance/reference.sh) || exit 3
export NACOS_REFERENCE_HOME
log="${NACOSD_CLUSTER_LOG:-/tmp/nacosd-cluster-test.log}"
# TestClusterBench (make bench-cluster: -run TestClusterBench) is a
# measurement, skipped unless the arguments select tests
args=("$@")
((${#args[@]})) || args=(-skip '^TestClusterBench$')
go -C conformance test -tags cluster -count=1 -timeout 20m -v ./cluster/ "${args[@]}" >"$log" 2>&1
rc=$?
grep -E '^(=== RUN|--- |ok|FAIL|PASS)|^\s+\w+_test\.go:[0-9]+: [^-]' "$log"
if [[ $rc != 0 ]]; then
  echo "cluster-test: FAILED (full log: $log); last lines:" >&2
  tail -200 "$log" >&2
fi
exit $rc
