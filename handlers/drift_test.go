package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"credo/internal/testenv"
)

// TestSchemaDrift: a column that a descriptor needs, renamed by an operator while credo serves
// (User's email), makes /readyz answer 503 "not migrated", and the log names the column; a
// request that reads it is a 500 problem document with its RequestId that shows no SQL and no
// column, logged with the cause naming the column. Migrating again (the next start-up) adds the
// column back, and the partition is ready. /readyz checked only that the tables existed, and
// said ready while every request on users failed.
func TestSchemaDrift(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObserved(t, b.URL)
			ctx := context.Background()
			o.get(t, "/readyz").expect(t, "readyz", http.StatusOK)
			users := o.store.Registry().MustByName("User")
			if err := o.store.DB(ctx).Exec("ALTER TABLE " + o.store.Table(users) + " RENAME COLUMN email TO email_old").Error; err != nil {
				t.Fatal(err)
			}
			bad := readiness(t, o.get(t, "/readyz").expect(t, "readyz without users.email", http.StatusServiceUnavailable))
			if bad.Status != "NotReady" || bad.Partitions[o.partition] != "not migrated" {
				t.Errorf("readyz without users.email: %+v", bad)
			}
			if n := len(o.log.lines(t, "partition not migrated", "")); n != 1 {
				t.Errorf("%d lines \"partition not migrated\", want 1:\n%s", n, o.log.String())
			}
			if n := len(o.log.lines(t, "database unavailable", "")); n != 0 {
				t.Errorf("a partition not migrated is logged as its database unavailable:\n%s", o.log.String())
			}
			if log := o.log.String(); !strings.Contains(log, "users.email") {
				t.Errorf("the log does not name the missing column users.email:\n%s", log)
			}

			res := o.get(t, "/v2/{p}/security/users", "Authorization", "Bearer good").expect(t, "list users without users.email", http.StatusInternalServerError)
			var doc struct {
				Status            int
				Detail, RequestId string
			}
			if err := json.Unmarshal(res.body, &doc); err != nil || doc.RequestId == "" || doc.RequestId != res.header.Get("X-Request-Id") {
				t.Errorf("the problem document %s (%v) lacks the request's id %q", res.body, err, res.header.Get("X-Request-Id"))
			}
			// The Instance is the request's path; nothing else names the partition's schema.
			for _, leak := range []string{"email", "SELECT", "column", "SQLSTATE", "sqlite", "postgres", `"` + o.partition + `"`} {
				if strings.Contains(string(res.body), leak) {
					t.Errorf("the problem document shows %q: %s", leak, res.body)
				}
			}
			if log := o.log.String(); !strings.Contains(log, doc.RequestId) || !strings.Contains(log, "email") {
				t.Errorf("the log does not give the failure of request %s with its cause:\n%s", doc.RequestId, log)
			}

			if err := o.store.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			o.get(t, "/readyz").expect(t, "readyz after migrating again", http.StatusOK)
			o.get(t, "/v2/{p}/security/users", "Authorization", "Bearer good").expect(t, "list users after migrating again", http.StatusOK)
		})
	}
}
