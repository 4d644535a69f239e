#!/usr/bin/env bash
# Runs one Java Nacos 1.4.8 node in cluster mode (embedded storage: Derby
# replicated by JRaft on <port>-1000) on <ip>:<port> in the foreground, for
# the cluster interop tests and for looking at what Java nodes send each
# other.
#
#   cluster-node.sh <ip> <port> <member>[,<member>...] [extra -D options...]
#
# <member> entries are written into the node's conf/cluster.conf (ip:port).
# $NACOS_REFERENCE_HOME: an unpacked nacos-server-1.4.8 distribution (see
# conformance/reference.sh), used read-only: conf/ is copied to
# $NACOS_REFERENCE_WORK (default: a temp dir), which becomes nacos.home.
# Only loopback addresses: never point it at anything else.
set -euo pipefail
ip="${1:?usage: cluster-node.sh <ip> <port> <members> [-Dk=v...]}"
port="${2:?port}"
members="${3:?members}"
shift 3
case "$ip" in 127.*) ;; *) echo "cluster-node.sh: $ip is not a loopback address" >&2; exit 2 ;; esac
home="${NACOS_REFERENCE_HOME:?NACOS_REFERENCE_HOME must point to an unpacked nacos-server-1.4.8 distribution}"
jar="$home/target/nacos-server.jar"
[[ -f "$jar" ]] || { echo "cluster-node.sh: $jar missing" >&2; exit 3; }
work="${NACOS_REFERENCE_WORK:-$(mktemp -d)}"
mkdir -p "$work"
[[ -d "$work/conf" ]] || cp -r "$home/conf" "$work/conf"
tr ',' '\n' <<<"$members" >"$work/conf/cluster.conf"
cd "$work"
exec java -Xms256m -Xmx512m -XX:+UseSerialGC \
  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED \
  --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
  -Dnacos.home="$work" \
  -Dserver.port="$port" -Dserver.address="$ip" \
  -Dnacos.inetutils.ip-address="$ip" -Dnacos.server.ip="$ip" -Dnacos.inetutils.prefer-hostname-over-ip=false \
  -Dnacos.core.auth.enabled=false -Dnacos.naming.distro.taskDispatchThreadCount=1 \
  -Dmanagement.metrics.export.elastic.enabled=false -Dmanagement.metrics.export.influx.enabled=false \
  "$@" \
  -jar "$jar" \
  --spring.config.additional-location="file:$work/conf/" \
  --logging.config="$work/conf/nacos-logback.xml" \
  --server.max-http-header-size=524288
