# nacosd: see README.md. Every target works on a fresh machine with Go 1.26.
GO ?= go
BIN := bin/nacosd

.PHONY: build run test test-short race fuzz bench conformance conformance-fuzz security lint clean ui ui-check ui-test

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

# Differential fuzzing against Java Nacos 1.4.8 for NACOSD_FUZZ_TIME (default
# 2m; not in CI): mutated corpus requests to both servers, every difference in
# status class or error message reported (conformance/.work/fuzz-report.md).
conformance-fuzz:
	bash conformance/fuzz.sh

# The attack suite against nacosd with auth on (docs/security.md); set
# NACOSD_SECURITY_JAVA=host:port of a Java Nacos 1.4.8 started with
# -Dnacos.core.auth.enabled=true to log what each attack does there.
security:
	$(GO) test -count=1 ./security/ ./server/auth/

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
