package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// LimitedDatabase creates a database on the test PostgreSQL (CREDO_TEST_POSTGRES) that accepts
// at most limit connections of ordinary roles (CONNECTION LIMIT), and returns its URL; the
// database is dropped when the test ends. PostgreSQL refuses the next connection with SQLSTATE
// 53300 (too_many_connections), as it does when max_connections is reached, without touching
// the shared cluster's configuration. The test is skipped without PostgreSQL (failed with
// CREDO_REQUIRE_POSTGRES=1).
func LimitedDatabase(t testing.TB, limit int) string {
	t.Helper()
	return NewDatabase(t, fmt.Sprintf("CONNECTION LIMIT %d", limit))
}

// NewDatabase creates a database of its own on the test PostgreSQL with the options of CREATE
// DATABASE given (e.g. "ENCODING 'SQL_ASCII' …"), and returns its URL; the database is dropped
// when the test ends. The test is skipped without PostgreSQL (failed with
// CREDO_REQUIRE_POSTGRES=1).
func NewDatabase(t testing.TB, options string) string {
	t.Helper()
	raw := Postgres(t)
	admin, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	name := "credo_" + Partition(t)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" "+options); err != nil {
		admin.Close()
		t.Fatalf("create a database (%s): %v", options, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		// FORCE terminates the test's leftover connections. It was refused once (SQLSTATE 42501,
		// "must be a member of the role whose process is being terminated") by a backend of
		// another role that was still attached; such a backend leaves within moments.
		var err error
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if _, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
