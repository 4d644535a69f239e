#!/usr/bin/env bash
# Runs Java Nacos 1.4.8 standalone (embedded Derby) on 127.0.0.1:<port> in the
# foreground, for the conformance suite's java-nacos target.
#
#   run.sh <port> [-Dk=v ...]  start from the distribution in $NACOS_REFERENCE_HOME;
#                          extra JVM options come last, so they override the
#                          defaults below (e.g. -Dnacos.core.auth.enabled=true)
#   run.sh --probe         exit 0 if a 1.4.x server can be had, 3 if not
#
# $NACOS_REFERENCE_HOME: an unpacked official nacos-server-1.4.8 distribution
# (target/nacos-server.jar and conf/). It is used read-only: conf/ is copied
# to $NACOS_REFERENCE_WORK (default: a temp dir), which becomes nacos.home
# (Derby data, logs). Never build Nacos from source for this.
# $NACOS_REFERENCE_JAVA_OPTS: extra JVM options (e.g. -Dnacos.core.auth.enabled=true
# and the identity key/value); they come after the defaults below, so they win.
#
# Maven Central serves no Nacos 1.4.x *server* artifact (nacos-console,
# nacos-naming, nacos-config, nacos-core at 1.4.x all resolve to nothing;
# only nacos-client and the parent pom nacos-all are published), so the
# suite cannot fetch a reference by itself here. See docs/conformance.md.
set -euo pipefail

probe_maven() {
  local v
  for v in 1.4.8 1.4.7 1.4.6 1.4.5 1.4.4 1.4.3 1.4.2 1.4.1 1.4.0; do
    if mvn -q -B dependency:get -Dtransitive=false -Dartifact=com.alibaba.nacos:nacos-console:$v >/dev/null 2>&1; then
      echo "com.alibaba.nacos:nacos-console:$v"
      return 0
    fi
  done
  return 3
}

if [[ "${1:-}" == "--probe" ]]; then
  if [[ -n "${NACOS_REFERENCE_HOME:-}" && -f "$NACOS_REFERENCE_HOME/target/nacos-server.jar" ]]; then
    echo "distribution $NACOS_REFERENCE_HOME"; exit 0
  fi
  probe_maven || { echo "no Java Nacos 1.4.x server available" >&2; exit 3; }
  exit 0
fi

port="${1:?usage: run.sh <port> [-Dk=v ...]}"
shift
home="${NACOS_REFERENCE_HOME:?NACOS_REFERENCE_HOME must point to an unpacked nacos-server-1.4.8 distribution}"
jar="$home/target/nacos-server.jar"
[[ -f "$jar" ]] || { echo "run.sh: $jar missing" >&2; exit 3; }
work="${NACOS_REFERENCE_WORK:-$(mktemp -d)}"
mkdir -p "$work"
[[ -d "$work/conf" ]] || cp -r "$home/conf" "$work/conf"
# Derby (derby.log) and Tomcat's access log (logs/) write into the working
# directory: keep them in the work dir, never in the caller's tree.
cd "$work"

# 127.0.0.1 only; auth off (1.4.8 default); no phone-home: Nacos 1.4.8 has no
# telemetry, and standalone mode has no member lookup. JRaft binds port-1000.
exec java -Xms256m -Xmx512m -XX:+UseSerialGC \
  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED \
  --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
  -Dnacos.standalone=true -Dnacos.home="$work" -Dnacos.member.list= \
  -Dserver.port="$port" -Dserver.address=127.0.0.1 \
  -Dnacos.inetutils.ip-address=127.0.0.1 -Dnacos.server.ip=127.0.0.1 -Dnacos.inetutils.prefer-hostname-over-ip=false \
  -Dnacos.core.auth.enabled=false -Dnacos.naming.distro.taskDispatchThreadCount=1 \
  -Dmanagement.metrics.export.elastic.enabled=false -Dmanagement.metrics.export.influx.enabled=false \
  ${NACOS_REFERENCE_JAVA_OPTS:-} \
  "$@" \
  -jar "$jar" \
  --spring.config.additional-location="file:$work/conf/" \
  --logging.config="$work/conf/nacos-logback.xml" \
  --server.max-http-header-size=524288
