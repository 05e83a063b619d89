package idempotency_test

import (
	"context"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers/idempotency"
	"credo/internal/testenv"
)

// TestCrashAfterWork: a create whose process stopped after its work committed and before its
// answer was kept (idempotency.Config.Stop) is never done again. Its work's transaction marked
// the key done: a retry within the lease is a 409 with Retry-After, as for a request being
// answered; after the lease, the retry is answered as the create was (201, Location, ETag, the
// record as it is now), marked replayed, and still one record exists. Once the record is
// deleted, the retry is a 404 problem, and creates nothing.
func TestCrashAfterWork(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			s.stop.Store(true)
			first := s.post(t, comments, comment("crash"), idempotency.KeyHeader, "crash")
			s.stop.Store(false)
			if first.status != http.StatusInternalServerError {
				t.Fatalf("the stopped request: %d %s", first.status, first.body)
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after the stopped create, want 1 (its work committed)", n)
			}
			if a := s.post(t, comments, comment("crash"), idempotency.KeyHeader, "crash"); a.status != http.StatusConflict ||
				a.header.Get("Retry-After") != idempotency.InFlightRetryAfter {
				t.Fatalf("the retry within the lease: %d %v %s", a.status, a.header, a.body)
			}
			s.clock.Advance(idempotency.Lease + time.Second)
			again := s.post(t, comments, comment("crash"), idempotency.KeyHeader, "crash")
			if again.status != http.StatusCreated || again.header.Get(idempotency.ReplayedHeader) != "true" ||
				again.header.Get("ETag") == "" || !strings.Contains(again.body, `"CommentText":"crash"`) {
				t.Fatalf("the retry after the lease: %d %v %s", again.status, again.header, again.body)
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after the retry, want 1: the work was done again", n)
			}
			// The answer is the record's, as a get of its Location reads it.
			got := s.get(t, again.header.Get("Location"))
			if got.status != http.StatusOK || got.body != again.body || got.header.Get("ETag") != again.header.Get("ETag") {
				t.Fatalf("get %s: %d %v %s; the retry answered %s", again.header.Get("Location"), got.status, got.header, got.body, again.body)
			}

			r := loadRegistry(t).MustByName("UserComment")
			key, err := r.ParseKey([]string{path.Base(again.header.Get("Location"))})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.store.Delete(context.Background(), r, key, engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			gone := s.post(t, comments, comment("crash"), idempotency.KeyHeader, "crash")
			if gone.status != http.StatusNotFound || !strings.Contains(gone.body, "deleted") ||
				gone.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the retry after the record was deleted: %d %v %s", gone.status, gone.header, gone.body)
			}
			if n := s.count(t, "UserComment"); n != 0 {
				t.Fatalf("%d records after the retry of a deleted create, want 0", n)
			}
			if got := s.counted(t)["lost"]; got != 2 {
				t.Errorf("credo_idempotency_requests_total{outcome=lost} %v, want 2", got)
			}
		})
	}
}

// TestCrashAfterWorkCreateOnly: the retry of a lost create shows no more than the create's
// answer could have. A caller allowed to create and not to read the group
// (createOnlyUser) is not shown the record as it is now, with others' later edits, nor told
// whether it still exists: after the lease its retry is a 409 without Retry-After whose
// Location names the record created, and the record is neither shown nor created again.
func TestCrashAfterWorkCreateOnly(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			as := []string{idempotency.KeyHeader, "create-only", "X-Test-User", createOnlyUser}
			s.stop.Store(true)
			if first := s.post(t, comments, comment("as written"), as...); first.status != http.StatusInternalServerError {
				t.Fatalf("the stopped request: %d %s", first.status, first.body)
			}
			s.stop.Store(false)
			r := loadRegistry(t).MustByName("UserComment")
			recs, _, err := s.store.List(context.Background(), r, engine.Query{}, engine.AllOrganizations())
			if err != nil || len(recs) != 1 {
				t.Fatalf("%d records after the stopped create (%v), want 1 (its work committed)", len(recs), err)
			}
			key := []any{recs[0][r.Key[0].Index]}
			loc := "/v2/" + s.partition + "/" + comments + "/" + r.KeySegment(recs[0], 0)
			// Another caller edits the record: the create's answer could not have shown it.
			d, err := r.DraftOf(map[string]any{"CommentText": "edited by another"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.store.Patch(context.Background(), r, key, d, engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			s.clock.Advance(idempotency.Lease + time.Second)
			notShown := func(what string) {
				t.Helper()
				a := s.post(t, comments, comment("as written"), as...)
				if a.status != http.StatusConflict || a.header.Get("Retry-After") != "" || a.header.Get("Location") != loc ||
					a.header.Get(idempotency.ReplayedHeader) != "" || a.header.Get("ETag") != "" ||
					strings.Contains(a.body, "edited") || !strings.Contains(a.body, loc) || !strings.Contains(a.body, "not shown") {
					t.Fatalf("%s: %d %v %s, want a 409 naming %s and showing nothing of the record", what, a.status, a.header, a.body, loc)
				}
			}
			notShown("the retry after another's edit")
			if err := s.store.Delete(context.Background(), r, key, engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			notShown("the retry after the record was deleted")
			if n := s.count(t, "UserComment"); n != 0 {
				t.Fatalf("%d records after the retries, want 0: the work was done again", n)
			}
			if got := s.counted(t)["lost"]; got != 2 {
				t.Errorf("credo_idempotency_requests_total{outcome=lost} %v, want 2", got)
			}
		})
	}
}
