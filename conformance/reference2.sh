#!/usr/bin/env bash
# Makes the Java Nacos 2.5.1 reference (the referee of the 2.x axis, gRPC) available and prints its
# directory (for NACOS_REFERENCE2_HOME) on stdout. Idempotent: the tarball is
# checked against its sha256 and unpacked once into a cache outside the work
# tree; later runs only check the cached server jar against the tarball.
#
# Where the tarball is looked for, in order:
#   $NACOS_REFERENCE2_TARBALL
#   <repo>/../shared/reference/nacos-server-2.5.1.tar.gz
#   /work/shared/reference/nacos-server-2.5.1.tar.gz
# Cache: $NACOSD_REFERENCE2_CACHE (default ~/.cache/nacosd/reference-2.5.1), which
# receives nacos/ (the distribution) and nacos/.sha256 (the tarball's sum).
# A given $NACOS_REFERENCE2_HOME is used as it is (its jar must exist).
#
# Exits 3, saying why on stderr, when no reference can be had: the suite
# then fails instead of silently dropping the java-nacos column.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
want_sha=fc35f8f893108fbf0d25924342253ca0aa6fd7bce1fb236c52a296694158af38
die() { echo "conformance/reference2.sh: ERROR: $*" >&2; exit 3; }

if [[ -n "${NACOS_REFERENCE2_HOME:-}" ]]; then
  [[ -f "$NACOS_REFERENCE2_HOME/target/nacos-server.jar" ]] \
    || die "NACOS_REFERENCE2_HOME=$NACOS_REFERENCE2_HOME has no target/nacos-server.jar"
  echo "$NACOS_REFERENCE2_HOME"
  exit 0
fi

if [[ -n "${NACOS_REFERENCE2_TARBALL:-}" && ! -f "$NACOS_REFERENCE2_TARBALL" ]]; then
  die "NACOS_REFERENCE2_TARBALL=$NACOS_REFERENCE2_TARBALL does not exist"
fi
tarball=""
for c in "${NACOS_REFERENCE2_TARBALL:-}" "$root/../shared/reference/nacos-server-2.5.1.tar.gz" \
         /work/shared/reference/nacos-server-2.5.1.tar.gz; do
  if [[ -n "$c" && -f "$c" ]]; then tarball="$c"; break; fi
done
[[ -n "$tarball" ]] || die "no nacos-server-2.5.1.tar.gz (set NACOS_REFERENCE2_TARBALL, or put it in ../shared/reference/ or /work/shared/reference/)"

cache="${NACOSD_REFERENCE2_CACHE:-$HOME/.cache/nacosd/reference-2.5.1}"
home="$cache/nacos"
if [[ -f "$home/.sha256" && "$(cat "$home/.sha256")" == "$want_sha" && -f "$home/target/nacos-server.jar" ]]; then
  echo "$home"
  exit 0
fi

echo "conformance/reference2.sh: checking $tarball" >&2
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
  echo "conformance/reference2.sh: unpacked into $home" >&2
fi
echo "$want_sha" > "$home/.sha256"
echo "$home"
