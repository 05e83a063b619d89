package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
)

// The releases of the gadgets of these tests: Note is not indexed (gadgetsPlain), not there
// (gadgetsBare), indexed as a filter (gadgetsIndexed, ix_gadgets_note) or unique
// (gadgetsUnique, ux_gadgets_note).
const (
	gadgetsBare    = ""
	gadgetsPlain   = "  - {name: Note, type: string, filter: false}\n"
	gadgetsIndexed = "  - {name: Note, type: string}\n"
	gadgetsUnique  = "  - {name: Note, type: string, filter: false}\nunique:\n  - [Note]\n"
)

func gizmos(t *testing.T, release string) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(fstest.MapFS{"gadgets.yaml": {Data: []byte("name: Gadget\ntable: gadgets\nkey: [Code]\nfields:\n  - {name: Code, type: string}\n" + release)}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// gadgetRows inserts n gadgets g1…gn with notes n1…nn, apart from the engine.
func gadgetRows(t *testing.T, conn *pgx.Conn, p string, n int) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `INSERT INTO `+pgx.Identifier{p, "gadgets"}.Sanitize()+
		` (code, note) SELECT 'g' || i, 'n' || i FROM generate_series(1, $1::int) AS i`, n); err != nil {
		t.Fatal(err)
	}
}

// writer returns a connection of its own, as another replica's, whose writes wait at most
// 100 ms for a lock: a write that the migration stops fails.
func writer(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	w, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(ctx) })
	if _, err := w.Exec(ctx, `SET lock_timeout = '100ms'`); err != nil {
		t.Fatal(err)
	}
	return w
}

// buildBesideAWrite migrates a partition with the gadgets of gadgetsPlain and 1000 rows, opens
// a serving process's write transaction on them (held), and starts in the background a
// start-up of release within l, returning once its migration waits for held. It returns the
// partition, a connection of its own (held's) and the start-up's outcome (opened).
func buildBesideAWrite(t *testing.T, l engine.Limits, release string) (url, p string, conn *pgx.Conn, held pgx.Tx, opened <-chan error) {
	t.Helper()
	url, p = testenv.Postgres(t), testenv.Partition(t)
	conn = testenv.MigratedBeside(t, url, p, gizmos(t, gadgetsPlain))
	gadgetRows(t, conn, p, 1000)
	held = begun(t, conn, `INSERT INTO `+pgx.Identifier{p, "gadgets"}.Sanitize()+` (code, note) VALUES ('held', 'held')`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	opened = opening(ctx, l, url, p, gizmos(t, release))
	waitForMigrationLock(t, conn, p, "gadgets")
	return url, p, conn, held, opened
}

// TestIndexBuildLetsWritesThrough: the first start-up of a release that indexes a member of
// a table with rows builds the index while other replicas write the table. The build waits
// for a serving write transaction that was open when it began, and meanwhile 20 writes of
// another replica go through, each at once: all 20 commit before the build ends. The
// migration built it with CREATE INDEX in its transaction, after LOCK TABLE … IN SHARE MODE:
// while it waited for the open transaction every write of the table queued behind it, and
// once it had the lock every write waited for the whole build.
func TestIndexBuildLetsWritesThrough(t *testing.T) {
	ctx := context.Background()
	url, p, conn, held, opened := buildBesideAWrite(t, engine.Limits{}, gadgetsIndexed)
	table := pgx.Identifier{p, "gadgets"}.Sanitize()
	w := writer(t, url)
	written := 0
	for i := range 20 {
		if _, err := w.Exec(ctx, `INSERT INTO `+table+` (code, note) VALUES ($1, $1)`, fmt.Sprintf("w%d", i)); err != nil {
			t.Fatalf("write %d of another replica while the index is built: %v", i, err)
		}
		written++
	}
	select {
	case err := <-opened:
		t.Fatalf("the migration ended (%v) before the transaction its build waits for", err)
	default:
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); len(got) == 1 && got[0] == "ix_gadgets_note" {
		t.Fatalf("the index was built before the transaction it waits for ended: %q", got)
	}
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("a migration building an index beside writes: %v", err)
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note" {
		t.Errorf("after the migration gadgets has the indexes %q, want ix_gadgets_note, valid", got)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 1000+1+written {
		t.Errorf("gadgets has %d rows (%v), want %d", n, err, 1000+1+written)
	}
}

// TestIndexBuildOutlastsTheDatabaseTimeout: a build that takes longer than --database-timeout
// (here 200 ms; it waits 1 s for a serving write transaction) completes: it is bounded by the
// migration timeout, and requests keep the database timeout. The build was one statement of
// the migration, bounded by the database timeout (10 s by default), so that a release could
// never start on a large table without raising the timeout of every request too.
func TestIndexBuildOutlastsTheDatabaseTimeout(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	_, p, conn, held, opened := buildBesideAWrite(t, engine.Limits{Timeout: 200 * time.Millisecond}, gadgetsIndexed)
	time.Sleep(time.Second)
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("a migration whose build outlasts the database timeout: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note" {
		t.Errorf("after the migration gadgets has the indexes %q, want ix_gadgets_note, valid", got)
	}
}

// TestIndexBuildDropsAnInvalidIndex: an INVALID index that a build left (here a unique one
// that duplicate notes broke, under the name of the release's plain index) is dropped and
// built again by the next start-up. The migration took it as built, as CREATE INDEX IF NOT
// EXISTS does, and the partition served without the index for ever.
func TestIndexBuildDropsAnInvalidIndex(t *testing.T) {
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	conn := testenv.MigratedBeside(t, url, p, gizmos(t, gadgetsPlain))
	table := pgx.Identifier{p, "gadgets"}.Sanitize()
	if _, err := conn.Exec(ctx, `INSERT INTO `+table+` (code, note) SELECT 'g' || i, 'n' || i % 10 FROM generate_series(1, 100) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE UNIQUE INDEX CONCURRENTLY ix_gadgets_note ON `+table+` (note)`); err == nil {
		t.Fatal("a unique index over duplicate notes was built")
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note UNIQUE INVALID" {
		t.Fatalf("the failed build left %q, want ix_gadgets_note UNIQUE INVALID", got)
	}
	db, err := engine.Open(ctx, url, []string{p}, gizmos(t, gadgetsIndexed))
	if err != nil {
		t.Fatalf("a start-up beside an INVALID index: %v", err)
	}
	db.Close()
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note" {
		t.Errorf("after the migration gadgets has the indexes %q, want ix_gadgets_note, valid and not unique", got)
	}
}

// TestUniqueIndexBuildMeetsADuplicateWrite: a value written twice by a serving replica while
// the unique index is built, after the check for values it refuses found none, fails the
// start-up with that check's message naming the records, and leaves no INVALID index. The
// write went through at once. The migration locked the table before its check, and the write
// waited for it.
func TestUniqueIndexBuildMeetsADuplicateWrite(t *testing.T) {
	ctx := context.Background()
	url, p, conn, held, opened := buildBesideAWrite(t, engine.Limits{}, gadgetsUnique)
	table := pgx.Identifier{p, "gadgets"}.Sanitize()
	if _, err := writer(t, url).Exec(ctx, `INSERT INTO `+table+` (code, note) VALUES ('dup', 'n7')`); err != nil {
		t.Fatalf("a write of another replica while the unique index is built: %v", err)
	}
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err := <-opened
	var dups *engine.DuplicatesError
	if !errors.As(err, &dups) || !strings.Contains(err.Error(), `Code="dup" Note="n7"; Code="g7" Note="n7"`) {
		t.Fatalf("a unique index build that met a duplicate written meanwhile: %v; want the records named", err)
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); len(got) != 0 {
		t.Errorf("after the refused migration gadgets has the indexes %q, want none", got)
	}
	// The operator removes the duplicate: the next start-up builds the index.
	if _, err := conn.Exec(ctx, `DELETE FROM `+table+` WHERE code = 'dup'`); err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(ctx, url, []string{p}, gizmos(t, gadgetsUnique))
	if err != nil {
		t.Fatalf("a start-up once the duplicate is gone: %v", err)
	}
	db.Close()
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ux_gadgets_note UNIQUE" {
		t.Errorf("after the migration gadgets has the indexes %q, want ux_gadgets_note, unique and valid", got)
	}
}

// TestReplicasBuildingAnIndexTogether: two replicas of a release that indexes a table start
// together while the build waits for a serving transaction longer than their database
// timeout: both start, and the index exists once, valid. The second waited for the first's
// migration within the database timeout and failed start-up; and a second replica that waits
// for the migration's advisory lock in a statement holds a snapshot, which the first's
// concurrent build waits for: a deadlock (SQLSTATE 40P01).
func TestReplicasBuildingAnIndexTogether(t *testing.T) {
	ctx := context.Background()
	l := engine.Limits{Timeout: 300 * time.Millisecond}
	url, p, conn, held, first := buildBesideAWrite(t, l, gadgetsIndexed)
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	second := opening(octx, l, url, p, gizmos(t, gadgetsIndexed))
	waitForMigrationWaiters(t, conn, p, 1)
	time.Sleep(time.Second)
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i, opened := range []<-chan error{first, second} {
		if err := <-opened; err != nil {
			t.Errorf("replica %d of two building an index together: %v", i+1, err)
		}
	}
	if got := testenv.Indexes(t, conn, p, "gadgets"); strings.Join(got, ",") != "ix_gadgets_note" {
		t.Errorf("after both migrations gadgets has the indexes %q, want ix_gadgets_note once, valid", got)
	}
}

// TestMigrationAddsAnIndexedMember: a release that adds a filterable member, or a member with
// a unique constraint, to a table with rows adds its column and its index, on both stores (on
// PostgreSQL the column in the migration's transaction, the index after it, concurrently; the
// check for values the unique index refuses, made before the transaction, skips the column
// not there yet), and the next start-up has nothing to do.
func TestMigrationAddsAnIndexedMember(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		for _, release := range []struct{ name, fields, index string }{
			{"filter", gadgetsIndexed, "ix_gadgets_note"}, {"unique", gadgetsUnique, "ux_gadgets_note"}} {
			t.Run(b.Name+"/"+release.name, func(t *testing.T) {
				ctx := context.Background()
				p := "e01"
				if b.Name == "postgres" {
					p = testenv.Partition(t)
				} else {
					b.URL = "sqlite:" + t.TempDir()
				}
				db, err := engine.Open(ctx, b.URL, []string{p}, gizmos(t, gadgetsBare))
				if err != nil {
					t.Fatal(err)
				}
				s, _ := db.Store(p)
				r := s.Registry().MustByName("Gadget")
				for i := range 50 {
					d, err := r.DraftOf(map[string]any{"Code": fmt.Sprintf("g%d", i)})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.Create(ctx, r, d, engine.AllOrganizations()); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
				for range 2 {
					db, err := engine.Open(ctx, b.URL, []string{p}, gizmos(t, release.fields))
					if err != nil {
						t.Fatalf("a migration adding an indexed member: %v", err)
					}
					db.Close()
				}
				if got := indexesOf(t, b, p, "gadgets"); strings.Join(got, ",") != release.index {
					t.Errorf("after the migration gadgets has the indexes %q, want %s", got, release.index)
				}
			})
		}
	}
}

// indexesOf lists the valid indexes of table in partition p of b's database but its primary
// key, read apart from the engine.
func indexesOf(t *testing.T, b testenv.Backend, p, table string) []string {
	t.Helper()
	return catalogStrings(t, b, p,
		`SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
			WHERE i.indrelid = $1::regclass AND NOT i.indisprimary AND i.indisvalid`, []any{p + "." + table},
		`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, []any{table})
}
