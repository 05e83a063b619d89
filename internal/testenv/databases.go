package testenv

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SecondPostgres returns the URL of a second PostgreSQL database beside CREDO_TEST_POSTGRES's,
// on the same server with the same role, named after it with a "2" (credo_test2), creating it
// when missing (the role needs CREATEDB). Tests that place partitions on several databases use
// it; without CREDO_TEST_POSTGRES the test is skipped, or fails with CREDO_REQUIRE_POSTGRES=1.
func SecondPostgres(t testing.TB) string {
	t.Helper()
	first := Postgres(t)
	second := secondURL(first)
	u, err := url.Parse(second)
	if err != nil {
		t.Fatal(err)
	}
	name := u.Path[1:]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, first)
	if err != nil {
		t.Fatalf("connect to %s: %v", u.Redacted(), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		var pgErr *pgconn.PgError
		// Another test binary may create it at the same moment.
		if err != nil && !(errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505")) {
			t.Fatalf("create database %s: %v", name, err)
		}
	}
	return second
}

// secondURL names the second database beside first's: its name with a "2" appended.
func secondURL(first string) string {
	u, err := url.Parse(first)
	if err != nil || len(u.Path) < 2 {
		return first
	}
	u.Path += "2"
	return u.String()
}

// dropSchema drops schema from the database at url and from its second database (when that
// exists). A backend still working in the schema (an index build a test left running in
// PostgreSQL, see EndBackends) is ended first: the drop waited for it behind its lock, gave up
// after 30 s while the build waited for every older transaction of the database (other
// packages' tests, in a full run), and the schema stayed. A drop that fails is the test's
// error: a schema left behind is a leak that the next runs would inherit.
func dropSchema(t testing.TB, url, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, u := range []string{url, secondURL(url)} {
		conn, err := pgx.Connect(ctx, u)
		var pgErr *pgconn.PgError
		switch {
		case err != nil && i > 0 && errors.As(err, &pgErr) && pgErr.Code == "3D000":
			continue // the second database is made only by the tests that need it
		case err != nil:
			t.Errorf("drop test schema %s: %v", schema, err)
			continue
		}
		if err := dropOn(ctx, conn, schema); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
		_ = conn.Close(ctx)
	}
}

// dropOn drops schema on conn, ending first the backends that hold locks in it, and again
// while the drop meets one.
func dropOn(ctx context.Context, conn *pgx.Conn, schema string) error {
	if _, err := conn.Exec(ctx, "SET lock_timeout = '2s'"); err != nil {
		return err
	}
	for {
		if _, err := endBackends(ctx, conn, schema); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		var pgErr *pgconn.PgError
		// lock_not_available, or a catalog row a backend ending meanwhile changed
		// ("tuple concurrently updated"): try again.
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55P03" && pgErr.Code != "XX000" || ctx.Err() != nil {
			return err
		}
	}
}

// EndBackends ends the backends of the database at url, other than its own, that hold a lock
// on a relation of schema (a partition), and waits until they are gone. A test that leaves
// work running in PostgreSQL — a start-up whose index build it cut off from PostgreSQL, which
// builds on until it next speaks to its client — calls it before it ends, so that nothing it
// started outlives it. It returns how many it ended.
func EndBackends(t testing.TB, url, schema string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	n, err := endBackends(ctx, conn, schema)
	if err != nil {
		t.Fatalf("end the backends working in %s: %v", schema, err)
	}
	return n
}

func endBackends(ctx context.Context, conn *pgx.Conn, schema string) (int, error) {
	const working = `SELECT DISTINCT l.pid FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation
		JOIN pg_namespace AS n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`
	rows, _ := conn.Query(ctx, working, schema)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	for _, pid := range pids {
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1, 10000)", pid); err != nil {
			return 0, err
		}
	}
	return len(pids), nil
}
