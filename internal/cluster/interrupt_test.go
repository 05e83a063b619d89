package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/engine/backend"
	"credo/internal/cluster"
	"credo/internal/testenv"
	"credo/resources"
)

// interruptBound is how soon after SIGTERM an interrupted start-up must have exited: the
// grace PostgreSQL has to answer the cancel (backend.ServerCancelGrace) and 2 s for the rest.
const interruptBound = backend.ServerCancelGrace + 2*time.Second

// gadgetsRelease writes a descriptor folder whose gadgets have a Note, indexed or not.
func gadgetsRelease(t *testing.T, indexed bool) string {
	t.Helper()
	note := "  - {name: Note, type: string, filter: false}\n"
	if indexed {
		note = "  - {name: Note, type: string}\n"
	}
	dir := t.TempDir()
	yaml := "name: Gadget\ntable: gadgets\nkey: [Code]\nfields:\n  - {name: Code, type: string}\n" + note
	if err := os.WriteFile(filepath.Join(dir, "gadgets.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSignalDuringStartupStopsTheBuild: a release adds an index to a table with rows, and its
// start-up's concurrent build waits for a serving process's open write transaction. A second
// process starting beside it waits for the partition's migration lock; SIGTERM ends it within
// the bound, with status 0. SIGTERM to the first ends it within the bound too, with status 0,
// and by then PostgreSQL no longer runs its build: it left the index INVALID. The build used to
// go on in PostgreSQL after the process had exited, holding the partition's lock, until the
// transaction it waited for ended. Once that transaction has ended, the next start-up drops the
// INVALID index, builds it, and serves.
func TestSignalDuringStartupStopsTheBuild(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	bin := cluster.Binary(t)
	ctx := context.Background()

	conn, held := besideAWrite(t, url, p)
	env := []string{"CREDO_DATABASE=" + url, "CREDO_PARTITIONS=" + p, "CREDO_DESCRIPTORS=" + gadgetsRelease(t, true)}
	building := cluster.Launch(t, bin, env)
	if n := waitForBuilds(t, conn, p, func(n int) bool { return n > 0 }, 30*time.Second); n == 0 {
		t.Fatalf("the start-up did not begin building the index within 30 s:\n%s", building.Log())
	}

	waiting := cluster.Launch(t, bin, env)
	waitForLockPolls(t, conn, p, waiting)
	stopWithin(t, waiting, "waiting for the migration lock")

	stopWithin(t, building, "building an index")
	if n := waitForBuilds(t, conn, p, func(n int) bool { return n == 0 }, 0); n != 0 {
		t.Errorf("PostgreSQL still runs %d index builds of the partition after the process exited", n)
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); len(got) != 1 || got[0] != "ix_gadgets_note INVALID" {
		t.Errorf("indexes after the interrupted build: %q, want the INVALID one it left", got)
	}
	if log := building.Log(); !strings.Contains(log, "PostgreSQL stopped the index build") {
		t.Errorf("the log does not say that PostgreSQL stopped the build:\n%s", log)
	}

	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	next := cluster.Start(t, bin, env)
	if got := testenv.Indexes(t, conn, p, "gadgets"); len(got) != 1 || got[0] != "ix_gadgets_note" {
		t.Errorf("indexes after the next start-up: %q, want ix_gadgets_note, valid", got)
	}
	if err := next.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// besideAWrite migrates partition p as the release before (gadgets without an index), with
// 1000 rows, apart from the processes, and opens a serving process's write transaction on
// gadgets, which a concurrent build of the next release waits for. It returns a connection of
// the test's own and the transaction.
func besideAWrite(t *testing.T, url, p string) (*pgx.Conn, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	reg, err := engine.Load(resources.FS, os.DirFS(gadgetsRelease(t, false)))
	if err != nil {
		t.Fatal(err)
	}
	conn := testenv.MigratedBeside(t, url, p, reg)
	table := pgx.Identifier{p, "gadgets"}.Sanitize()
	if _, err := conn.Exec(ctx, `INSERT INTO `+table+` (code, note) SELECT 'g' || i, 'n' || i FROM generate_series(1, 1000) AS i`); err != nil {
		t.Fatal(err)
	}
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(ctx) })
	held, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Exec(ctx, `INSERT INTO `+table+` (code, note) VALUES ('held', 'held')`); err != nil {
		t.Fatal(err)
	}

	return conn, held
}

// TestSignalDuringStartupWithPostgresFrozen: when PostgreSQL does not answer the cancel of the
// build (the network to it is frozen), SIGTERM ends the start-up after the grace it has to
// answer, with status 3 and a message saying that the build may still run there.
func TestSignalDuringStartupWithPostgresFrozen(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	bin := cluster.Binary(t)
	conn, held := besideAWrite(t, url, p)
	proxied, proxy := testenv.ProxyURL(t, url)
	env := []string{"CREDO_DATABASE=" + proxied, "CREDO_PARTITIONS=" + p, "CREDO_DESCRIPTORS=" + gadgetsRelease(t, true)}
	building := cluster.Launch(t, bin, env)
	if n := waitForBuilds(t, conn, p, func(n int) bool { return n > 0 }, 30*time.Second); n == 0 {
		t.Fatalf("the start-up did not begin building the index within 30 s:\n%s", building.Log())
	}
	proxy.Freeze()
	if err := building.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), interruptBound)
	defer cancel()
	err := building.Wait(ctx)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(building.Log(), "did not confirm") {
		t.Fatalf("SIGTERM with PostgreSQL frozen: %v after %v, want exit status 3 within %v\n%s", err,
			time.Since(start).Round(time.Millisecond), interruptBound, building.Log())
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

// stopWithin sends SIGTERM to a process still starting and wants it to exit 0 within
// interruptBound.
func stopWithin(t *testing.T, p *cluster.Process, doing string) {
	t.Helper()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), interruptBound)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatalf("SIGTERM while %s: %v after %v, want exit status 0 within %v\n%s", doing, err,
			time.Since(start).Round(time.Millisecond), interruptBound, p.Log())
	}
	t.Logf("SIGTERM while %s: exited 0 after %v", doing, time.Since(start).Round(time.Millisecond))
}

// waitForLockPolls waits until a backend (the process's) has tried the partition's migration
// lock, which the first process holds: the key is engine.migrationLock's, FNV-1a of the
// schema's name.
func waitForLockPolls(t *testing.T, conn *pgx.Conn, p string, proc *cluster.Process) {
	t.Helper()
	h := fnv.New32a()
	h.Write([]byte("credo-migrate:" + p))
	try := fmt.Sprintf("SELECT pg_try_advisory_lock(%d)", h.Sum32())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE query = $1`, try).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second process never tried the migration lock:\n%s", proc.Log())
		}
	}
}

// waitForBuilds polls, for at most within, the number of backends running an index build in
// partition p until done accepts it, and returns the last count.
func waitForBuilds(t *testing.T, conn *pgx.Conn, p string, done func(int) bool, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n := testenv.IndexBuilds(t, conn, p)
		if done(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSignalDuringAMigrationStep: what holds a start-up need not be an index build. A release
// adds a column to gadgets while a serving process's transaction writes the table, so that
// the migration's transaction waits for the table's lock, rolls back and tries again. SIGTERM
// then ends the start-up with status 0 when PostgreSQL stops the step's statement, and with
// status 3, as for a build, when it does not confirm the cancel (the network to it frozen):
// the statement may still run there. Such a step used to exit 0 either way.
func TestSignalDuringAMigrationStep(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	bin := cluster.Binary(t)
	_, held := besideAWrite(t, url, p)
	dir := t.TempDir()
	yaml := "name: Gadget\ntable: gadgets\nkey: [Code]\nfields:\n  - {name: Code, type: string}\n" +
		"  - {name: Note, type: string, filter: false}\n  - {name: Color, type: string, filter: false}\n"
	if err := os.WriteFile(filepath.Join(dir, "gadgets.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(database string) []string {
		return []string{"CREDO_DATABASE=" + database, "CREDO_PARTITIONS=" + p, "CREDO_DESCRIPTORS=" + dir,
			"CREDO_DATABASE_TIMEOUT=60s"}
	}
	retrying := func(proc *cluster.Process) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(proc.Log(), "rolled back to let them through, trying again"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the migration never waited for the table's lock:\n%s", proc.Log())
			}
		}
	}

	waiting := cluster.Launch(t, bin, env(url))
	retrying(waiting)
	stopWithin(t, waiting, "waiting for a table's lock")

	proxied, proxy := testenv.ProxyURL(t, url)
	frozen := cluster.Launch(t, bin, env(proxied))
	retrying(frozen)
	proxy.Freeze()
	// Within one attempt's wait (500 ms) and the pause after it, a statement of the migration
	// is on its way to PostgreSQL, and neither its answer nor a cancel gets through.
	time.Sleep(time.Second)
	if err := frozen.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), interruptBound)
	defer cancel()
	err := frozen.Wait(ctx)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(frozen.Log(), "did not confirm") {
		t.Fatalf("SIGTERM during a migration step with PostgreSQL frozen: %v after %v, want exit status 3 within %v\n%s", err,
			time.Since(start).Round(time.Millisecond), interruptBound, frozen.Log())
	}
	if err := held.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.EndBackends(t, url, p)
}
