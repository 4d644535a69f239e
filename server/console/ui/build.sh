#!/usr/bin/env bash
# Builds the console bundle from src/ with the locked npm packages.
#   build.sh          rebuild dist/ in place (after changing src/)
#   build.sh --check  rebuild in a scratch copy and fail when the committed
#                     dist/ differs (CI: the bundle matches its source)
set -euo pipefail
ui="$(cd "$(dirname "$0")" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "npm is needed: install Node.js 20+ and npm" >&2
    exit 1
  fi
fi
build() { # dir
  (cd "$1" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && node build.mjs)
}
if [ "${1:-}" = "--check" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  cp -r "$ui/package.json" "$ui/package-lock.json" "$ui/build.mjs" "$ui/src" "$tmp/"
  build "$tmp" >/dev/null
  if ! diff -r "$ui/dist" "$tmp/dist"; then
    echo "server/console/ui/dist does not match a rebuild of ui/src: run 'make ui' and commit dist/" >&2
    exit 1
  fi
  echo "console bundle matches its source"
else
  build "$ui"
fi
