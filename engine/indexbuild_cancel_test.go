package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/engine/backend"
	"credo/internal/testenv"
)

// TestCancelledStartupStopsTheBuild: a start-up cancelled (SIGTERM) while its concurrent build
// waits for a serving write transaction returns within moments, once PostgreSQL has stopped
// the build: no backend runs it any more, the index is left INVALID for the next start-up,
// and the error does not wrap engine.ErrLeftRunning. pgx cut the connection on the cancelled
// context, and PostgreSQL ran the build on until the transaction ended.
func TestCancelledStartupStopsTheBuild(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	conn := testenv.MigratedBeside(t, url, p, gizmos(t, gadgetsPlain))
	gadgetRows(t, conn, p, 1000)
	begun(t, conn, `INSERT INTO `+pgx.Identifier{p, "gadgets"}.Sanitize()+` (code, note) VALUES ('held', 'held')`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opened := opening(ctx, engine.Limits{}, url, p, gizmos(t, gadgetsIndexed))
	waitForMigrationLock(t, conn, p, "gadgets")
	observer := connect(t, url) // conn is in a transaction, which sees pg_stat_activity as it was
	cancel()
	start := time.Now()
	select {
	case err := <-opened:
		if err == nil || errors.Is(err, engine.ErrLeftRunning) || !strings.Contains(err.Error(), "PostgreSQL stopped it") {
			t.Errorf("the cancelled start-up: %v, want the build stopped by PostgreSQL", err)
		}
	case <-time.After(backend.ServerCancelGrace + time.Second):
		t.Fatalf("the cancelled start-up did not return within %v", backend.ServerCancelGrace+time.Second)
	}
	t.Logf("returned %v after the cancel", time.Since(start).Round(time.Millisecond))
	if n := testenv.IndexBuilds(t, observer, p); n != 0 {
		t.Errorf("PostgreSQL still runs %d builds of the partition after the start-up returned", n)
	}
	if got := testenv.Indexes(t, observer, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note INVALID" {
		t.Errorf("after the cancel gadgets has the indexes %q, want ix_gadgets_note INVALID", got)
	}
}

// TestCancelledStartupWithPostgresFrozen: when PostgreSQL does not answer the cancel (here the
// network to it is frozen), the start-up returns after backend.ServerCancelGrace, and its error
// wraps engine.ErrLeftRunning: the build may still run there, and serve exits 3.
func TestCancelledStartupWithPostgresFrozen(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	conn := testenv.MigratedBeside(t, url, p, gizmos(t, gadgetsPlain))
	gadgetRows(t, conn, p, 1000)
	held := begun(t, conn, `INSERT INTO `+pgx.Identifier{p, "gadgets"}.Sanitize()+` (code, note) VALUES ('held', 'held')`)
	proxied, proxy := testenv.ProxyURL(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opened := opening(ctx, engine.Limits{}, proxied, p, gizmos(t, gadgetsIndexed))
	waitForMigrationLock(t, conn, p, "gadgets")
	proxy.Freeze()
	cancel()
	start := time.Now()
	select {
	case err := <-opened:
		if !errors.Is(err, engine.ErrLeftRunning) {
			t.Errorf("the cancelled start-up with PostgreSQL frozen: %v, want engine.ErrLeftRunning", err)
		}
	case <-time.After(backend.ServerCancelGrace + 5*time.Second):
		t.Fatalf("the cancelled start-up did not return within %v", backend.ServerCancelGrace+5*time.Second)
	}
	if took := time.Since(start); took < backend.ServerCancelGrace || took > backend.ServerCancelGrace+2*time.Second {
		t.Errorf("returned %v after the cancel, want about %v", took.Round(time.Millisecond), backend.ServerCancelGrace)
	}
	// The build left behind runs on in PostgreSQL, waiting (CREATE INDEX CONCURRENTLY) for
	// every transaction older than it in the database, other packages' in a full run: it is
	// the test's own work, ended here, so that it neither outlives the test nor holds up the
	// drop of its partition (which gave up, leaving the schema behind).
	if err := held.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := testenv.EndBackends(t, url, p); n == 0 {
		t.Log("no build of the partition was still running")
	}
}

// connect opens a connection of the test's own to url, closed when the test ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
