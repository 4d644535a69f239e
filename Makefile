# nacosd: see README.md. Every target works on a fresh machine with Go 1.26.
GO ?= go
BIN := bin/nacosd

.PHONY: test-root test-conformance-module docker docker-check build run run-cluster test vet test-unit test-integration test-process test-browser fuzz bench bench-grpc bench-scale bench-history bench-start bench-cluster rnacos conformance conformance-fuzz security migrate-test lint clean ui ui-check ui-test ui-bench ui-screenshots cluster-test jepsen

# The binary knows its build (`nacosd version`, the start-up log, metrics,
# the console): the go command stamps the VCS revision unless -buildvcs=false
# (.ci/run sets it) or the checkout is a git worktree, so the revision, its
# time and whether the tree had changes are also passed with -X
# (internal/buildinfo); without git they are left out.
BUILDINFO := github.com/nacosd/nacosd/internal/buildinfo
VCS_LDFLAGS = $(shell rev=$$(git rev-parse HEAD 2>/dev/null) && \
	echo "-X $(BUILDINFO).revision=$$rev -X $(BUILDINFO).revisionTime=$$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)" \
	"-X $(BUILDINFO).modified=$$(test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true)")

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(VCS_LDFLAGS)" -o $(BIN) ./server/cmd/nacosd

# The docker image (Dockerfile: a drop-in for nacos/nacos-server:v1.4.x).
IMAGE ?= nacosd:local
docker: build
	docker build -t $(IMAGE) .

# Build the image and start the docker/compose examples (standalone; the
# engine and docker-compose are installed when missing), with a real
# Prometheus answering every query of docs/grafana/nacosd-dashboard.json.
docker-check:
	bash docker/compose/check.sh

# Standalone server on PORT (default 8848; raft on PORT-1000), context path
# /nacos, data under ./data: `make run PORT=8850`.
PORT = 8848
run: build
	./$(BIN) -mode standalone -port $(PORT) -context-path /nacos -data-dir ./data

# A three-node cluster on 127.0.0.1:8848, :8858, :8868 (homes under ./cluster).
run-cluster: build
	bash server/cmd/nacosd/run-cluster.sh

# The Go tests in tiers, one build tag each (docs/testing.md), in both
# modules: the product (go.mod) and the suites (conformance/go.mod). A
# tier's tag adds its tests to the unit tier. `make test` runs every tier
# that needs nothing but Go and chromium; CI can run the test-* targets in
# parallel instead. test-integration and test-process test only the
# packages with tiered tests (those importing internal/testtier), found by
# go list.
CONFORMANCE := $(GO) -C conformance
GRPC_OTHER_TRANSPORT ?= grpc-go
TIERED = $$($(1) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/internal\/testtier/ {print $$1}')
test: vet
	$(MAKE) -j3 --output-sync=target test-root test-conformance-module test-browser

# make test's three parts, run side by side (many tests wait on timers and
# sockets more than they compute)
test-root:
	$(GO) test -race -count=1 -timeout 30m -tags integration,process ./...
	# the server's gRPC tests once more on the other transport (grpc-go's server)
	NACOSD_TEST_GRPC_TRANSPORT=$(GRPC_OTHER_TRANSPORT) $(GO) test -race -count=1 -timeout 10m -tags integration,process -run 'GRPC|Grpc|Rebalance' ./server/

test-conformance-module:
	$(CONFORMANCE) test -race -count=1 -timeout 30m -tags integration,process ./...

vet:
	$(GO) vet ./...
	$(CONFORMANCE) vet ./...

# Unit: in-process, one node at most, no binary built.
test-unit:
	$(GO) test -race -count=1 -timeout 20m ./...
	$(CONFORMANCE) test -race -count=1 -timeout 20m ./...

# Integration: several in-process nodes, real-time waits, real client
# libraries in process (conformance/sdkgo).
test-integration:
	$(GO) test -race -count=1 -timeout 30m -tags integration $(call TIERED,$(GO))
	$(CONFORMANCE) test -race -count=1 -timeout 30m -tags integration $(call TIERED,$(CONFORMANCE))

# Process: bin/nacosd built and run as a process (kill -9, signals, CLI).
test-process:
	$(GO) test -race -count=1 -timeout 30m -tags process $(call TIERED,$(GO))

# Browser: the console in chromium (installed when missing); = ui-test.
test-browser:
	bash conformance/browser/run.sh

# go vet and staticcheck (installed at a pinned version from the Go module
# proxy into bin/tools on first use); both must be clean. No binary may be
# tracked (.ci/no-binaries.sh: only the pictures of docs/).
STATICCHECK_VERSION ?= v0.8.2
TOOLS := $(CURDIR)/bin/tools
lint: vet
	bash .ci/no-binaries.sh
	GO=$(GO) bash .ci/no-test-deps.sh
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(TOOLS)/staticcheck -checks inherit,-ST1005 ./... # error texts are Java's wire messages
	cd conformance && $(TOOLS)/staticcheck -checks inherit,-ST1005 ./...

# Every fuzz target in the tree for FUZZTIME each, found rather than listed
# (.ci/fuzz.sh; --list prints them). Seeds live in testdata/fuzz and run in
# `make test`.
FUZZTIME ?= 20s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash .ci/fuzz.sh

# Go benchmarks, then the HTTP side by side with wrk (Java Nacos 1.4.8 from
# ../shared/reference when Java 17 is installed, r-nacos when `make rnacos`
# built it, nacosd, the trivial ceiling server;
# server/tools/nacosd-load/wrk.sh), whose table replaces the section
# "HTTP side by side (issue 13)" of docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./compat/ ./server/... ./raftstore/
	GO=$(GO) bash server/tools/nacosd-load/wrk.sh

# The Nacos 2.x gRPC side by side (not in CI): Java Nacos 2.5.1, r-nacos
# (make rnacos), nacosd and the gRPC ceilings, one at a time; the section
# "Nacos 2.x gRPC beside r-nacos and a server that does nothing" of
# docs/benchmarks.md (server/tools/nacosd-grpcload/side.sh: its settings).
bench-grpc:
	GO=$(GO) bash server/tools/nacosd-grpcload/side.sh

# r-nacos 0.8.8 (Rust; crates.io) for bench's r-nacos column, built with
# cargo into bin/rnacos (15–20 min on two quiet CPUs, over an hour on a
# loaded machine; not in CI).
rnacos:
	cargo install rnacos --version 0.8.8 --locked --root bin/rnacos

# The scale figures (not in CI): 100 000 beating instances, 19 000 held long
# polls, UDP push to 5 000 subscribers, 10 000 listened keys; writes the
# section "Scale figures (issue 13)" of docs/benchmarks.md. NACOSD_SCALE_BEATS_DURATION
# (default 5m) shortens the beat run (server/tools/nacosd-scale/scale.sh).
bench-scale:
	GO=$(GO) bash server/tools/nacosd-scale/scale.sh

# Config history off the heap (not in CI): 1 000 000 publishes with wrk,
# RSS before/after/after paging/after restart, history completeness; writes
# the section "History on disk (issue 13)" of docs/benchmarks.md
# (NACOSD_HISTORY_PUBLISHES to change the count; server/tools/nacosd-load/history.sh).
bench-history:
	GO=$(GO) bash server/tools/nacosd-load/history.sh

# Start to first answer with 100 000 configs and 100 000 persistent
# instances in the store (not in CI); writes the section "Start-up with a
# full store (issue 13)" of docs/benchmarks.md (server/tools/nacosd-load/startup.sh).
bench-start:
	GO=$(GO) bash server/tools/nacosd-load/startup.sh

conformance:
	bash conformance/ci.sh

# The cluster fault suite: three nacosd processes on 127.0.0.11-13 with real
# clients; kill -9 (leader included), a partition (iptables, as root), a full
# restart, a client losing its server (conformance/cluster/run.sh).
cluster-test:
	bash conformance/cluster/run.sh

# The fault-injection checker of issue 23 (conformance/jepsen/README.md):
# three nodes on 127.0.0.21-23, kill -9, SIGSTOP and iptables partitions
# drawn from SEED (default: random, printed) for DURATION (default 3m), the
# recorded histories checked (porcupine, read-your-writes, convergence,
# beating instances...). As root (iptables, installed when missing).
jepsen:
	NACOSD_JEPSEN_DURATION=$(DURATION) NACOSD_JEPSEN_SEED=$(SEED) bash conformance/jepsen/run.sh

# Throughput, cross-node visibility and checksum cost of a three-node
# cluster (figures in docs/benchmarks.md; not in CI).
bench-cluster:
	bash conformance/cluster/run.sh -run TestClusterBench

# Differential fuzzing against Java Nacos 1.4.8 for NACOSD_FUZZ_TIME (default
# 2m; not in CI): mutated corpus requests to both servers, every difference in
# status class or error message reported (conformance/.work/fuzz-report.md).
conformance-fuzz:
	bash conformance/fuzz.sh

# The attack suite against nacosd with auth on and, when the Java reference
# can be had, against a Java Nacos 1.4.8 started with auth on, whose answers
# are logged (conformance/security/run.sh; docs/security.md); also the slow-header,
# connection-reserve and three-node auth cases of ./server/.
security:
	GO=$(GO) bash conformance/security/run.sh

# nacosd migrate against a real Java Nacos 1.4.8 on Debian's MariaDB (both
# installed or unpacked when missing): fill Java through its API, migrate,
# compare entry by entry through both servers' APIs (docs/migration.md).
migrate-test:
	bash server/migrate/ci.sh

# The web console's bundle (server/console/ui/dist) is committed, so Go
# builds need no npm. `make ui` rebuilds it from ui/src with the locked npm
# packages; `make ui-check` rebuilds it in a scratch copy and fails if the
# committed bundle differs; `make ui-test` runs the browser tests in Debian's
# chromium (installed when missing).
ui:
	bash server/console/ui/build.sh

ui-check:
	bash server/console/ui/build.sh --check

ui-test: test-browser

# The browser tests, writing the screenshots of docs/console.md.
ui-screenshots:
	NACOSD_UI_SCREENSHOTS=docs/console bash conformance/browser/run.sh

# How long the console takes in chromium to show the services page with
# 10 000 services (docs/console.md records the figures).
ui-bench:
	bash conformance/browser/run.sh --bench

clean:
	rm -rf bin
