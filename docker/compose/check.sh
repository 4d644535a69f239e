#!/usr/bin/env bash
# `make docker-check`, run by .ci/run: builds the image from the repo's
# Dockerfile and starts the compose examples of docker/compose/ the way a
# user would (docker-compose up), each in a scratch copy of this directory
# on free ports, then checks it answers like a Nacos: readiness, a config
# round trip, an instance registration, the build's revision, the access log
# and the audit trail under the mounted logs directory, data kept across a container restart, and — with Debian's
# Prometheus scraping it — every query of docs/grafana/nacosd-dashboard.json.
#
# Docker engine as in conformance/ci.sh: Debian's docker.io, started as
# `dockerd --bridge=none --iptables=false` when none answers; every
# container uses host networking. Installs docker.io, docker-compose and
# prometheus when missing. Idempotent; runs as root with no stdin.
#
#   COMPOSE_CHECKS="standalone"   which examples to check (cluster: see
#                                 check_cluster below, left to cluster mode)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export DEBIAN_FRONTEND=noninteractive PATH="$PATH:/usr/sbin:/usr/local/go/bin"
log() { echo "docker/compose/check.sh: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }

apt_updated=0
need() { # need <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ $apt_updated == 0 ]]; then apt-get update -qq </dev/null >/dev/null 2>&1 || true; apt_updated=1; fi
  log "installing $2"
  apt-get install -y -qq "$2" </dev/null >/dev/null 2>&1 || die "could not install $2"
}

need curl curl
if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  need dockerd docker.io
  log "starting dockerd --bridge=none --iptables=false"
  nohup dockerd --bridge=none --iptables=false >/tmp/nacosd-compose-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 30); do docker version >/dev/null 2>&1 && break; sleep 1; done
  docker version >/dev/null 2>&1 || die "no Docker engine (see /tmp/nacosd-compose-dockerd.log)"
fi
need docker-compose docker-compose
need prometheus prometheus

image="nacosd:compose-check-$$"
log "building $image from the Dockerfile"
make -s build
docker build -q -t "$image" . >/dev/null
work=$(mktemp -d /tmp/nacosd-compose.XXXXXX)
projects=()
cleanup() {
  for p in "${projects[@]}"; do
    docker-compose -p "$p" -f "$(compose_file "$p")" down -v --remove-orphans >/dev/null 2>&1 || true
  done
  [[ -n "${prom_pid:-}" ]] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  docker image rm -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# free_port prints a port that is free along with port-1000 (raft).
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((12000 + RANDOM % 19000)) # below the ephemeral range (32768+), where outgoing connections take ports
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && ! (exec 3<>/dev/tcp/127.0.0.1/$((p - 1000))) 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  die "no free port"
}

# compose_file <project>: the example file of a started project.
compose_file() { cat "$work/$1.file"; }

# up <example> <project>: start docker/compose/<example>.yaml as <project>
# from a scratch copy of docker/compose/, so its relative volume paths
# (./standalone-logs, ...) land in $work/<project>.d as they would next to
# a user's copy.
up() {
  local example=$1 p=$2
  mkdir -p "$work/$p.d"
  cp -r docker/compose/. "$work/$p.d/"
  echo "$work/$p.d/$example.yaml" >"$work/$p.file"
  projects+=("$p")
  NACOSD_IMAGE="$image" docker-compose -p "$p" -f "$(compose_file "$p")" up -d >/dev/null 2>"$work/$p.up.log" \
    || { cat "$work/$p.up.log" >&2; die "$example: docker-compose up"; }
}

# wait_ready <project> <port>
wait_ready() {
  local p=$1 port=$2
  for _ in $(seq 1 60); do
    [[ "$(curl -s -m 2 "http://127.0.0.1:$port/nacos/v1/console/health/readiness")" == OK ]] && return 0
    sleep 1
  done
  docker-compose -p "$p" -f "$(compose_file "$p")" logs --tail 50 >&2 || true
  die "$p: not ready on port $port after 60 s"
}

expect() { # expect <what> <want> <got>
  [[ "$3" == "$2" ]] || die "$1: got '$3', want '$2'"
}

# eventually <what> <command...>: retry for up to 15 s (a cluster applies
# a write on the other members a moment after answering it).
eventually() {
  local what=$1; shift
  for _ in $(seq 1 75); do "$@" && return 0; sleep 0.2; done
  die "$what"
}

# smoke <port>: a config round trip and a persistent instance.
smoke() {
  local b="http://127.0.0.1:$1/nacos"
  expect "publish" true "$(curl -s -m 10 -X POST "$b/v1/cs/configs" -d dataId=compose.check -d group=G -d content=hello)"
  expect "read" hello "$(curl -s -m 10 "$b/v1/cs/configs?dataId=compose.check&group=G")"
  expect "register" ok "$(curl -s -m 10 -X POST "$b/v1/ns/instance?serviceName=compose-svc&ip=127.0.0.7&port=80&ephemeral=false")"
  eventually "instance not listed" listed "$1"
}

# The answers are read whole before grep looks at them: with pipefail, grep -q
# leaving at its first match made a curl still writing fail (SIGPIPE), so a
# long answer (the Prometheus scrape) failed the check now and then.
scraped_ip_count() { grep -q '^nacos_monitor{module="naming",name="ipCount"} 1' <<<"$(curl -s -m 10 "http://127.0.0.1:$1/nacos/actuator/prometheus")"; }
listed() { grep -q '"ip":"127.0.0.7"' <<<"$(curl -s -m 10 "http://127.0.0.1:$1/nacos/v1/ns/instance/list?serviceName=compose-svc")"; }
config_is() { [[ "$(curl -s -m 10 "http://127.0.0.1:$1/nacos/v1/cs/configs?dataId=compose.check&group=G")" == "$2" ]]; }

# dashboard <port>: Debian's Prometheus scrapes nacosd as the nacos-docker
# example's prometheus-standalone.yaml does; every dashboard query must
# answer with at least one series.
dashboard() {
  local port=$1 pport
  pport=$(free_port)
  mkdir -p "$work/prom"
  cat >"$work/prom/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: nacos
    metrics_path: /nacos/actuator/prometheus
    static_configs: [{targets: ['127.0.0.1:$port']}]
YAML
  prometheus --config.file="$work/prom/prometheus.yml" --storage.tsdb.path="$work/prom/data" \
    --web.listen-address="127.0.0.1:$pport" >"$work/prom/log" 2>&1 &
  prom_pid=$!
  # traffic for the rate() panels, then enough scrapes for a 1m window
  for i in $(seq 1 20); do
    curl -s -m 5 -o /dev/null "http://127.0.0.1:$port/nacos/v1/cs/configs?dataId=compose.check&group=G"
    sleep 0.5
  done
  local n=0 bad=0 expr q
  while IFS= read -r expr; do
    n=$((n + 1))
    q=${expr//\$instance/.*}
    if ! grep -q '"result":\[{' <<<"$(curl -s -m 10 --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q")"; then
      log "dashboard query answers nothing: $expr"
      bad=$((bad + 1))
    fi
  done < <(grep -o '"expr": "[^"]*\(\\"[^"]*\)*"' docs/grafana/nacosd-dashboard.json \
           | sed 's/^"expr": "//; s/"$//; s/\\"/"/g')
  kill "$prom_pid"; wait "$prom_pid" 2>/dev/null || true; prom_pid=
  (( n >= 50 )) || die "read only $n dashboard queries"
  (( bad == 0 )) || die "$bad of $n dashboard queries answer nothing"
  log "all $n dashboard queries answer (Prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}'))"
}

check_standalone() {
  local p="nacosd-standalone-$$" port
  port=$(free_port)
  NACOS_PORT=$port up standalone "$p"
  wait_ready "$p" "$port"
  smoke "$port"
  eventually "standalone: /actuator/prometheus (exposed by init.d/custom.properties) lacks ipCount 1" scraped_ip_count "$port"
  # the image's binary knows the commit it was built from (make build)
  local rev
  if rev=$(git rev-parse HEAD 2>/dev/null); then
    grep -q "\"nacosd_revision\":\"$rev\"" <<<"$(curl -s -m 10 "http://127.0.0.1:$port/nacos/v1/console/server/state")" \
      || die "standalone: /v1/console/server/state does not name revision $rev"
  fi
  # the same container restarted keeps its data in the mounted data dir
  NACOSD_IMAGE="$image" NACOS_PORT=$port docker-compose -p "$p" -f "$(compose_file "$p")" restart >/dev/null 2>&1
  wait_ready "$p" "$port"
  expect "config after restart" hello "$(curl -s -m 10 "http://127.0.0.1:$port/nacos/v1/cs/configs?dataId=compose.check&group=G")"
  ls "$work/$p.d/standalone-data/raft" >/dev/null || die "standalone: nothing in the mounted data directory"
  grep -q '"GET /nacos/v1/cs/configs?dataId=compose.check&group=G HTTP/1.1" 200' "$work/$p.d"/standalone-logs/access_log.*.log \
    || die "standalone: no access log in the mounted logs directory"
  grep -q '"action":"config.publish".*"dataId":"compose.check"' "$work/$p.d"/standalone-logs/audit.*.log \
    || die "standalone: no audit trail in the mounted logs directory"
  dashboard "$port"
  log "standalone: ok (port $port)"
}

# check_cluster: docker/compose/cluster.yaml on three free ports. Not run
# by default until cluster mode lands; then add "cluster" to COMPOSE_CHECKS
# (and extend it: members, leader, replication, a node restart).
check_cluster() {
  local p="nacosd-cluster-$$" p1 p2 p3
  p1=$(free_port); p2=$(free_port); p3=$(free_port)
  NACOS1_PORT=$p1 NACOS2_PORT=$p2 NACOS3_PORT=$p3 up cluster "$p"
  for port in $p1 $p2 $p3; do wait_ready "$p" "$port"; done
  smoke "$p1"
  eventually "config not readable on node 3" config_is "$p3" hello
  eventually "instance not listed on node 2" listed "$p2"
  log "cluster: ok (ports $p1 $p2 $p3)"
}

for c in ${COMPOSE_CHECKS:-standalone}; do
  "check_$c"
done
