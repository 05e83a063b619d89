package idempotency

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"credo/engine"
)

// TestLostLease: request A holds a key, stalls past its lease, and request B claims the key
// and does the work. When A's work then commits, its transaction finds the key no longer A's
// and rolls back: A is answered 409 (the key is being answered by B), B's answer is the one
// kept, and exactly one record exists. The requests run on goroutines of their own against
// the real database, and the records are counted.
func TestLostLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		r := f.st.Registry().MustByName("UserComment")
		stalled, resume := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		h := f.wrap(func(w http.ResponseWriter, req *http.Request) error {
			if calls.Add(1) == 1 {
				close(stalled)
				<-resume
			}
			d, err := r.DraftOf(map[string]any{"CommentCreatedBy": "0190a6f0-0000-7000-8000-000000000001",
				"OrganizationIdentifier": "0190a6f0-0000-7000-8000-000000000002", "UserIdentifier": "0190a6f0-0000-7000-8000-000000000003",
				"CommentText": "lease", "CommentCreated": engine.DateTime{Time: f.clock.Now()}})
			if err != nil {
				return err
			}
			if _, err := f.st.Create(req.Context(), r, d, engine.AllOrganizations()); err != nil {
				return err
			}
			return created(w, req)
		})
		a, b := make(chan *httptest.ResponseRecorder), make(chan *httptest.ResponseRecorder)
		go func() { a <- f.call(h, "k", `{"a":1}`) }()
		<-stalled
		f.clock.Advance(Lease + time.Second)
		go func() { b <- f.call(h, "k", `{"a":1}`) }()
		second := <-b
		if second.Code != http.StatusCreated || second.Header().Get(ReplayedHeader) != "" {
			t.Fatalf("B, after A's lease: %d %v %s", second.Code, second.Header(), second.Body)
		}
		close(resume)
		first := <-a
		if first.Code != http.StatusConflict {
			t.Fatalf("A, whose work ended after its lease: %d %v %s", first.Code, first.Header(), first.Body)
		}
		n, err := f.st.Count(t.Context(), r, engine.Query{}, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%d records, want 1: A's work was not rolled back", n)
		}
		if again := f.call(h, "k", `{"a":1}`); again.Code != http.StatusCreated || again.Header().Get(ReplayedHeader) != "true" {
			t.Fatalf("the retry after both: %d %v %s", again.Code, again.Header(), again.Body)
		}
		if c := calls.Load(); c != 2 {
			t.Fatalf("the handler ran %d times, want 2", c)
		}
	})
}
