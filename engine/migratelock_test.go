package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
)

// TestMigrateTakesNoLockOnServedTables: a process starting beside others that serve the same
// partition (a rolling restart, a second replica, credo secret create) migrates without
// waiting for their write transactions, and without holding up their writes. CREATE INDEX IF
// NOT EXISTS takes a SHARE lock on its table even when the index exists, held until the
// migration commits: a start-up waited for every open write transaction, blocked every write
// of the partition meanwhile, and could deadlock with a serving transaction (SQLSTATE 40P01).
func TestMigrateTakesNoLockOnServedTables(t *testing.T) {
	reg := fixtureRegistry(t)
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	db, err := engine.Open(ctx, url, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A serving process's write transaction, left open on the widgets table.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the test's end
	if _, err := tx.Exec(ctx, `INSERT INTO `+pgx.Identifier{p, "widgets"}.Sanitize()+
		` (widget_identifier, organization_identifier, widget_code, widget_enabled, widget_made)
		VALUES ('0190a6f0-0000-7000-8000-0000000000c1', '0190a6f0-0000-7000-8000-00000000000a', 'LOCK', false,
		'2024-03-10T20:30:00.0000000Z+00:00')`); err != nil {
		t.Fatal(err)
	}

	// Another process starts: its migration must not wait for that transaction.
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	db, err = engine.Open(octx, url, []string{p}, reg)
	if err != nil {
		t.Fatalf("a migration beside an open write transaction: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	db.Close()
}
