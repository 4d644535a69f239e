#!/usr/bin/env bash
# `make migrate-test`, run by .ci/run: migrates a real Java Nacos 1.4.8 on
# Debian's MariaDB into nacosd and compares both servers entry by entry
# (TestMigrateFromJavaOnMariaDB, about a minute). Installs mariadb-server
# and a JRE when missing; the Java reference comes from conformance/reference.sh.
# Works as root on a fresh machine with CI=true and no stdin.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive PATH="$PATH:/usr/sbin:/usr/local/go/bin"
log() { echo "server/migrate/ci.sh: $*" >&2; }
apt_updated=0
need() { # need <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ $apt_updated == 0 ]]; then apt-get update -qq </dev/null >/dev/null 2>&1 || true; apt_updated=1; fi
  log "installing $2"
  apt-get install -y -qq --no-install-recommends "$2" </dev/null >/dev/null
}
need mariadbd mariadb-server
need mariadb-install-db mariadb-server
need java openjdk-17-jre-headless
NACOS_REFERENCE_HOME=$(bash conformance/reference.sh)
export NACOS_REFERENCE_HOME
go test -tags conformance -count=1 -timeout 8m -run 'TestMigrateFromJavaOnMariaDB$' -v ./server/migrate/ 2>&1 \
  | grep -v 'testlog.go:[0-9]*: time=' 
exit "${PIPESTATUS[0]}"
