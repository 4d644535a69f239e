#!/usr/bin/env bash
# Browser tests of the console: Debian's chromium driven by chromedp from Go.
#   test.sh          the browser tests (make ui-test)
#   test.sh --bench  the page-load measurement (make ui-bench)
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
if [ "${1:-}" = "--bench" ]; then
  NACOSD_UI_TEST=1 exec go test -count=1 -timeout 15m -run '^$' -bench 'BrowserServicesPage' -benchtime "${BENCHTIME:-30x}" ./server/console/
fi
NACOSD_UI_TEST=1 go test -race -count=1 -timeout 15m -run 'TestBrowser' ./server/console/
