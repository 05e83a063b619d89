// Package testenv gives tests the databases they run against: always SQLite in a temporary
// folder, and PostgreSQL when CREDO_TEST_POSTGRES names one (required when CREDO_REQUIRE_POSTGRES=1).
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"testing"

	// The engine's drivers and validator, for every test that opens a database through
	// testenv (as a program does).
	_ "credo/engine/postgres"
	_ "credo/engine/sqlite"
	_ "credo/engine/validator"
)

// Backend is one database a test suite runs against.
type Backend struct {
	// Name is "sqlite" or "postgres", for subtest names.
	Name string
	// URL is the --database value.
	URL string
}

// Backends returns SQLite (a fresh folder) and, when configured, PostgreSQL. With
// CREDO_REQUIRE_POSTGRES=1 a missing CREDO_TEST_POSTGRES fails the test instead of skipping it.
func Backends(t testing.TB) []Backend {
	t.Helper()
	out := []Backend{{Name: "sqlite", URL: "sqlite:" + t.TempDir()}}
	if pg := os.Getenv("CREDO_TEST_POSTGRES"); pg != "" {
		out = append(out, Backend{Name: "postgres", URL: pg})
	} else if os.Getenv("CREDO_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("CREDO_REQUIRE_POSTGRES=1 but CREDO_TEST_POSTGRES is not set")
	} else {
		t.Logf("PostgreSQL cases not run: set CREDO_TEST_POSTGRES to run them")
	}
	return out
}

// FuzzBackends returns the databases a fuzz target runs against. Run as a test (its seeds and
// corpus, as CI does) it is Backends: every case on both stores. While fuzzing (-fuzz) it is one
// store, SQLite, or PostgreSQL with CREDO_FUZZ_POSTGRES=1: a fuzzer's worker per input and store
// would halve its inputs a second.
func FuzzBackends(t testing.TB) []Backend {
	t.Helper()
	if fz := flag.Lookup("test.fuzz"); fz == nil || fz.Value.String() == "" {
		return Backends(t)
	}
	if os.Getenv("CREDO_FUZZ_POSTGRES") == "1" {
		return []Backend{{Name: "postgres", URL: Postgres(t)}}
	}
	return []Backend{{Name: "sqlite", URL: "sqlite:" + t.TempDir()}}
}

// Postgres returns the test PostgreSQL's URL (CREDO_TEST_POSTGRES), for cases that only
// PostgreSQL can run. Without one the test is skipped, or fails with CREDO_REQUIRE_POSTGRES=1.
func Postgres(t testing.TB) string {
	t.Helper()
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if pg == "" {
		if os.Getenv("CREDO_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CREDO_REQUIRE_POSTGRES=1 but CREDO_TEST_POSTGRES is not set")
		}
		t.Skip("PostgreSQL case not run: set CREDO_TEST_POSTGRES to run it")
	}
	return pg
}

// Partition returns a fresh partition slug, so that suites sharing one PostgreSQL database
// never see each other's rows (each partition is its own schema). When the test ends, the
// partition's schema is dropped from the test PostgreSQL databases (CREDO_TEST_POSTGRES and its
// second, see SecondPostgres): left behind, thousands of runs' schemas grew the test cluster to
// millions of files, and its crash recovery past CI's start-up limit.
func Partition(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := "t" + hex.EncodeToString(b)
	if pg := os.Getenv("CREDO_TEST_POSTGRES"); pg != "" {
		// Registered before the test starts its servers, so it runs after they have stopped.
		t.Cleanup(func() { dropSchema(t, pg, p) })
	}
	return p
}
