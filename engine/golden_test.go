package engine_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenSQL pins the SQL the engine generates for every public group: the default list,
// the same list continued after a position (keyset), a count with every filter, and the search projection. Refresh with `go test ./engine -update`
// and review the diff.
func TestGoldenSQL(t *testing.T) {
	reg := fixtureRegistry(t)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		var b strings.Builder
		for _, r := range reg.Public() {
			list, err := request.ListQuery(r, nil, request.KindList)
			if err != nil {
				t.Fatal(err)
			}
			sql, _ := s.ListSQL(r, list, engine.Organization("org"))
			fmt.Fprintf(&b, "-- %s list\n%s;\n", r.Path, sql)
			for _, t := range r.OrderTerms(list.Sort) {
				list.After = append(list.After, storedSample(t.Field))
			}
			sql, _ = s.ListSQL(r, list, engine.Organization("org"))
			fmt.Fprintf(&b, "-- %s list continued (Continue)\n%s;\n", r.Path, sql)
			search, _ := request.ListQuery(r, nil, request.KindSearch)
			sql, _ = s.ListSQL(r, search, engine.AllOrganizations())
			fmt.Fprintf(&b, "-- %s search\n%s;\n", r.Path, sql)
			count := engine.Query{}
			for _, f := range r.Filters {
				count.Conds = append(count.Conds, engine.Cond{Field: f.Field, Op: f.Op, Value: sampleFor(f.Field)})
			}
			sql, _ = s.CountSQL(r, count, engine.AllOrganizations())
			fmt.Fprintf(&b, "-- %s count with every filter\n%s;\n", r.Path, sql)
			fmt.Fprintf(&b, "-- %s insert\n%s;\n\n", r.Path, s.InsertSQL(r))
		}
		got := strings.ReplaceAll(b.String(), `"`+s.Partition+`".`, `"{partition}".`)
		file := filepath.Join("..", "testdata", "golden", "sql", string(s.Dialect())+".sql")
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run go test ./engine -run GoldenSQL -update)", err)
		}
		if got != string(want) {
			t.Errorf("generated SQL differs from %s; run with -update and review the diff", file)
		}
	})
}

func sampleFor(f *engine.Field) any {
	switch f.Type {
	case engine.TypeBool:
		return true
	case engine.TypeInt:
		return int64(1)
	case engine.TypeDateTime:
		d, _ := engine.ParseDateTime("2024-03-10T14:30:00Z")
		return d
	case engine.TypeUUID:
		return "0190a6f0-0000-7000-8000-000000000001"
	}
	return "x"
}

// storedSample is a value of f as the database stores it (a Cursor's values).
func storedSample(f *engine.Field) any {
	if d, ok := sampleFor(f).(engine.DateTime); ok {
		return d.Storage()
	}
	return sampleFor(f)
}
