#!/usr/bin/env bash
# Browser tests of the console: Debian's chromium driven by chromedp from Go.
# Installs chromium when it is missing (idempotent). Set
# NACOSD_UI_SCREENSHOTS=docs/console to regenerate the screenshots of
# docs/console.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is needed: apt-get install -y chromium" >&2
    exit 1
  fi
fi
NACOSD_UI_TEST=1 go test -race -count=1 -timeout 15m -run 'TestBrowser' ./server/console/
