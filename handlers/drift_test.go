package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	problemdoc "credo/handlers/problem"
	"credo/internal/groupsuite"
	"credo/internal/testenv"
)

// TestSchemaDrift: a column that a descriptor needs, renamed by an operator while credo serves
// (PlatformAction's ActionName), makes every request of the group — get, list, create, patch —
// a 503 problem document with Retry-After whose Detail names the partition and says that its
// tables must be migrated again; they were 500s ("An unexpected error occurred."). The document
// shows no SQL, column or database message; the log has them, once: the first failure begins
// the partition's "partition not migrated" outage (error level, with the request id and the
// database's message naming the column), the others and /readyz ("not migrated") join it, and
// nothing is logged as the database being unavailable. The create writes nothing. Renaming the
// column back makes the requests succeed again without a restart; a table renamed is the same;
// migrating again adds a renamed column back (empty).
//
// A client cannot cause the error the mapping answers: a name it sends reaches SQL only once it
// is resolved against the descriptors, so a column's name where a member's is expected (Sort,
// Includes, Excludes, a filter) is a 400 naming the parameter, not a 503.
func TestSchemaDrift(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObserved(t, b.URL)
			ctx := context.Background()
			actions := o.store.Registry().MustByName("PlatformAction")
			name, _ := actions.Member("ActionName")
			s := &groupsuite.Server{URL: o.URL, Partition: o.partition, Client: o.Client(), Store: o.store,
				Header: http.Header{"Authorization": {"Bearer good"}}}
			got := groupsuite.Put(t, s, actions, sample(actions, 1))
			item := itemPath(actions, got)
			o.get(t, "/readyz").expect(t, "readyz", http.StatusOK)

			for _, q := range []string{"Sort=" + name.Column, "Includes=" + name.Column, "Excludes=" + name.Column, name.Column + "=x"} {
				res := s.Do(t, "GET", actions.Path+"?"+q, "").Expect(t, "list with "+q, http.StatusBadRequest)
				res.ProblemNames(t, "list with "+q, strings.SplitN(q, "=", 2)[0])
			}

			alter := func(sql string) {
				t.Helper()
				if err := o.store.DB(ctx).Exec(sql).Error; err != nil {
					t.Fatal(err)
				}
			}
			table := o.store.Table(actions)
			requests := []struct {
				what, method, path, body string
				ok                       int
			}{
				{what: "get", method: "GET", path: item, ok: http.StatusOK},
				{what: "list", method: "GET", path: actions.Path, ok: http.StatusOK},
				{what: "create", method: "POST", path: actions.Path, body: mustJSON(sample(actions, 2)), ok: http.StatusCreated},
				{what: "patch", method: "PATCH", path: item, body: `{"ActionName":"patched"}`, ok: http.StatusOK},
			}
			drifted := func(how string) {
				t.Helper()
				for _, rq := range requests {
					res := s.Do(t, rq.method, rq.path, rq.body)
					what := rq.what + " with " + how
					response{status: res.Status, header: res.Header, body: res.Body}.expect(t, what, http.StatusServiceUnavailable)
					if ra := res.Header.Get("Retry-After"); ra != problemdoc.RetryAfterNotMigrated {
						t.Errorf("%s: Retry-After %q, want %q", what, ra, problemdoc.RetryAfterNotMigrated)
					}
					var doc struct{ Detail, RequestId string }
					if err := json.Unmarshal(res.Body, &doc); err != nil || doc.RequestId != res.Header.Get("X-Request-Id") {
						t.Errorf("%s: problem document %s (%v) lacks the request's id", what, res.Body, err)
					}
					if !strings.Contains(doc.Detail, "partition "+o.partition) || !strings.Contains(doc.Detail, "do not match its descriptors") ||
						!strings.Contains(doc.Detail, "migrated again") {
						t.Errorf("%s: Detail %q does not say that the partition's tables must be migrated again", what, doc.Detail)
					}
					for _, leak := range []string{name.Column, actions.Table, "SELECT", "INSERT", "UPDATE", "SQLSTATE", "no such", "does not exist", "sqlite", "postgres"} {
						if strings.Contains(string(res.Body), leak) {
							t.Errorf("%s: the problem document shows %q: %s", what, leak, res.Body)
						}
					}
				}
			}
			recovered := func(how string) {
				t.Helper()
				for _, rq := range requests[:2] {
					s.Do(t, rq.method, rq.path, rq.body).Expect(t, rq.what+" after "+how, rq.ok)
				}
			}

			alter("ALTER TABLE " + table + " RENAME COLUMN " + name.Column + " TO " + name.Column + "_old")
			drifted("ActionName's column renamed")
			bad := readiness(t, o.get(t, "/readyz").expect(t, "readyz with ActionName's column renamed", http.StatusServiceUnavailable))
			if bad.Status != "NotReady" || bad.Partitions[o.partition] != "not migrated" {
				t.Errorf("readyz with ActionName's column renamed: %+v", bad)
			}
			lines := o.log.lines(t, "partition not migrated", "")
			if len(lines) != 1 {
				t.Fatalf("%d lines \"partition not migrated\", want 1 for the outage:\n%s", len(lines), o.log.String())
			}
			if l := lines[0]; l["level"] != "ERROR" || l["partition"] != o.partition || l["request_id"] == "" ||
				!strings.Contains(l["err"].(string), name.Column) {
				t.Errorf("the outage's line does not give the partition, the first request and the database's message naming %s: %v", name.Column, l)
			}
			for _, msg := range []string{"database unavailable", "request failed"} {
				if n := len(o.log.lines(t, msg, "")); n != 0 {
					t.Errorf("%d lines %q, want none:\n%s", n, msg, o.log.String())
				}
			}
			if m := o.scrape(t); !strings.Contains(m, `status="503"`) {
				t.Errorf("the 503s are not counted:\n%s", m)
			}

			alter("ALTER TABLE " + table + " RENAME COLUMN " + name.Column + "_old TO " + name.Column)
			o.get(t, "/readyz").expect(t, "readyz with the column renamed back", http.StatusOK)
			for _, rq := range requests {
				s.Do(t, rq.method, rq.path, rq.body).Expect(t, rq.what+" with the column renamed back", rq.ok)
			}
			var list []map[string]any
			res := s.Do(t, "GET", actions.Path, "").Expect(t, "list", http.StatusOK)
			if err := json.Unmarshal(res.Body, &list); err != nil || len(list) != 2 {
				t.Errorf("%d records after the first and a create that failed, then one that succeeded (%v): %s", len(list), err, res.Body)
			}

			renamed := actions.Table + "_old"
			alter("ALTER TABLE " + table + " RENAME TO " + renamed)
			drifted("the table renamed")
			alter("ALTER TABLE " + strings.Replace(table, actions.Table, renamed, 1) + " RENAME TO " + actions.Table)
			recovered("the table renamed back")

			alter("ALTER TABLE " + table + " RENAME COLUMN " + name.Column + " TO " + name.Column + "_old")
			if err := o.store.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			o.get(t, "/readyz").expect(t, "readyz after migrating again", http.StatusOK)
			recovered("migrating again")
		})
	}
}
