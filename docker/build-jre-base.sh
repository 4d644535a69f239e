#!/usr/bin/env bash
# Builds the local JRE base image (default tag nacosd-jre17:bookworm) without
# an image registry: debootstrap a minimal Debian bookworm with
# openjdk-17-jre-headless from the Debian mirror apt already uses, then
# `docker import`. Idempotent: does nothing when the image exists.
# Users with a registry can skip this and pass e.g.
#   --build-arg BASE_IMAGE=eclipse-temurin:17-jre
# to docker/jre/Dockerfile instead.
set -euo pipefail
tag="${1:-nacosd-jre17:bookworm}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-jre-base.sh: $tag exists"; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null || { apt-get update -qq </dev/null; apt-get install -y -qq debootstrap </dev/null; }
# The mirror apt is configured with (deb822 sources or sources.list).
mirror=$(grep -hoE '^URIs: *\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
[[ -n "$mirror" ]] || mirror=$(grep -hoE '^deb +\S+' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1 || true)
mirror="${mirror:-http://deb.debian.org/debian}"
rootfs=$(mktemp -d /tmp/jre-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "build-jre-base.sh: debootstrap bookworm from $mirror into $rootfs"
debootstrap --variant=minbase --include=openjdk-17-jre-headless,ca-certificates-java bookworm "$rootfs" "$mirror" >/tmp/debootstrap.log 2>&1 \
  || { tail -20 /tmp/debootstrap.log; exit 1; }
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["java","-version"]' - "$tag"
docker run --rm --network host "$tag" java -version
