package testenv

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"credo/engine"
)

// MigratedBeside migrates PostgreSQL partition p with reg, as a release's start-up does, apart
// from the code under test, and returns a connection of its own to the database, as another
// process serving p has, closed when the test ends.
func MigratedBeside(t testing.TB, url, p string, reg *engine.Registry) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, url, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// IndexBuilds counts the backends that run an index build (CREATE INDEX CONCURRENTLY, as a
// migration's) in PostgreSQL partition p. conn must not be in a transaction, which sees
// pg_stat_activity as it was when it began.
func IndexBuilds(t testing.TB, conn *pgx.Conn, p string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE state = 'active' AND query LIKE 'CREATE %INDEX CONCURRENTLY%' AND position($1 IN query) > 0`,
		`"`+p+`"`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Indexes lists the indexes of table in PostgreSQL partition p but its primary key, by name, as
// "name", with " UNIQUE" for a unique one and then " INVALID" for one that a build left
// unfinished.
func Indexes(t testing.TB, conn *pgx.Conn, p, table string) []string {
	t.Helper()
	rows, _ := conn.Query(context.Background(), `SELECT c.relname || CASE WHEN i.indisunique THEN ' UNIQUE' ELSE '' END
		|| CASE WHEN i.indisvalid THEN '' ELSE ' INVALID' END
		FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
		WHERE i.indrelid = $1::regclass AND NOT i.indisprimary ORDER BY 1`, pgx.Identifier{p, table}.Sanitize())
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}
