package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"

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
	raw := Postgres(t)
	admin, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	name := "credo_" + Partition(t)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, fmt.Sprintf("CREATE DATABASE %s CONNECTION LIMIT %d", name, limit)); err != nil {
		admin.Close()
		t.Fatalf("create a database with a connection limit: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		admin.Close()
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
