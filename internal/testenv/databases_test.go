package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/internal/testenv"
)

// TestPartitionDropOutlastsABuildLeftRunning: a test that leaves an index build running in its
// partition (CREATE INDEX CONCURRENTLY waiting for a transaction older than it, anywhere in
// the database) still has its partition dropped when it ends, within moments. The drop waited
// behind the build's lock for 30 s, gave up with a log line only -v showed, and the build
// then finished in a schema nobody dropped.
func TestPartitionDropOutlastsABuildLeftRunning(t *testing.T) {
	url := testenv.Postgres(t)
	ctx := context.Background()
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	older, builder, observer := connect(), connect(), connect()
	// Another package's transaction, older than the build, open past the test's end.
	tx, err := older.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the test's end
	if _, err := tx.Exec(ctx, "SELECT txid_current()"); err != nil {
		t.Fatal(err)
	}
	var p string
	built := make(chan error, 1)
	start := time.Now()
	t.Run("leaves a build", func(t *testing.T) {
		p = testenv.Partition(t)
		table := pgx.Identifier{p, "gadgets"}.Sanitize()
		for _, stmt := range []string{"CREATE SCHEMA " + pgx.Identifier{p}.Sanitize(),
			"CREATE TABLE " + table + " (code text PRIMARY KEY, note text)"} {
			if _, err := observer.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		go func() {
			_, err := builder.Exec(ctx, "CREATE INDEX CONCURRENTLY ix_gadgets_note ON "+table+" (note)")
			built <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var n int
			if err := observer.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%'
				AND position($1 IN query) > 0 AND wait_event = 'virtualxid'`, `"`+p+`"`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the build never waited for the older transaction")
			}
		}
		start = time.Now()
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the partition's drop took %v", took.Round(time.Millisecond))
	}
	var left bool
	if err := observer.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)", p).Scan(&left); err != nil || left {
		t.Errorf("partition %s left behind (%v) by a test whose build still ran", p, err)
	}
	select {
	case err := <-built:
		if err == nil {
			t.Error("the build left running completed")
		}
	case <-time.After(10 * time.Second):
		t.Error("the build left running still runs")
	}
}
