# credo: make run serves the API on the embedded SQLite default; make test runs every test.
GO ?= go
VERSION ?= v0.1.0-$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X credo/handlers.Version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION := v0.8.2
# Redocly CLI lints the OpenAPI document (redocly.yaml: the recommended rules); npx keeps the
# pinned version in its cache, so CI downloads it once per machine.
REDOCLY_VERSION := 2.77.0

.PHONY: run build test test-postgres fuzz lint openapi bench seed

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/credo ./cmd/credo

## run: serve /v2/e01/... on 127.0.0.1:8080 from ./data (SQLite).
run: build
	./bin/credo serve

## test: vet and test everything. PostgreSQL cases run when CREDO_TEST_POSTGRES is set;
## CREDO_REQUIRE_POSTGRES=1 makes a missing PostgreSQL a failure (CI sets both).
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

## test-postgres: start the local PostgreSQL cluster (see scripts/postgres.sh) and test on both stores.
test-postgres:
	eval "$$(bash scripts/postgres.sh)" && CREDO_REQUIRE_POSTGRES=1 $(MAKE) test

## fuzz: run every fuzz target for FUZZTIME (default 1m) with one worker; a failing input is
## written under its package's testdata/fuzz: fix it, and keep it as a seed (f.Add) or a table
## test on both stores. Plain `go test` runs every target's seeds on both stores (PostgreSQL when
## CREDO_TEST_POSTGRES is set); fuzzing uses SQLite, or the test PostgreSQL with CREDO_FUZZ_POSTGRES=1.
FUZZTIME ?= 1m
FUZZ_TARGETS := engine:FuzzParseDateTime engine:FuzzParseStorage engine:FuzzCheckJSON \
	engine:FuzzDraftRoundTrip engine:FuzzDraftMember engine:FuzzLoadCSV engine:FuzzCSVRoundTrip \
	engine:FuzzCSVReader handlers/request:FuzzListQuery handlers/request:FuzzAppendToken \
	handlers/observe:FuzzAccessLine cmd/credo:FuzzHTTP cmd/credo:FuzzSkipValue
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		echo "$${t##*:} (./$${t%%:*})"; \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) -parallel 1 ./$${t%%:*}/ || exit 1; \
	done

lint: openapi
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd bench/ref && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	NPM_CONFIG_UPDATE_NOTIFIER=false npx --yes @redocly/cli@$(REDOCLY_VERSION) lint --format=stylish bin/openapi.json

## openapi: write the OpenAPI document (what GET /v2/{partition}/openapi.json serves) to bin/openapi.json.
openapi:
	@mkdir -p bin
	$(GO) run ./cmd/credo openapi > bin/openapi.json

seed: build
	./bin/credo seed --partition e01

## bench: seed the bench partitions and compare credo with the reference server bench/ref on
## PostgreSQL and SQLite (see BENCHMARKS.md). BENCH_FLAGS passes harness flags, e.g.
## BENCH_FLAGS=-quick (2 s per case), -large (growth check at 1,000,000 rows), -cases W1,W2.
BENCH_FLAGS ?=
bench: build
	eval "$$(bash scripts/postgres.sh)" && \
	(cd bench/ref && $(GO) build -o ../../bin/credo-ref .) && \
	$(GO) build -o bin/credo-bench ./bench/harness && \
	./bin/credo-bench -credo bin/credo -ref bin/credo-ref -out bin/bench-results.md $(BENCH_FLAGS) && \
	CREDO_TEST_POSTGRES="$$CREDO_TEST_POSTGRES" $(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./engine/ ./handlers/
