# nacosd: see README.md. Every target works on a fresh machine with Go 1.26.
GO ?= go
BIN := bin/nacosd

.PHONY: build run test test-short lint fuzz bench conformance security clean ui ui-check ui-test cluster-test

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./server/cmd/nacosd

# Standalone server on :8848, context path /nacos, data under ./data.
run: build
	./$(BIN) -mode standalone -port 8848 -context-path /nacos -data-dir ./data

# Every Go test (unit, integration with real clients, raft crash tests), with the race detector.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

test-short:
	$(GO) test -short -count=1 ./...

# go vet and staticcheck (installed at a pinned version from the Go module
# proxy into bin/tools on first use); both must be clean.
STATICCHECK_VERSION ?= v0.8.2
TOOLS := $(CURDIR)/bin/tools
lint:
	$(GO) vet ./...
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(TOOLS)/staticcheck ./...

# Each fuzz target for a short while (seeds live in testdata/fuzz and run in `make test`).
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./server/ -run '^$$' -fuzz FuzzNamingParams -fuzztime $(FUZZTIME)
	$(GO) test ./server/ -run '^$$' -fuzz FuzzConfigParams -fuzztime $(FUZZTIME)
	$(GO) test ./server/naming/ -run '^$$' -fuzz FuzzParseBeat -fuzztime $(FUZZTIME)
	$(GO) test ./server/naming/ -run '^$$' -fuzz FuzzParseMetadata -fuzztime $(FUZZTIME)
	$(GO) test ./server/push/ -run '^$$' -fuzz FuzzParseAck -fuzztime $(FUZZTIME)
	$(GO) test ./compat/ -run '^$$' -fuzz FuzzListeningConfigs -fuzztime $(FUZZTIME)
	$(GO) test ./compat/ -run '^$$' -fuzz FuzzReadImportZip -fuzztime $(FUZZTIME)

# Go benchmarks, then the HTTP load tool against a real nacosd (and Java Nacos
# when JAVA_NACOS_ADDR is set). Figures go to docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./compat/ ./server/... ./raftstore/
	bash server/cmd/nacosd-load/bench.sh

conformance:
	bash conformance/ci.sh

# The cluster fault suite: three nacosd processes on 127.0.0.11-13 with real
# clients; kill -9 (leader included), a partition (iptables, as root), a full
# restart, a client losing its server (conformance/cluster/run.sh).
cluster-test:
	bash conformance/cluster/run.sh

# The attack suite against nacosd with auth on and, when the Java reference
# can be had, against a Java Nacos 1.4.8 started with auth on, whose answers
# are logged (security/run.sh; docs/security.md); also the slow-header,
# connection-reserve and three-node auth cases of ./server/.
security:
	GO=$(GO) bash security/run.sh

# The web console's bundle (server/console/ui/dist) is committed, so Go
# builds need no npm. `make ui` rebuilds it from ui/src with the locked npm
# packages; `make ui-check` rebuilds it in a scratch copy and fails if the
# committed bundle differs; `make ui-test` runs the browser tests in Debian's
# chromium (installed when missing).
ui:
	bash server/console/ui/build.sh

ui-check:
	bash server/console/ui/build.sh --check

ui-test:
	bash server/console/ui/test.sh

clean:
	rm -rf bin
