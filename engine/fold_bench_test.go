package engine

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkContainsSQLite counts the matches of a contains filter on a 100,000-row SQLite
// table: a full scan, so ns/op divided by 100,000 is the cost per row; scan is the scan with
// a trivial condition, like is LIKE's ASCII folding, func is credo_contains (fold.go).
func BenchmarkContainsSQLite(b *testing.B) {
	const rows = 100_000
	if err := linkSQLite(""); err != nil { // registers credo_contains, as Open does
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "fold.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (v TEXT)`); err != nil {
		b.Fatal(err)
	}
	tx, _ := db.Begin()
	for i := range rows {
		if _, err := tx.Exec(`INSERT INTO t VALUES (?)`, fmt.Sprintf("Person %08x Émilie Ørsted", i*2654435761)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, sql, arg string }{
		{"scan", `SELECT count(*) FROM t WHERE v <> ?`, ""},
		{"like/miss", `SELECT count(*) FROM t WHERE v LIKE ? ESCAPE '\'`, "%smith%"},
		{"like/hit", `SELECT count(*) FROM t WHERE v LIKE ? ESCAPE '\'`, "%milie%"},
		{"func/miss", `SELECT count(*) FROM t WHERE ` + foldFunction + `(v, ?)`, "smith"},
		{"func/hit", `SELECT count(*) FROM t WHERE ` + foldFunction + `(v, ?)`, "émilie"},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := db.PrepareContext(ctx, c.sql)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for b.Loop() {
				var n int
				if err := st.QueryRowContext(ctx, c.arg).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
