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
#   NACOSD_CONFORMANCE_ONLY  comma list of runners: java,restart,sdkgo,npm,sca,dubbo,corpus,auth (1.x)
#                            and grpc-corpus,corpus2,java2,loss2,sca2,dubbo3,sdkgo2,python2,python3,auth2 (2.x axis);
#                            an axis none of whose runners is listed does not run
#   NACOSD_CONFORMANCE_AUTH_CLIENTS  clients the auth runner drives: java,sdkgo,npm,sca,dubbo
#   NACOSD_CONFORMANCE_MODE  auto (default: containers when Docker works), containers, processes
#   NACOSD_JRE_BASE_IMAGE    JRE base image tag (default nacosd-jre17:bookworm, built locally)
#   NACOSD_CONFORMANCE_2X    0 skips the 2.x axis (Nacos 2.x clients over gRPC, referee Java Nacos
#                            2.5.1 from conformance/reference2.sh: TestConformance2, table2.md)
# The 2.x axis also installs the nacos-sdk-python 2.x and 3.x virtualenvs (conformance/python/.venv
# and .venv3, from requirements.txt and requirements3.txt; Debian's python3-venv when python3 has
# no venv module) and builds
# javatest/client2 for every nacos-client 2.x version, the Spring Cloud Alibaba 2021/2023 apps and
# Dubbo 3 into ~/.m2.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export DEBIAN_FRONTEND=noninteractive

log() { echo "conformance/ci.sh: $*" >&2; }

apt_updated=0
apt_install() { # apt_install <debian package>
  if [[ $apt_updated == 0 ]]; then apt-get update -qq </dev/null >/dev/null 2>&1 || true; apt_updated=1; fi
  log "installing $1"
  apt-get install -y -qq "$1" </dev/null >/dev/null 2>&1 || { log "could not install $1"; return 1; }
}
need_pkg() { # need_pkg <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  apt_install "$2"
}

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { log "go not found"; exit 1; }

# Runners of each axis: NACOSD_CONFORMANCE_ONLY may name runners of both.
all1=java,restart,sdkgo,npm,sca,dubbo,corpus,auth
all2=grpc-corpus,corpus2,java2,loss2,sca2,dubbo3,sdkgo2,python2,python3,auth2
pick() { # pick <wanted list> <axis list>: the axis's runners in the wanted list
  local r out=""
  for r in ${2//,/ }; do [[ ",$1," == *",$r,"* ]] && out="$out,$r"; done
  echo "${out#,}"
}
only_in="${NACOSD_CONFORMANCE_ONLY:-$all1,$all2}"
only=$(pick "$only_in" "$all1")
only2=$(pick "$only_in" "$all2")
[[ "${NACOSD_CONFORMANCE_2X:-1}" == 0 ]] && only2=""
log "runners: 1.x ${only:-none}; 2.x ${only2:-none}"

# The referee: never optional here.
if [[ -n "$only" ]]; then
  if ! NACOS_REFERENCE_HOME=$(bash conformance/reference.sh); then
    log "ERROR: no Java Nacos 1.4.8 reference; the suite cannot run without its java-nacos column"
    exit 3
  fi
  export NACOS_REFERENCE_HOME NACOSD_CONFORMANCE_REQUIRE_REFERENCE=1
  log "reference: $NACOS_REFERENCE_HOME"
fi

auth_clients="${NACOSD_CONFORMANCE_AUTH_CLIENTS:-java,sdkgo,npm,sca,dubbo}"
java_ok=1
need_pkg java openjdk-17-jdk-headless || java_ok=0
need_pkg javac openjdk-17-jdk-headless || java_ok=0
need_pkg mvn maven || java_ok=0
if [[ $java_ok == 1 && -n "$only" ]]; then
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
if [[ "$mode" != processes && -n "$only" ]]; then  # the 2.x axis runs processes only
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
if [[ $npm_ok == 1 && -n "$only" && ! -d conformance/npm/node_modules/nacos ]]; then
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
export NACOSD_CONFORMANCE_WORK="$work"
export CGO_ENABLED=1
rc=0
if [[ -n "$only" ]]; then
  t0=$SECONDS
  NACOSD_CONFORMANCE_OUT="$work/table.md" \
    go -C "$root/conformance" test -tags conformance -count=1 -timeout 30m -run 'TestConformance$' -v . </dev/null 2>&1 | tee "$work/go-test.log" | grep -vE '^\s+conformance_test.go:[0-9]+: time='
  rc=${PIPESTATUS[0]}
  [[ -f "$work/table.md" ]] && echo "conformance/ci.sh: table in $work/table.md, logs in $work" >&2
  log "1.x suite: $((SECONDS - t0)) s"
fi

# The 2.x axis: Nacos 2.x clients over gRPC, refereed by Java Nacos 2.5.1.
if [[ -n "$only2" ]]; then
  t0=$SECONDS
  if ! NACOS_REFERENCE2_HOME=$(bash conformance/reference2.sh); then
    log "ERROR: no Java Nacos 2.5.1 reference; the 2.x axis cannot run without it"
    exit 3
  fi
  has2() { [[ ",$only2," == *",$1,"* ]]; }
  drop2() { only2=$(echo ",$only2," | sed "s/,$1,/,/; s/^,//; s/,\$//"); log "WARNING: 2.x runner $1 skipped: $2"; }
  if [[ $java_ok == 1 ]]; then
    # every Maven project of the axis, each nacos-client 2.x version of javatest/client2 in its own
    # build directory (the suite builds them again, quickly, from ~/.m2)
    for v in 2.5.1 2.4.3 2.2.4 2.0.4; do
      (cd javatest/client2 && mvn -q -B -Dnacos.version=$v -Dbuild.dir="$root/javatest/client2/target/v$v" package -DskipTests </dev/null) \
        || { java_ok=0; break; }
    done
    (cd javatest/client && mvn -q -B -Dnacos.version=1.4.8 -Dbuild.dir="$root/javatest/client/target/v1.4.8" package -DskipTests </dev/null) || java_ok=0
    if has2 sca2 && ! { (cd javatest/spring-cloud-2021 && mvn -q -B package -DskipTests </dev/null) \
        && (cd javatest/spring-cloud-2023 && mvn -q -B package -DskipTests </dev/null); }; then
      drop2 sca2 "Maven build of javatest/spring-cloud-2021 or -2023 failed"
    fi
    if has2 dubbo3 && ! (cd javatest/dubbo3 && mvn -q -B package -DskipTests </dev/null); then
      drop2 dubbo3 "Maven build of javatest/dubbo3 failed"
    fi
  fi
  if [[ $java_ok == 0 ]]; then
    for r in java2 loss2 sca2 dubbo3; do has2 $r && drop2 $r "no Java or Maven (javatest/client2 did not build)"; done
  fi
  # nacos-sdk-python 2.x and 3.x, each in a virtualenv of its own (never the system's site-packages)
  for py in "python2 .venv requirements.txt" "python3 .venv3 requirements3.txt"; do
    read -r runner venv reqs <<<"$py"
    has2 "$runner" || has2 auth2 || continue
    venv="conformance/python/$venv"
    "$venv/bin/python" -c 'import v2.nacos' >/dev/null 2>&1 && continue
    need_pkg python3 python3 || true
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
      pyv=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")' 2>/dev/null)
      apt_install "python$pyv-venv" || apt_install python3-venv || true
    fi
    rm -rf "$venv"
    if python3 -m venv "$venv" </dev/null >/dev/null 2>&1 \
       && "$venv/bin/pip" install -q --disable-pip-version-check -r "conformance/python/$reqs" </dev/null >/dev/null 2>&1; then
      log "installed $(grep -v '^#' "conformance/python/$reqs") into $venv"
    else
      rm -rf "$venv"
      has2 "$runner" && drop2 "$runner" "could not make $venv with conformance/python/$reqs"
    fi
  done
  if [[ -n "$only2" ]]; then
    NACOS_REFERENCE2_HOME="$NACOS_REFERENCE2_HOME" NACOSD_CONFORMANCE_OUT2="$work/table2.md" \
      NACOSD_CONFORMANCE_ONLY="$only2" \
      go -C "$root/conformance" test -tags conformance -count=1 -timeout 40m -run 'TestConformance2$' -v . </dev/null 2>&1 \
      | tee "$work/go-test2.log" | grep -vE '^\s+conformance(2)?_test.go:[0-9]+: time='
    rc2=${PIPESTATUS[0]}
    [[ -f "$work/table2.md" ]] && echo "conformance/ci.sh: 2.x table in $work/table2.md" >&2
    [[ $rc == 0 ]] && rc=$rc2
  else
    log "WARNING: no 2.x runner left: the 2.x axis is skipped"
  fi
  log "2.x axis: $((SECONDS - t0)) s"
fi
exit "$rc"
