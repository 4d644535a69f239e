#!/usr/bin/env bash
# Runs a three-node nacosd cluster on this machine (make run-cluster):
# 127.0.0.1:8848, :8858 and :8868 (raft on port-1000), each with its own
# nacos.home under ${CLUSTER_DIR:-./cluster} holding conf/cluster.conf and
# data/. Logs go to <home>/nacosd.log. Ctrl-C stops all three.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=bin/nacosd
[[ -x $bin ]] || { echo "run-cluster: build first (make build)" >&2; exit 1; }
dir="${CLUSTER_DIR:-./cluster}"
ports=(8848 8858 8868)
members=""
for p in "${ports[@]}"; do members+="127.0.0.1:$p"$'\n'; done
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' INT TERM EXIT
for p in "${ports[@]}"; do
  home="$dir/n$p"
  mkdir -p "$home/conf"
  printf '# members of the local test cluster\n%s' "$members" >"$home/conf/cluster.conf"
  "$bin" -mode cluster -home "$home" -host 127.0.0.1 -ip 127.0.0.1 -port "$p" >"$home/nacosd.log" 2>&1 &
  pids+=($!)
  echo "run-cluster: node 127.0.0.1:$p (home $home, log $home/nacosd.log)"
done
echo "run-cluster: point clients at 127.0.0.1:8848,127.0.0.1:8858,127.0.0.1:8868; Ctrl-C stops the cluster"
wait
