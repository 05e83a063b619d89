# credo: make run serves the API on the embedded SQLite default; make test runs every test.
GO ?= go
VERSION ?= v0.1.0-$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS := -X credo/handlers.Version=$(VERSION)
STATICCHECK_VERSION := v0.8.2

.PHONY: run build test test-postgres lint bench seed

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

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

seed: build
	./bin/credo seed --partition e01

## bench: seed the bench partitions and compare credo with the reference server bench/ref on
## PostgreSQL and SQLite (see BENCHMARKS.md). BENCH_FLAGS passes harness flags, e.g.
## BENCH_FLAGS=-quick (2 s per case), -large (growth check at 1,000,000 rows), -cases W1,W2.
BENCH_FLAGS ?=
bench: build
	eval "$$(bash scripts/postgres.sh)" && \
	$(GO) build -o bin/credo-ref ./bench/ref && \
	$(GO) build -o bin/credo-bench ./bench/harness && \
	./bin/credo-bench -credo bin/credo -ref bin/credo-ref -out bin/bench-results.md $(BENCH_FLAGS) && \
	CREDO_TEST_POSTGRES="$$CREDO_TEST_POSTGRES" $(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./engine/ ./handlers/
