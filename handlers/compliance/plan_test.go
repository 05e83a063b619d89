package compliance

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/compliance")

// fullRequest sets every filter, so that the golden statement shows every clause.
func fullRequest() Request {
	tru := true
	return Request{Departments: deptIDs[:2], Learners: []string{learnerID(1)}, Measurements: []int{1, 2},
		ProfileCondition: MandatoryProfiles, LearnerMustHaveProfile: true, DepartmentEmployment: &tru, DataAccess: &tru}
}

// TestQueryGolden pins the statement built for SQLite (PostgreSQL differs only by the schema
// that qualifies each table). Refresh with `go test ./handlers/compliance -run Golden -update`.
func TestQueryGolden(t *testing.T) {
	st := openSQLite(t)
	text, args, err := resolved(t, st).build(st, fullRequest(), engine.Organization(orgA))
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 6 {
		t.Fatalf("%d bind parameters: %v", len(args), args)
	}
	golden := filepath.Join("..", "..", "testdata", "compliance", "summaries.sqlite.sql")
	if *update {
		if err := os.WriteFile(golden, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if text+"\n" != string(want) {
		t.Fatalf("statement changed (run with -update and review):\n%s", text)
	}
}

// TestQueryUsesIndexes checks with EXPLAIN that no table of the statement is scanned whole on
// SQLite (PostgreSQL's planner scans small tables by choice, so its plan proves nothing here).
func TestQueryUsesIndexes(t *testing.T) {
	st := openSQLite(t)
	loadDirectory(t, st)
	loadCompliance(t, st)
	for _, q := range []Request{fullRequest(), {ProfileCondition: AllProfiles}} {
		text, args, err := resolved(t, st).build(st, q, engine.Organization(orgA))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := st.DB(context.Background()).Raw("EXPLAIN QUERY PLAN "+text, args...).Rows()
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") {
				t.Errorf("full scan %q in plan:\n%s", step, strings.Join(plan, "\n"))
			}
		}
		t.Logf("plan:\n%s", strings.Join(plan, "\n"))
	}
}

// resolved is the summaries route's query resolved in st's registry, as the server resolves it
// once at start-up.
func resolved(t *testing.T, st *engine.Store) *summaries {
	t.Helper()
	s := &summaries{}
	if err := s.resolve(st.Registry()); err != nil {
		t.Fatal(err)
	}
	return s
}
