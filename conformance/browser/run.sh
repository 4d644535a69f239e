#!/usr/bin/env bash
# Browser tests of the console: Debian's chromium driven by chromedp from Go
# (build tag browser, in the conformance module where chromedp lives).
#   run.sh          the browser tests (make ui-test, make test-browser)
#   run.sh --bench  the page-load measurement (make ui-bench)
# Installs chromium when it is missing (idempotent). Set
# NACOSD_UI_SCREENSHOTS=docs/console to regenerate the screenshots of
# docs/console.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is needed: apt-get install -y chromium" >&2
    exit 1
  fi
fi
# the tests run in conformance/browser: a relative screenshot directory is
# taken from the repository root
if [ -n "${NACOSD_UI_SCREENSHOTS:-}" ] && [ "${NACOSD_UI_SCREENSHOTS#/}" = "$NACOSD_UI_SCREENSHOTS" ]; then
  export NACOSD_UI_SCREENSHOTS="$PWD/$NACOSD_UI_SCREENSHOTS"
fi
if [ "${1:-}" = "--bench" ]; then
  exec go -C conformance test -tags browser -count=1 -timeout 15m -run '^$' -bench 'BrowserServicesPage' -benchtime "${BENCHTIME:-30x}" ./browser/
fi
# Without -race: the real nacos-sdk-go v1.1.6 naming client these tests
# subscribe with races with itself (its UDP push receiver sorts the
# instance list its own poll is copying, host_reactor.go:197/209), which the
# detector reports as a failure of whichever test runs it. nacosd's own
# code, this package's handlers included, is race-tested by make test.
go -C conformance test -tags browser -count=1 -timeout 15m ./browser/
