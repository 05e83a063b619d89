package engine_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenSQL pins the SQL the engine generates for api.md's groups and the fixtures: the
// default list, the same list continued after a position (keyset), a count with every filter,
// and the search projection. Refresh with `go test ./engine -update` and review the diff. A
// maintainer's group beyond api.md (docs/descriptors.md) is not pinned: TestPlansAgreeWithGORM
// runs its statements.
func TestGoldenSQL(t *testing.T) {
	reg := fixtureRegistry(t)
	fixtures, err := engine.Load(os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		var b strings.Builder
		for _, r := range reg.Public() {
			if _, fixture := fixtures.ByName(r.Path); !fixture && !isAPIGroup(r) {
				continue
			}
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
		// A contains filter whose value ASCII folding cannot match (fold.go), on a stored
		// member and through a computed lookup.
		w := reg.MustByName("Widget")
		title, _ := w.Filter("WidgetTitle")
		part, _ := w.Filter("PartNameLike")
		sql, _ := s.CountSQL(w, engine.Query{Conds: []engine.Cond{{Field: title.Field, Op: title.Op, Value: "Émilie"},
			{Field: part.Field, Op: part.Op, Value: "kelvin"}}}, engine.AllOrganizations())
		fmt.Fprintf(&b, "-- %s count with contains filters beyond ASCII\n%s;\n", w.Path, sql)
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

// TestPlansAgreeWithGORM: the hot verbs run a plan, SQL text built once per shape from
// sentinel values; the others, and the golden files, take GORM's statement built with the
// values. Both come from the one statement builder and its key, and this test keeps them the
// same: for every golden query, each filter alone, the key lookups and the insert of every
// public group, a plan's text and the arguments it binds are GORM's statement and values.
func TestPlansAgreeWithGORM(t *testing.T) {
	reg := fixtureRegistry(t)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		planned := 0
		check := func(name string, st engine.Statement) {
			t.Helper()
			if !st.Planned {
				return
			}
			planned++
			if st.PlanSQL != st.SQL {
				t.Errorf("%s: the plan's SQL\n%s\ndiffers from GORM's\n%s", name, st.PlanSQL, st.SQL)
			}
			if (len(st.PlanArgs) > 0 || len(st.Vars) > 0) && !reflect.DeepEqual(st.PlanArgs, st.Vars) {
				t.Errorf("%s: the plan binds %#v, GORM %#v", name, st.PlanArgs, st.Vars)
			}
		}
		for _, r := range reg.Public() {
			list, err := request.ListQuery(r, nil, request.KindList)
			if err != nil {
				t.Fatal(err)
			}
			check(r.Path+" list", s.ListStatement(r, list, engine.Organization("org")))
			continued := list
			for _, t := range r.OrderTerms(list.Sort) {
				continued.After = append(continued.After, storedSample(t.Field))
			}
			check(r.Path+" list continued", s.ListStatement(r, continued, engine.Organization("org")))
			continued.After[len(continued.After)-1] = nil
			check(r.Path+" list continued at a NULL", s.ListStatement(r, continued, engine.AllOrganizations()))
			list.Page, list.Sort = 3, []engine.SortTerm{{Field: r.Key[0], Desc: true}}
			check(r.Path+" list page 3", s.ListStatement(r, list, engine.AllOrganizations()))
			search, _ := request.ListQuery(r, nil, request.KindSearch)
			check(r.Path+" search", s.ListStatement(r, search, engine.AllOrganizations()))
			count := engine.Query{}
			for _, f := range r.Filters {
				c := engine.Cond{Field: f.Field, Op: f.Op, Value: sampleFor(f.Field)}
				count.Conds = append(count.Conds, c)
				check(r.Path+" count "+f.Param, s.CountStatement(r, engine.Query{Conds: []engine.Cond{c}}, engine.Organization("org")))
				one := list
				one.Conds = []engine.Cond{c}
				check(r.Path+" list "+f.Param, s.ListStatement(r, one, engine.Organization("org")))
			}
			check(r.Path+" count with every filter", s.CountStatement(r, count, engine.AllOrganizations()))
			key := make([]any, len(r.Key))
			for i, k := range r.Key {
				key[i] = sampleFor(k)
			}
			for op, st := range s.KeyStatements(r, key, engine.Organization("org")) {
				check(r.Path+" "+op, st)
			}
			d := r.NewDraft()
			for _, f := range r.Fields {
				if err := d.Set(f.Name, sampleFor(f)); err != nil {
					t.Fatal(err)
				}
			}
			check(r.Path+" insert", s.InsertStatement(r, d))
		}
		if planned == 0 {
			t.Fatal("no statement was planned")
		}
		t.Logf("%d planned statements agree with GORM's", planned)
	})
}
