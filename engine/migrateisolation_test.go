package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
)

// TestReplicasMigratingTogetherUnderRepeatableRead: two start-ups of a release that adds a
// column, on a database whose sessions default to REPEATABLE READ (default_transaction_isolation
// set on the database or the role), both start when they wait for each other's migration. The
// second one's plan read the catalog in the snapshot its transaction took with its first
// statement, the wait for the migration's advisory lock, from before the first migration
// committed: it planned the column again, and failed start-up with SQLSTATE 42701 (column
// already exists). Before plans, a migration read a table's columns by opening the table, which
// sees the current catalog, and so did not fail.
func TestReplicasMigratingTogetherUnderRepeatableRead(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, twoTables(t, false))
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	rr := url + sep + "default_transaction_isolation=repeatable%20read"
	// Both start-ups wait for the migration's advisory lock, held here.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, engine.MigrationLock(p)); err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	first := opening(octx, engine.Limits{}, rr, p, twoTables(t, true))
	second := opening(octx, engine.Limits{}, rr, p, twoTables(t, true))
	waitForMigrationWaiters(t, conn, p, 2)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, engine.MigrationLock(p)); err != nil {
		t.Fatal(err)
	}
	for _, opened := range []<-chan error{first, second} {
		if err := <-opened; err != nil {
			t.Errorf("a start-up beside another's migration, under REPEATABLE READ: %v", err)
		}
	}
}

// waitForMigrationWaiters waits until n sessions wait for the migration's advisory lock of
// partition p, and fails the test after 10 s. A migration waits by trying the lock again and
// again, never in a statement (see engine.onMigrationConn): the sessions whose last statement
// tried it, and any waiting for it in a statement.
func waitForMigrationWaiters(t *testing.T, conn *pgx.Conn, p string, n int) {
	t.Helper()
	// A connection of its own: conn may be in a transaction, which sees pg_stat_activity as it
	// was at its first read.
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, conn.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var waiting int
		if err := conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
			AND query = format('SELECT pg_try_advisory_lock(%s)', $1::bigint))
			+ (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND objsubid = 1 AND (classid::bigint << 32 | objid::bigint) = $1)`, engine.MigrationLock(p)).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d start-ups wait for the migration's lock, want %d", waiting, n)
		}
	}
}
