package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
)

// TestOpenPlaced opens two partitions, the second placed on another database (another
// SQLite folder; another PostgreSQL database), and checks that each partition's tables and
// rows are where its placement says and nowhere else, and that the partitions stay apart.
func TestOpenPlaced(t *testing.T) {
	reg := fixtureRegistry(t)
	ctx := context.Background()
	r := reg.MustByName("Widget")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			one, two := testenv.Partition(t), testenv.Partition(t)
			other := "sqlite:" + t.TempDir()
			if b.Name == "postgres" {
				other = testenv.SecondPostgres(t)
				t.Cleanup(func() { dropSchema(t, other, two) })
			}
			db, err := engine.OpenPlaced(ctx, b.URL, map[string]string{two: other}, []string{one, two}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if got := db.Partitions(); len(got) != 2 || got[0] != one || got[1] != two {
				t.Errorf("Partitions() = %v, want [%s %s] in configuration order", got, one, two)
			}
			st1, _ := db.Store(one)
			st2, _ := db.Store(two)
			body := widget("SAME", `,"WidgetIdentifier":"0190a6f0-0000-7000-8000-0000000000f1"`)
			for _, st := range []*engine.Store{st1, st2} {
				if _, err := testenv.CreateJSON(ctx, st, r, []byte(body), engine.AllOrganizations()); err != nil {
					t.Fatalf("create in %s: %v", st.Partition, err)
				}
				if err := st.Ping(ctx); err != nil {
					t.Errorf("ping %s: %v", st.Partition, err)
				}
			}
			// The same key in both partitions is two records, one on each database.
			if err := st2.Delete(ctx, r, []any{"0190a6f0-0000-7000-8000-0000000000f1"}, engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			if found, err := st1.Exists(ctx, r, []any{"0190a6f0-0000-7000-8000-0000000000f1"}, engine.AllOrganizations()); err != nil || !found {
				t.Errorf("deleting in %s removed %s's record: %v %v", two, one, found, err)
			}
			if _, err := testenv.CreateJSON(ctx, st2, r, []byte(body), engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			// Where the data is, asked of each database directly.
			for _, c := range []struct {
				url, partition string
				want           bool
			}{{b.URL, one, true}, {b.URL, two, false}, {other, two, true}, {other, one, false}} {
				if got := holds(t, c.url, c.partition); got != c.want {
					t.Errorf("%s holds partition %s: %v, want %v", c.url, c.partition, got, c.want)
				}
			}
		})
	}
}

// holds reports whether the database at url holds the partition's widgets table with one row.
func holds(t *testing.T, url, partition string) bool {
	t.Helper()
	ctx := context.Background()
	if dir, ok := strings.CutPrefix(url, "sqlite:"); ok {
		_, err := os.Stat(filepath.Join(dir, partition+".db"))
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		db, err := engine.Open(ctx, url, []string{partition}, fixtureRegistry(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, _ := db.Store(partition)
		var n int64
		if err := st.DB(ctx).Raw(`SELECT count(*) FROM "widgets"`).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'widgets'", partition).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return false
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{partition, "widgets"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestOpenPlacedRefuses checks the placements that cannot be opened.
func TestOpenPlacedRefuses(t *testing.T) {
	reg := fixtureRegistry(t)
	ctx := context.Background()
	dir := "sqlite:" + t.TempDir()
	tests := []struct {
		name   string
		placed map[string]string
		want   string
	}{
		{name: "a partition not configured", placed: map[string]string{"e09": dir}, want: "e09 is placed on a database but not configured"},
		{name: "SQLite and PostgreSQL", placed: map[string]string{"e02": "postgres://nobody@127.0.0.1:1/none"}, want: "SQLite and PostgreSQL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := engine.OpenPlaced(ctx, dir, tc.placed, []string{"e01", "e02"}, reg)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// dropSchema removes a partition's schema from a PostgreSQL database.
func dropSchema(t *testing.T, url, partition string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{partition}.Sanitize()+" CASCADE"); err != nil {
		t.Error(err)
	}
}
