package legacy

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestSchemaDrift: a column of a table that version 1 reads, renamed by an operator while credo
// serves (Registration's LearnerIdentifier), is answered as version 2 answers it: 503 with
// Retry-After, naming the partition and saying that its tables must be migrated again (it was a
// 500), once the partition's tables are checked and lack it; renamed back, the same get is a 200.
func TestSchemaDrift(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const id = "0190a6f0-0000-7000-8000-0000000002a1"
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(30, "09:00:00", "Z"), ""))
		e.ok("GET", regPath(id, ""), "")
		r := registry.MustByName("Registration")
		learner, _ := r.Member("LearnerIdentifier")
		rename := func(from, to string) {
			t.Helper()
			if err := e.store.DB(context.Background()).Exec("ALTER TABLE " + e.store.Table(r) + " RENAME COLUMN " + from + " TO " + to).Error; err != nil {
				t.Fatal(err)
			}
		}
		rename(learner.Column, learner.Column+"_old")
		rec := e.do("GET", regPath(id, ""), "")
		status, detail := problemOf(t, rec)
		if status != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("get with LearnerIdentifier's column renamed: %d, Retry-After %q; want 503 with Retry-After: %s", status, rec.Header().Get("Retry-After"), rec.Body)
		}
		if !strings.Contains(detail, "partition "+e.store.Partition) || !strings.Contains(detail, "migrated again") || strings.Contains(detail, learner.Column) {
			t.Errorf("get with LearnerIdentifier's column renamed: Detail %q", detail)
		}
		rename(learner.Column+"_old", learner.Column)
		e.ok("GET", regPath(id, ""), "")
	})
}
