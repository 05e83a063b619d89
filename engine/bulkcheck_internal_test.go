package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"gorm.io/gorm"

	"credo/resources"
)

// TestTupleLookupUsesThePartialUniqueIndex: the load's checks of unique constraints against the
// stored records (a pair of members; one string member) are answered from the constraint's
// index, which leaves out empty strings. Without that condition in the query neither store used
// it: each checked pair read every record of its organization (seeding 100,000 people took over
// 20 minutes on SQLite instead of 2), and each batch of Emails read the whole users table.
// PostgreSQL's plan is asked with sequential scans off, as its planner prefers them on a small
// table.
func TestTupleLookupUsesThePartialUniqueIndex(t *testing.T) {
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	set := w.Unique[0] // [OrganizationIdentifier, WidgetCode]; WidgetCode is a string
	tuples := [][]any{{"0190a6f0-0000-7000-8000-00000000000a", "A"}, {"0190a6f0-0000-7000-8000-00000000000b", "B"}}
	ctx := context.Background()
	eachInternalStore(t, reg, "tuples", func(t *testing.T, s *Store) {
		u := reg.MustByName("User")
		email := u.Unique[0] // [Email]: one member, a string, folding case
		for index, q := range map[string]*gorm.DB{
			uniqueIndexName(w, set):   s.tuplesQuery(ctx, w, set, tuples, true),
			uniqueIndexName(u, email): s.valuesQuery(ctx, u, email, []any{"A@example.com", "b@example.com"}, true),
		} {
			if plan := explain(t, s, q, seqScanOff); !strings.Contains(plan, index) {
				t.Errorf("the lookup does not use %s:\n%s", index, plan)
			}
		}
	})
}

// seqScanOff turns PostgreSQL's sequential scans off in the transaction of explain.
func seqScanOff(tx *Store) error {
	if tx.dialect != Postgres {
		return nil
	}
	return tx.db.Exec("SET LOCAL enable_seqscan = off").Error
}

// TestLoadLookupsUseTheIndexesWhateverTheStatistics: a load into a table whose statistics say
// it holds one record (an ANALYZE of a small table; PostgreSQL's autovacuum makes one) looks its
// unique pairs up in the constraint's index, on the table that each of its chunks grows. Both
// planners scanned instead (PostgreSQL the rows of the organization, SQLite the table), for
// each batch of 250 pairs: 100,000 widgets loaded into a table of one analyzed record took 130 s
// on PostgreSQL and 374 s on SQLite, against 4 s and 1.4 s into an empty one. SQLite's lookup
// names the index; on PostgreSQL the load analyzes the table as it grows (before its later
// chunks' checks), and the statistics of a load that committed count the rows before its last
// chunk.
func TestLoadLookupsUseTheIndexesWhateverTheStatistics(t *testing.T) {
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	set := w.Unique[0] // [OrganizationIdentifier, WidgetCode]
	tuples := [][]any{{"0190a6f0-0000-7000-8000-00000000000a", "A"}, {"0190a6f0-0000-7000-8000-00000000000b", "B"}}
	ctx := context.Background()
	defer func(n int) { bulkChunk = n }(bulkChunk)
	bulkChunk = 10
	widgets := func(n int, prefix string) []Draft { return widgetDrafts(w, n, prefix) }
	eachInternalStore(t, reg, "stats", func(t *testing.T, s *Store) {
		if err := s.InsertAll(ctx, w, widgets(1, "ONE"), AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Exec("ANALYZE " + s.Table(w)).Error; err != nil {
			t.Fatal(err)
		}
		if s.dialect == SQLite {
			index := uniqueIndexName(w, set)
			if plan := explain(t, s, s.tuplesQuery(ctx, w, set, tuples, true), func(*Store) error { return nil }); !strings.Contains(plan, index) {
				t.Errorf("the lookup does not use %s:\n%s", index, plan)
			}
			return
		}
		if err := s.InsertAll(ctx, w, widgets(40, "W"), AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		var n float64
		if err := s.db.Raw("SELECT reltuples FROM pg_class WHERE oid = ?::regclass", s.Table(w)).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		// Analyzed before its second and third chunk of 10 (when 10 and then 20 rows were
		// written, doubling), not after its last: 1 + 20.
		if n != 21 {
			t.Errorf("the statistics count %v widgets after a load of 40 into a table of 1, want 21", n)
		}
	})
}

// TestOneChunkLoadDoesNotAnalyze: a load of one chunk (every ordinary people import) runs no
// ANALYZE, whose lock conflicts with itself: after each chunk, the last included, it made
// concurrent imports into one table wait for each other's commit (8 clients, 22 imports in 12
// s). A load of more chunks still analyzes before its later chunks' checks. The statistics
// (pg_class.reltuples) move with an ANALYZE, within the load's transaction.
func TestOneChunkLoadDoesNotAnalyze(t *testing.T) {
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	ctx := context.Background()
	defer func(n int) { bulkChunk = n }(bulkChunk)
	bulkChunk = 10
	widgets := func(n int, prefix string) []Draft { return widgetDrafts(w, n, prefix) }
	eachInternalStore(t, reg, "analyze", func(t *testing.T, s *Store) {
		if err := s.InsertAll(ctx, w, widgets(1, "ONE"), AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if s.dialect == SQLite {
			return // no ANALYZE: SQLite's lookups name their index
		}
		if err := s.db.Exec("ANALYZE " + s.Table(w)).Error; err != nil {
			t.Fatal(err)
		}
		stats := func() (n float64) {
			t.Helper()
			if err := s.db.Raw("SELECT reltuples FROM pg_class WHERE oid = ?::regclass", s.Table(w)).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err := s.InsertAll(ctx, w, widgets(10, "A"), AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if n := stats(); n != 1 {
			t.Errorf("after a load of one chunk the statistics count %v widgets, want the 1 of the last ANALYZE: the load analyzed", n)
		}
		if err := s.InsertAll(ctx, w, widgets(15, "B"), AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if n := stats(); n != 21 {
			t.Errorf("after a load of two chunks the statistics count %v widgets, want 21 (11 before, and its first chunk's 10)", n)
		}
	})
}

// eachInternalStore runs fn on a fresh partition (named prefix and random letters) of SQLite
// and, with CREDO_TEST_POSTGRES, of PostgreSQL, dropping the PostgreSQL schema after.
// testenv imports the engine: its Backends and Partition cannot serve an internal test.
func eachInternalStore(t *testing.T, reg *Registry, prefix string, fn func(t *testing.T, s *Store)) {
	backends := map[string]string{"sqlite": "sqlite:" + t.TempDir()}
	if pg := os.Getenv("CREDO_TEST_POSTGRES"); pg != "" {
		backends["postgres"] = pg
	} else if os.Getenv("CREDO_REQUIRE_POSTGRES") == "1" {
		t.Fatal("CREDO_REQUIRE_POSTGRES=1 but CREDO_TEST_POSTGRES is not set")
	}
	for name, url := range backends {
		t.Run(name, func(t *testing.T) {
			p := prefix + strings.ReplaceAll(NewID()[24:], "-", "")
			db, err := Open(context.Background(), url, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s, _ := db.Store(p)
			if s.dialect == Postgres {
				defer s.db.Exec("DROP SCHEMA " + quote(p) + " CASCADE")
			}
			fn(t, s)
		})
	}
}

// explain returns the plan of q's statement on s's database, in a transaction that prepare
// has prepared.
func explain(t *testing.T, s *Store, q *gorm.DB, prepare func(tx *Store) error) string {
	t.Helper()
	ctx := context.Background()
	stmt := q.Session(&gorm.Session{DryRun: true}).Find(&[]map[string]any{}).Statement
	var plan []string
	err := s.transaction(ctx, func(tx *Store) error {
		explain := "EXPLAIN QUERY PLAN "
		if s.dialect == Postgres {
			explain = "EXPLAIN "
		}
		if err := prepare(tx); err != nil {
			return err
		}
		rows, err := tx.db.Raw(explain+stmt.SQL.String(), stmt.Vars...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for _, v := range vals {
				if s, ok := v.(string); ok {
					plan = append(plan, s)
				}
			}
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// widgetDrafts returns n drafts of the fixture's Widget w in one organization, coded prefix0,
// prefix1, ….
func widgetDrafts(w *Resource, n int, prefix string) []Draft {
	out := make([]Draft, 0, n)
	for i := range n {
		d := w.NewDraft()
		d.Set("OrganizationIdentifier", "0190a6f0-0000-7000-8000-00000000000a")
		d.Set("WidgetCode", fmt.Sprintf("%s%d", prefix, i))
		out = append(out, d)
	}
	return out
}
