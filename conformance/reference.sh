#!/usr/bin/env bash
# Makes the Java Nacos 1.4.8 reference distribution available and prints its
# directory (for NACOS_REFERENCE_HOME) on stdout. Idempotent: the tarball is
# checked against its sha256 and unpacked once into a cache outside the work
# tree; later runs only check the cached server jar against the tarball.
#
# Where the tarball is looked for, in order:
#   $NACOS_REFERENCE_TARBALL
#   <repo>/../shared/reference/nacos-server-1.4.8.tar.gz
#   /work/shared/reference/nacos-server-1.4.8.tar.gz
# Cache: $NACOSD_REFERENCE_CACHE (default ~/.cache/nacosd/reference), which
# receives nacos/ (the distribution) and nacos/.sha256 (the tarball's sum).
# A given $NACOS_REFERENCE_HOME is used as it is (its jar must exist).
#
# Exits 3, saying why on stderr, when no reference can be had: the suite
# then fails instead of silently dropping the java-nacos column.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
want_sha=e957baaa86e8967e128da76b193b4e4b8f3e2c5eb572299dbd2b0944c9bc8574
die() { echo "conformance/reference.sh: ERROR: $*" >&2; exit 3; }

if [[ -n "${NACOS_REFERENCE_HOME:-}" ]]; then
  [[ -f "$NACOS_REFERENCE_HOME/target/nacos-server.jar" ]] \
    || die "NACOS_REFERENCE_HOME=$NACOS_REFERENCE_HOME has no target/nacos-server.jar"
  echo "$NACOS_REFERENCE_HOME"
  exit 0
fi

if [[ -n "${NACOS_REFERENCE_TARBALL:-}" && ! -f "$NACOS_REFERENCE_TARBALL" ]]; then
  die "NACOS_REFERENCE_TARBALL=$NACOS_REFERENCE_TARBALL does not exist"
fi
tarball=""
for c in "${NACOS_REFERENCE_TARBALL:-}" "$root/../shared/reference/nacos-server-1.4.8.tar.gz" \
         /work/shared/reference/nacos-server-1.4.8.tar.gz; do
  if [[ -n "$c" && -f "$c" ]]; then tarball="$c"; break; fi
done
[[ -n "$tarball" ]] || die "no nacos-server-1.4.8.tar.gz (set NACOS_REFERENCE_TARBALL, or put it in ../shared/reference/ or /work/shared/reference/)"

cache="${NACOSD_REFERENCE_CACHE:-$HOME/.cache/nacosd/reference}"
home="$cache/nacos"
if [[ -f "$home/.sha256" && "$(cat "$home/.sha256")" == "$want_sha" && -f "$home/target/nacos-server.jar" ]]; then
  echo "$home"
  exit 0
fi

echo "conformance/reference.sh: checking $tarball" >&2
got_sha=$(sha256sum "$tarball" | cut -d' ' -f1)
[[ "$got_sha" == "$want_sha" ]] || die "$tarball has sha256 $got_sha, want $want_sha"
mkdir -p "$cache"
if [[ -f "$home/target/nacos-server.jar" ]]; then
  # Unpacked earlier without the stamp (by hand, or by an older script):
  # keep it when its jar is the tarball's (a running reference may use it).
  jar_sha=$(sha256sum "$home/target/nacos-server.jar" | cut -d' ' -f1)
  tar_jar_sha=$(tar -xzOf "$tarball" nacos/target/nacos-server.jar | sha256sum | cut -d' ' -f1)
  [[ "$jar_sha" == "$tar_jar_sha" ]] || die "$home/target/nacos-server.jar is not the tarball's; remove $home"
else
  tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  tar -xzf "$tarball" -C "$tmp" || die "cannot unpack $tarball"
  [[ -f "$tmp/nacos/target/nacos-server.jar" ]] || die "$tarball has no nacos/target/nacos-server.jar"
  rm -rf "$home"
  mv "$tmp/nacos" "$home"
  echo "conformance/reference.sh: unpacked into $home" >&2
fi
echo "$want_sha" > "$home/.sha256"
echo "$home"
