package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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
	migrateBesideAWrite(t, url, p, reg, `INSERT INTO `+pgx.Identifier{p, "widgets"}.Sanitize()+
		` (widget_identifier, organization_identifier, widget_code, widget_enabled, widget_made)
		VALUES ('0190a6f0-0000-7000-8000-0000000000c1', '0190a6f0-0000-7000-8000-00000000000a', 'LOCK', false,
		'2024-03-10T20:30:00.0000000Z+00:00')`, nil)
}

// TestMigrateFindsALongContentIndex: the index of a content table whose name makes the index's
// longer than PostgreSQL's 63 bytes is named within them, so that the next start-up finds it
// and does not lock the table again (PostgreSQL cut the name silently, and every migration
// looked for the full one, missed it, and ran CREATE INDEX IF NOT EXISTS).
func TestMigrateFindsALongContentIndex(t *testing.T) {
	const content = "long_manual_chunks_named_to_pass_the_identifier_limit_x" // 56 bytes; its index's name 67
	reg, err := engine.Load(fstest.MapFS{"long.yaml": {Data: []byte(`name: LongManual
table: long_manuals
key: [Code]
content: ` + content + `
fields:
  - {name: Code, type: string}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	url, p := testenv.Postgres(t), testenv.Partition(t)
	// What an export's chunk inserts hold; CREATE INDEX's SHARE lock waits for it.
	migrateBesideAWrite(t, url, p, reg, `LOCK TABLE `+pgx.Identifier{p, content}.Sanitize()+` IN ROW EXCLUSIVE MODE`,
		func(conn *pgx.Conn) {
			rows, _ := conn.Query(context.Background(), `SELECT indexname FROM pg_indexes
				WHERE schemaname = $1 AND tablename = $2 AND indexname NOT LIKE '%pkey'`, p, content)
			names, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || len(names) != 1 || len(names[0]) > 63 {
				t.Fatalf("the content table's indexes: %q, %v; want one named within 63 bytes", names, err)
			}
		})
}

// begun begins a transaction on conn and runs stmt in it, as a serving process's transaction
// that is still open; it is rolled back when the test ends, unless committed before.
func begun(t *testing.T, conn *pgx.Conn, stmt string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // committed, or the test's end
	if _, err := tx.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	return tx
}

// opening opens partition p with reg within l in the background, as a process starting, and
// returns the outcome of its start-up.
func opening(ctx context.Context, l engine.Limits, url, p string, reg *engine.Registry) <-chan error {
	opened := make(chan error, 1)
	go func() {
		db, err := l.Open(ctx, url, []string{p}, reg)
		if err == nil {
			db.Close()
		}
		opened <- err
	}()
	return opened
}

// migrateBesideAWrite migrates partition p, runs check (when given) on a connection of its
// own, leaves write (a serving process's statement) open in a transaction on it, and requires
// a second start-up's migration to finish within 5 s beside it.
func migrateBesideAWrite(t *testing.T, url, p string, reg *engine.Registry, write string, check func(*pgx.Conn)) {
	t.Helper()
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, reg)
	if check != nil {
		check(conn)
	}
	begun(t, conn, write)
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	db, err := engine.Open(octx, url, []string{p}, reg)
	if err != nil {
		t.Fatalf("a migration beside an open write transaction: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	db.Close()
}

// TestMigrationReplacingAnIndexBesideAReadThenWrite: the first start-up of the release whose
// users' Email folds case replaces the exact unique index by the folded one while another
// replica serves the partition. A serving transaction that has read users and then writes one
// (a people import) and the migration both finish: the migration took SHARE (CREATE INDEX)
// and then asked for ACCESS EXCLUSIVE (DROP INDEX), which waited for the transaction's read
// while the transaction's write waited for the SHARE: a deadlock (SQLSTATE 40P01) that failed
// the start-up or the request. The write is kept, and the index checks it.
func TestMigrationReplacingAnIndexBesideAReadThenWrite(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	// The release changed no column of users: the migration's first lock is the index's.
	conn := testenv.MigratedBeside(t, url, p, exactEmailRegistry(t, false))
	users := pgx.Identifier{p, "users"}.Sanitize()
	tx := begun(t, conn, `SELECT count(*) FROM `+users)
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	opened := opening(octx, engine.Limits{}, url, p, fixtureRegistry(t))
	// The migration waits for the read's lock.
	waitForMigrationLock(t, conn, p, "users")
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := tx.Exec(wctx, `INSERT INTO `+users+` (user_identifier, email) VALUES ('0190a6f0-0000-7000-8000-0000000000e1', 'Served@Example.com')`); err != nil {
		t.Fatalf("a serving write beside the migration: %v", err)
	}
	if err := tx.Commit(wctx); err != nil {
		t.Fatalf("a serving write beside the migration: commit: %v", err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("the migration beside a serving read-then-write: %v", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO `+users+` (user_identifier, email) VALUES ('0190a6f0-0000-7000-8000-0000000000e2', 'served@example.com')`); err == nil {
		t.Error("after the migration an Email in another case is not refused by the index")
	}
}

// TestStartUpBesideALongWriteOnSQLite: a start-up with nothing to migrate does not wait for
// another process's write transaction on the partition's file (credo load holds one to its
// end): it serves at once, as it did before migrations became transactions on SQLite. The
// migration's BEGIN IMMEDIATE took the file's write lock on every start-up, and a restart of
// credo serve or a credo secret during a load longer than the timeout failed with "database
// is locked".
func TestStartUpBesideALongWriteOnSQLite(t *testing.T) {
	reg := fixtureRegistry(t)
	ctx := context.Background()
	dir, p := writtenByAnother(t, reg)
	start := time.Now()
	db, err := engine.Limits{Timeout: time.Second}.Open(ctx, "sqlite:"+dir, []string{p}, reg)
	if err != nil {
		t.Fatalf("a start-up beside another process's write transaction: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	defer db.Close()
	s, _ := db.Store(p)
	if _, err := s.Count(ctx, reg.MustByName("User"), engine.Query{}, engine.AllOrganizations()); err != nil {
		t.Errorf("a read beside another process's write transaction: %v", err)
	}
}

// TestStartUpWaitingForAnotherMigration: a start-up that waits past its migration timeout for
// another process's migration of the partition (a replica starting beside it, building an
// index on a large table) says so, naming the process, rather than that the database did not
// answer, which it did.
func TestStartUpWaitingForAnotherMigration(t *testing.T) {
	reg := fixtureRegistry(t)
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, reg)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, engine.MigrationLock(p)); err != nil {
		t.Fatal(err)
	}
	_, err := engine.Limits{Timeout: 300 * time.Millisecond, MigrationTimeout: 300 * time.Millisecond}.Open(ctx, url, []string{p}, reg)
	if err == nil {
		t.Fatal("a start-up beside another process's migration that outlasts the timeout succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "another process") || !strings.Contains(msg, "was migrating "+p) ||
		!strings.Contains(msg, fmt.Sprintf("held by pid %d (", conn.PgConn().PID())) || !strings.Contains(msg, "raise --migration-timeout") ||
		strings.Contains(msg, "did not connect or answer") {
		t.Errorf("a start-up beside another process's migration: %v", err)
	}
}

// TestMigrationBesideALongWriteOnSQLite: a migration with work to do waits for another
// process's write transaction on the partition's file for the timeout (busy_timeout), and then
// says that another process held the file, not that the database is unavailable as a refusal
// at once would be.
func TestMigrationBesideALongWriteOnSQLite(t *testing.T) {
	reg := fixtureRegistry(t)
	ctx := context.Background()
	// A partition of the previous release: this one adds a column and replaces an index.
	dir, p := writtenByAnother(t, previousRegistry(t))
	start := time.Now()
	_, err := engine.Limits{Timeout: 300 * time.Millisecond}.Open(ctx, "sqlite:"+dir, []string{p}, reg)
	if err == nil {
		t.Fatal("a migration beside another process's write transaction succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "another process") || !strings.Contains(msg, "more than 300ms") || strings.Contains(msg, "unavailable") {
		t.Errorf("a migration beside another process's write transaction: %v", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("the migration waited %v for the other process's write transaction, want the timeout", waited)
	}
}

// TestMigrationWaitingForServedTransactions: a migration that changes a table waits for the
// transactions of other processes using it (PostgreSQL), for the timeout, and then says so,
// rather than that the database did not answer, which it did.
func TestMigrationWaitingForServedTransactions(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, previousRegistry(t))
	begun(t, conn, `INSERT INTO `+pgx.Identifier{p, "users"}.Sanitize()+` (user_identifier, email) VALUES ('0190a6f0-0000-7000-8000-0000000000e3', 'held@example.com')`)
	_, err := engine.Limits{Timeout: 300 * time.Millisecond}.Open(ctx, url, []string{p}, fixtureRegistry(t))
	if err == nil {
		t.Fatal("a migration beside a write transaction that outlasts the timeout succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "changes table users, and transactions of other processes") ||
		strings.Contains(msg, "did not connect or answer") {
		t.Errorf("a migration beside a write transaction that outlasts the timeout: %v", err)
	}
}

// writtenByAnother migrates a SQLite partition with reg, in a folder of its own, and opens a
// write transaction on its file apart from the engine, as another process's credo load does,
// until the test ends. It returns the folder and the partition.
func writtenByAnother(t *testing.T, reg *engine.Registry) (dir, p string) {
	t.Helper()
	ctx := context.Background()
	dir, p = t.TempDir(), "e01"
	db, err := engine.Open(ctx, "sqlite:"+dir, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, p+".db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck // the test's end
		conn.Close()
	})
	return dir, p
}

// twoTables is a registry of two resources, alphas and betas (locked in that order), each with
// a Note member in the release that adds it (noted) and without it before.
func twoTables(t *testing.T, noted bool) *engine.Registry {
	t.Helper()
	note := ""
	if noted {
		note = "  - {name: Note, type: string}\n"
	}
	files := fstest.MapFS{}
	for _, name := range []string{"Alpha", "Beta"} {
		files[strings.ToLower(name)+".yaml"] = &fstest.MapFile{Data: []byte("name: " + name + "\ntable: " + strings.ToLower(name) +
			"s\nkey: [Code]\nfields:\n  - {name: Code, type: string}\n" + note)}
	}
	reg, err := engine.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// waitForMigrationLock waits until the migration waits for a lock on table p.table, or its
// concurrent index build or drop on the partition waits for other transactions, and fails the
// test after 10 s.
func waitForMigrationLock(t *testing.T, conn *pgx.Conn, p, table string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var waiting bool
		// A concurrent build or drop holds SHARE UPDATE EXCLUSIVE on the table while it waits
		// for other transactions. (pg_locks, not pg_stat_activity: conn may be in a
		// transaction, which sees the statistics views as they were at its first read.)
		if err := conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = $1::regclass)
			OR EXISTS (SELECT FROM pg_locks AS l JOIN pg_locks AS w ON w.pid = l.pid AND NOT w.granted
				WHERE l.relation = $1::regclass AND l.granted AND l.mode = 'ShareUpdateExclusiveLock')`,
			p+"."+table).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the migration never waited for %s", table)
		}
	}
}

// TestMigrationBesideATransactionUsingItsTablesInTheOtherOrder: the first start-up of a release
// that changes two tables, beside a serving transaction that uses them in the other order (a
// request or an import of the running release that writes betas, then alphas), neither fails.
// The migration locked alphas and then waited for betas, which the serving transaction held
// while it waited for alphas: a deadlock, in which PostgreSQL aborted the migration (SQLSTATE
// 40P01) and start-up exited 1. Now its wait for betas ends before PostgreSQL looks for a
// deadlock; it rolls back, which lets the serving transaction through, and tries again.
func TestMigrationBesideATransactionUsingItsTablesInTheOtherOrder(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, twoTables(t, false))
	alphas, betas := pgx.Identifier{p, "alphas"}.Sanitize(), pgx.Identifier{p, "betas"}.Sanitize()
	tx := begun(t, conn, `INSERT INTO `+betas+` (code) VALUES ('b1')`)
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	opened := opening(octx, engine.Limits{}, url, p, twoTables(t, true))
	// The migration holds alphas and waits for betas.
	waitForMigrationLock(t, conn, p, "betas")
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := tx.Exec(wctx, `INSERT INTO `+alphas+` (code) VALUES ('a1')`); err != nil {
		t.Fatalf("a serving write of alphas after betas, beside the migration: %v", err)
	}
	if err := tx.Commit(wctx); err != nil {
		t.Fatalf("a serving write of alphas after betas, beside the migration: commit: %v", err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("a migration of alphas and betas beside a transaction using betas, then alphas: %v", err)
	}
	var notes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'note'`, p).Scan(&notes); err != nil || notes != 2 {
		t.Errorf("after the migration %d tables have a note column (%v), want 2", notes, err)
	}
}

// TestMigrationBehindALongReadLetsReadersThrough: a migration that needs ACCESS EXCLUSIVE on a
// table that a long transaction reads (an export, a report) does not stop the other readers of
// the table while it waits: each of its waits ends within half a second, and it rolls back to
// let the requests queued behind it through. Past --database-timeout it gives up, naming the
// table, the lock and the process that held it, and leaves no lock request behind; once the
// read ends, it succeeds. The migration waited for the table until its statement's deadline
// (--database-timeout, 10 s by default), and every read of the table queued behind it.
func TestMigrationBehindALongReadLetsReadersThrough(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, twoTables(t, false))
	alphas := pgx.Identifier{p, "alphas"}.Sanitize()
	long := begun(t, conn, `SELECT count(*) FROM `+alphas)
	// Another replica's reads, each given up after 3 s.
	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(ctx)
	if _, err := reader.Exec(ctx, `SET lock_timeout = '3s'`); err != nil {
		t.Fatal(err)
	}
	read := func() time.Duration {
		start := time.Now()
		if _, err := reader.Exec(ctx, `SELECT count(*) FROM `+alphas); err != nil {
			t.Fatalf("a read of alphas beside the migration: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
		}
		return time.Since(start)
	}

	start := time.Now()
	opened := opening(ctx, engine.Limits{Timeout: 4 * time.Second}, url, p, twoTables(t, true))
	waitForMigrationLock(t, conn, p, "alphas")
	var slowest time.Duration
	for err = nil; err == nil; {
		select {
		case err = <-opened:
			if err == nil {
				t.Fatal("a migration behind a read that outlasts the timeout succeeded")
			}
		case <-time.After(50 * time.Millisecond):
			slowest = max(slowest, read())
		}
	}
	took := time.Since(start)
	if msg := err.Error(); !strings.Contains(msg, "changes table alphas, and transactions of other processes") ||
		!strings.Contains(msg, "ACCESS EXCLUSIVE") || !strings.Contains(msg, fmt.Sprintf("pid %d (", conn.PgConn().PID())) ||
		!strings.Contains(msg, "raise --database-timeout") || strings.Contains(msg, "did not connect or answer") || strings.Contains(msg, "unavailable") {
		t.Errorf("a migration behind a read that outlasts the timeout: %v", err)
	}
	if took < 3*time.Second || took > 7*time.Second {
		t.Errorf("the migration gave up after %v, want about the timeout (4s)", took)
	}
	if slowest > 2*time.Second {
		t.Errorf("a read of alphas waited %v behind the migration, want at most its wait (500ms) and some", slowest)
	}
	if d := read(); d > time.Second {
		t.Errorf("a read of alphas after the migration gave up waited %v", d)
	}
	var waiting int
	if err := reader.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = $1::regclass`, p+".alphas").Scan(&waiting); err != nil || waiting != 0 {
		t.Errorf("after the migration gave up, %d lock requests on alphas are left waiting (%v)", waiting, err)
	}

	// The read ends while a second start-up waits: it migrates on a later attempt.
	opened = opening(ctx, engine.Limits{Timeout: 5 * time.Second}, url, p, twoTables(t, true))
	waitForMigrationLock(t, conn, p, "alphas")
	time.Sleep(time.Second)
	if err := long.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("a migration behind a read that ends within the timeout: %v", err)
	}
}
