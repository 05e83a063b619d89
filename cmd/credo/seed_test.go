package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for the trigger below

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestSeedFailingLateWritesNothing: a seed that fails at its last step (the compliance
// statuses, here refused by a trigger) leaves the partition empty, so that it can be run again;
// before, the people, users and everything else of the earlier steps stayed, and a second run
// refused the partition for holding people.
func TestSeedFailingLateWritesNothing(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			p := testenv.Partition(t)
			reg, err := engine.Load(resources.FS)
			if err != nil {
				t.Fatal(err)
			}
			db, err := engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			refuse(t, b.URL, p, reg.MustByName("ComplianceProfile").Table)

			code, _, stderr := cli(t, "seed", "--database", b.URL, "--partition", p, "--rows", "20")
			if code == 0 || !strings.Contains(stderr, "refused by the test") || !strings.Contains(stderr, "nothing was written") {
				t.Errorf("seed with refused compliance profiles: exit %d, %q; want a failure saying nothing was written", code, stderr)
			}
			st, _ := db.Store(p)
			for _, name := range []string{"Person", "User", "Organization", "Membership"} {
				n, err := st.Count(ctx, reg.MustByName(name), engine.Query{}, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%d %s records after the failed seed, want 0", n, name)
				}
			}
		})
	}
}

// refuse makes every insert into table of partition p fail, with a trigger.
func refuse(t *testing.T, url, p, table string) {
	t.Helper()
	driver, dsn := "pgx", url
	stmts := []string{
		fmt.Sprintf(`CREATE FUNCTION %q.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`, p),
		fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON %q.%q FOR EACH ROW EXECUTE FUNCTION %q.refuse()`, p, table, p),
	}
	if dir, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", filepath.Join(dir, p+".db")
		stmts = []string{fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON %q BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`, table)}
	}
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
