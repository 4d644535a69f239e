#!/usr/bin/env bash
# Conformance suite for CI and `make conformance`: installs what is missing
# (idempotent), unpacks the Java Nacos 1.4.8 reference (conformance/reference.sh),
# then runs TestConformance with both targets. Works as root on a fresh machine
# with CI=true and no stdin. Exits non-zero when a scenario regresses on
# nacosd (fails there, passes on the reference, and is not in
# conformance/known-failures.txt), when nacosd does not build, or when the
# reference cannot be had or started.
#
# Environment (all optional):
#   NACOS_REFERENCE_TARBALL  nacos-server-1.4.8.tar.gz (default: ../shared/reference/, /work/shared/reference/)
#   NACOS_REFERENCE_HOME   an already unpacked distribution (skips the tarball)
#   NACOSD_CONFORMANCE_WORK  where logs, data and table.md go (default: conformance/.work)
#   NACOSD_CONFORMANCE_ONLY  comma list of runners: java,restart,sdkgo,npm,sca,dubbo,corpus,auth
#   NACOSD_CONFORMANCE_AUTH_CLIENTS  clients the auth runner drives: java,sdkgo,npm,sca,dubbo
#   NACOSD_CONFORMANCE_MODE  auto (default: containers when Docker works), containers, processes
#   NACOSD_JRE_BASE_IMAGE    JRE base image tag (default nacosd-jre17:bookworm, built locally)
#   NACOSD_CONFORMANCE_2X    0 skips the 2.x axis (Nacos 2.x clients over gRPC, referee Java Nacos
#                            2.5.1 from conformance/reference2.sh: TestConformance2, table2.md)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export DEBIAN_FRONTEND=noninteractive

log() { echo "conformance/ci.sh: $*" >&2; }

apt_updated=0
need_pkg() { # need_pkg <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ $apt_updated == 0 ]]; then apt-get update -qq </dev/null >/dev/null 2>&1 || true; apt_updated=1; fi
  log "installing $2"
  apt-get install -y -qq "$2" </dev/null >/dev/null 2>&1 || { log "could not install $2"; return 1; }
}

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { log "go not found"; exit 1; }

# The referee: never optional here.
if ! NACOS_REFERENCE_HOME=$(bash conformance/reference.sh); then
  log "ERROR: no Java Nacos 1.4.8 reference; the suite cannot run without its java-nacos column"
  exit 3
fi
export NACOS_REFERENCE_HOME NACOSD_CONFORMANCE_REQUIRE_REFERENCE=1
log "reference: $NACOS_REFERENCE_HOME"

only="${NACOSD_CONFORMANCE_ONLY:-java,restart,sdkgo,npm,sca,dubbo,corpus,auth}"
auth_clients="${NACOSD_CONFORMANCE_AUTH_CLIENTS:-java,sdkgo,npm,sca,dubbo}"
java_ok=1
need_pkg java openjdk-17-jdk-headless || java_ok=0
need_pkg javac openjdk-17-jdk-headless || java_ok=0
need_pkg mvn maven || java_ok=0
if [[ $java_ok == 1 ]]; then
  # Maven artifacts into the default ~/.m2 cache (quick when already there).
  if ! (cd javatest/client && mvn -q -B package -DskipTests </dev/null) \
     || ! (cd javatest/spring-cloud && mvn -q -B package -DskipTests </dev/null) \
     || ! (cd javatest/spring-cloud-2.2 && mvn -q -B package -DskipTests </dev/null) \
     || ! (cd javatest/dubbo && mvn -q -B package -DskipTests </dev/null); then
    log "Maven build of javatest/client failed (no registry?); skipping the Java runners"
    java_ok=0
  fi
fi
if [[ $java_ok == 0 ]]; then
  only=$(echo ",$only," | sed 's/,java,/,/; s/,restart,/,/; s/,sca,/,/; s/,dubbo,/,/; s/^,//; s/,$//')
  auth_clients=$(echo ",$auth_clients," | sed 's/,java,/,/; s/,sca,/,/; s/,dubbo,/,/; s/^,//; s/,$//')
  log "WARNING: Java client scenarios skipped; running: $only"
fi

# Containers are the main path: Debian's docker.io, a dockerd without bridge
# or iptables (every container uses host networking), and the locally built
# JRE base image. Any failure here falls back to plain processes.
mode="${NACOSD_CONFORMANCE_MODE:-auto}"
if [[ "$mode" != processes ]]; then
  if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    need_pkg dockerd docker.io || true
    need_pkg debootstrap debootstrap || true
    if command -v dockerd >/dev/null; then
      log "starting dockerd --bridge=none --iptables=false"
      nohup dockerd --bridge=none --iptables=false >/tmp/nacosd-conformance-dockerd.log 2>&1 </dev/null &
      for _ in $(seq 1 30); do docker version >/dev/null 2>&1 && break; sleep 1; done
    fi
  fi
  if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    need_pkg debootstrap debootstrap || true
    bash docker/build-jre-base.sh "${NACOSD_JRE_BASE_IMAGE:-nacosd-jre17:bookworm}" </dev/null \
      || log "WARNING: JRE base image not built; running as processes"
  else
    log "WARNING: no Docker engine answers; running as processes"
  fi
fi
export NACOSD_CONFORMANCE_MODE="$mode"
export TESTCONTAINERS_RYUK_DISABLED=true

# npm `nacos` client (node_modules cached in conformance/npm).
npm_ok=1
need_pkg node nodejs || npm_ok=0
need_pkg npm npm || npm_ok=0
if [[ $npm_ok == 1 && ! -d conformance/npm/node_modules/nacos ]]; then
  (cd conformance/npm && npm install --no-audit --no-fund </dev/null >/dev/null 2>&1) || npm_ok=0
fi
if [[ $npm_ok == 0 ]]; then
  only=$(echo ",$only," | sed 's/,npm,/,/; s/^,//; s/,$//')
  auth_clients=$(echo ",$auth_clients," | sed 's/,npm,/,/; s/^,//; s/,$//')
  log "WARNING: npm client scenarios skipped; running: $only"
fi
export NACOSD_CONFORMANCE_ONLY="$only" NACOSD_CONFORMANCE_AUTH_CLIENTS="${auth_clients:-none}"

work="${NACOSD_CONFORMANCE_WORK:-$root/conformance/.work}"
rm -rf "$work"; mkdir -p "$work"
export NACOSD_CONFORMANCE=1 NACOSD_CONFORMANCE_WORK="$work" NACOSD_CONFORMANCE_OUT="$work/table.md"
export CGO_ENABLED=1
go test -count=1 -timeout 30m -run 'TestConformance$' -v ./conformance/ </dev/null 2>&1 | tee "$work/go-test.log" | grep -vE '^\s+conformance_test.go:[0-9]+: time=' 
rc=${PIPESTATUS[0]}
[[ -f "$work/table.md" ]] && echo "conformance/ci.sh: table in $work/table.md, logs in $work" >&2

# The 2.x axis: Nacos 2.x clients over gRPC, refereed by Java Nacos 2.5.1.
if [[ "${NACOSD_CONFORMANCE_2X:-1}" != 0 ]]; then
  if ! NACOS_REFERENCE2_HOME=$(bash conformance/reference2.sh); then
    log "ERROR: no Java Nacos 2.5.1 reference; the 2.x axis cannot run without it"
    exit 3
  fi
  if [[ $java_ok == 1 ]] && (cd javatest/client2 && mvn -q -B package -DskipTests </dev/null); then
    NACOS_REFERENCE2_HOME="$NACOS_REFERENCE2_HOME" NACOSD_CONFORMANCE2=1 NACOSD_CONFORMANCE_OUT2="$work/table2.md" \
      go test -count=1 -timeout 30m -run 'TestConformance2$' -v ./conformance/ </dev/null 2>&1 \
      | tee "$work/go-test2.log" | grep -vE '^\s+conformance(2)?_test.go:[0-9]+: time='
    rc2=${PIPESTATUS[0]}
    [[ -f "$work/table2.md" ]] && echo "conformance/ci.sh: 2.x table in $work/table2.md" >&2
    [[ $rc == 0 ]] && rc=$rc2
  else
    log "WARNING: no Java or no Maven build of javatest/client2: the 2.x axis is skipped"
  fi
fi
exit "$rc"
