#!/usr/bin/env bash
# Fails when the product module (the root go.mod) names a dependency only
# the test suites use, or when a package or test of the root module
# imports one: those belong to the conformance module (conformance/go.mod),
# so a user of nacosd never downloads them. Run by `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# testcontainers (and the Docker client it brings), the browser driver,
# the Go Nacos SDKs (v1 and v2) and the linearizability checker
deps='github\.com/(testcontainers/|moby/|docker/docker|chromedp/|nacos-group/nacos-sdk-go|anishathalye/porcupine)'
bad=0
if found=$(grep -nE "^[[:space:]]*(require[[:space:]]+)?$deps" go.mod); then
  echo "no-test-deps: go.mod names test-only dependencies (move their tests to conformance/):" >&2
  echo "$found" >&2
  bad=1
fi
if found=$("$GO" list -deps -test ./... | grep -E "^$deps"); then
  echo "no-test-deps: packages of the root module import test-only dependencies:" >&2
  echo "$found" | sort -u >&2
  bad=1
fi
# and in general: every direct requirement of go.mod is imported by a
# non-test package of the root module (a module only tests import, such as
# a leak checker, is a test-only dependency too)
nontest=$("$GO" list -deps ./...)
for m in $("$GO" list -m -f '{{if and (not .Indirect) (not .Main)}}{{.Path}}{{end}}' all); do
  if ! grep -qE "^${m//./\\.}(/|$)" <<<"$nontest"; then
    echo "no-test-deps: go.mod requires $m, which only tests import (move the tests to conformance/ or drop it)" >&2
    bad=1
  fi
done
exit "$bad"
