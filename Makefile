# acpgate — see README.md. `make test` is what CI runs (.ci/run).
GO        ?= go
BIN       ?= bin
NPM_DIRS  := testdata/everything testdata/acpnode testdata/conformance testdata/filesystem
STATICCHECK_VERSION := v0.8.2
# release: RELEASE_REPO is the repository named in the registry entry;
# RELEASE_URL is where the archives will be downloaded from once they are
# published ({version} and {file} are filled in); DIST the output.
RELEASE_REPO ?= https://github.com/acpgate/acpgate
RELEASE_URL  ?= $(RELEASE_REPO)/releases/download/v{version}/{file}
DIST         ?= dist

.PHONY: build test race lint bench npm demo clean cross cross-build conformance testbin-race testbin-plain release release-check otelcol telemetry-e2e

build:
	$(GO) build ./...
	$(GO) build -o $(BIN)/acpgate ./cmd/acpgate
	$(GO) build -o $(BIN)/acpcli ./cmd/acpcli
	$(GO) build -o $(BIN)/mcpserver ./internal/testsupport/fake/mcpserver

# demo: acpgate launched by acpcli with the test MCP server as a session
# server; shows /mcp, /tools and a /call (no model needed). It builds only
# the three binaries it runs, acpgate with the nomodels and notelemetry
# tags: without the model SDKs and the OTLP exporters (gRPC, protobuf),
# which the demo does not use and which are most of a first build
# (docs/benchmarks.md). make build builds the whole acpgate.
DEMO_BINS := ./cmd/acpgate ./cmd/acpcli ./internal/testsupport/fake/mcpserver
demo:
	$(GO) build -tags nomodels,notelemetry -o $(BIN)/ $(DEMO_BINS)
	@state=$$(mktemp -d); \
	printf '%s\n' '/mcp' '/tools' '/call mcp__demo__add {"a":2,"b":40}' | \
	  $(BIN)/acpcli --agent "$(BIN)/acpgate --state-dir $$state --log-level warn" \
	    --mcp demo='$(CURDIR)/$(BIN)/mcpserver -name demo' --yes; \
	status=$$?; rm -rf $$state; exit $$status

# npm: install the pinned Node packages the integration tests run
# (package-lock.json files), once per lock-file change.
npm: $(addsuffix /node_modules/.package-lock.json,$(NPM_DIRS))

%/node_modules/.package-lock.json: %/package-lock.json %/package.json
	npm ci --prefix $* --no-audit --no-fund --loglevel=error
	@touch $@

# test: the Node packages, the cross type-check and the binaries the tests
# run as processes are made side by side first; -p 4 runs four test
# binaries at once (they mostly wait on processes). Without the race
# detector: on a fresh machine its instrumented build of the standard
# library and every dependency (the two model SDKs are half of it) would
# double the suite's time (docs/benchmarks.md). go test's own vet step is
# off (-vet=off): make lint runs go vet in full, and on a fresh machine the
# step costs about 50 CPU-s, the margin of the suite's 6-minute budget.
# race: the same suite with the race detector, acpgate built with it too;
# run it (and make lint) before every commit.
test:
	@$(MAKE) --no-print-directory -j4 npm cross testbin-plain
	$(TESTBIN_ENV) $(TEST_GOFLAGS) $(GO) test -vet=off -count=1 -p 4 -parallel 4 ./...

race:
	@$(MAKE) --no-print-directory -j4 npm testbin-race testbin-plain
	$(TESTBIN_ENV) $(TEST_GOFLAGS) $(GO) test -race -count=1 -p 4 -parallel 4 ./...

# The two model SDKs are compiled without inlining (-l) for the tests and
# the binaries they start: they are most of a cold build (anthropic-sdk-go
# 93 CPU-s, openai-go's root package 81) and -l makes them about 40 %
# cheaper; nothing the tests check depends on how they are inlined. make
# build, make bench and releases compile them as usual.
TEST_GOFLAGS := GOFLAGS="$(GOFLAGS) -gcflags=github.com/openai/openai-go/v3/...=-l -gcflags=github.com/anthropics/anthropic-sdk-go/v2/...=-l"

# The binaries tests run (internal/testsupport/testbin: PrebuiltEnv):
# acpgate with the race detector for the race-built suite and without it
# for the plain one and for memory measurements; the fixtures (under
# internal/testsupport/fake and internal/testsupport) without it.
TESTBIN       := $(CURDIR)/$(BIN)/test
TESTBIN_ENV   := ACPGATE_TESTBIN=$(TESTBIN)
TESTBIN_FIXTURES := ./internal/testsupport/fake/mcpserver ./internal/testsupport/minagent ./internal/testsupport/conformance/harness

testbin-race:
	$(TEST_GOFLAGS) $(GO) build -race -o $(TESTBIN)/race/ ./cmd/acpgate

testbin-plain:
	$(TEST_GOFLAGS) $(GO) build -o $(TESTBIN)/plain/ ./cmd/acpgate $(TESTBIN_FIXTURES)

# otelcol: the OpenTelemetry Collector (v0.161.0: the otlp receiver and
# the contrib file exporter) that the telemetry end-to-end test exports
# to, from testdata/otelcol, a module of its own (the collector stays out
# of acpgate's module graph). A cold build is about 3 CPU-minutes
# (docs/benchmarks.md), so it is not part of make test.
# telemetry-e2e: that test (cmd/acpgate TestTelemetryCollector), through
# the binary, with a session on the reference MCP server; .ci/run runs it
# after make test.
OTELCOL := $(TESTBIN)/otelcol
otelcol:
	cd testdata/otelcol && $(GO) build -o $(OTELCOL) .

telemetry-e2e:
	@$(MAKE) --no-print-directory -j3 npm testbin-plain otelcol
	$(TESTBIN_ENV) ACPGATE_OTELCOL=$(OTELCOL) $(TEST_GOFLAGS) $(GO) test -vet=off -count=1 -run '^TestTelemetryCollector$$' ./cmd/acpgate

# conformance: the MCP conformance suite's client scenarios against acpgate
# (through ACP, internal/testsupport/conformance/harness): a table per
# requirement set (2025-11-25, 2026-07-28, each at its wire; then the other
# client scenarios); exits 1 when the results differ from the expected
# failures (internal/testsupport/conformance/expected.go). Results:
# docs/conformance.md.
conformance: npm
	$(GO) run ./internal/testsupport/conformance/run

# cross: everything type-checks for Windows and macOS too (the process
# teardown has a job-object and a sysctl implementation there), from
# source (internal/testsupport/typecheck): a cross build would compile the
# standard library and every dependency again per platform, minutes on a
# fresh machine. Test support (internal/testsupport/fake, internal/testsupport) runs on
# the test machine only and is left out. cross-build compiles for both.
CROSS_PKGS = $(shell $(GO) list ./... | grep -v '/internal/testsupport/')
cross:
	$(GO) run ./internal/testsupport/typecheck -targets windows/amd64,darwin/arm64 $(CROSS_PKGS)

cross-build:
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) build ./...

# release: make release VERSION=x.y.z — one archive per ACP registry
# platform, SHA256SUMS and the registry entry (registry/acpgate/) into
# $(DIST), from the committed sources (a changed tree stamps its commit
# "-dirty"). See docs/releases.md, "Making a release".
release:
	rm -rf $(DIST)
	$(GO) run ./cmd/internal/release -go $(GO) -version '$(VERSION)' -url '$(RELEASE_URL)' -repository '$(RELEASE_REPO)' -out $(DIST)

# release-check: the whole release twice, into two directories; every
# file must be the same, byte for byte.
release-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(MAKE) --no-print-directory release VERSION='$(VERSION)' DIST="$$tmp/a" && \
	$(MAKE) --no-print-directory release VERSION='$(VERSION)' DIST="$$tmp/b" && \
	diff -r "$$tmp/a" "$$tmp/b" && \
	echo "release-check: two releases of $(VERSION), $$(find "$$tmp/a" -type f | wc -l) files each, are identical"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags nomodels,notelemetry ./cmd/acpgate
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: npm
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN) $(DIST) $(addsuffix /node_modules,$(NPM_DIRS))
