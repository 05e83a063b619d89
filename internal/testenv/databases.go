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
// exists). A failure is logged, not fatal: the test itself has passed or failed already.
func dropSchema(t testing.TB, url, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, u := range []string{url, secondURL(url)} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			continue // the second database is made only by the tests that need it
		}
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop test schema %s: %v", schema, err)
		}
		_ = conn.Close(ctx)
	}
}
