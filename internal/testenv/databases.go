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
	u, err := url.Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	name := u.Path[1:] + "2"
	u.Path = "/" + name
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
	return u.String()
}
