package idempotency

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"credo/engine"
)

// createComment is a handler that stores a UserComment in the real work transaction of the
// request, and then answers with created.
func (f *fixture) createComment() func(w http.ResponseWriter, req *http.Request) error {
	r := f.st.Registry().MustByName("UserComment")
	return func(w http.ResponseWriter, req *http.Request) error {
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
	}
}

// comments counts the partition's UserComments.
func (f *fixture) comments(t *testing.T) int64 {
	t.Helper()
	n, err := f.st.Count(t.Context(), f.st.Registry().MustByName("UserComment"), engine.Query{}, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFailureAfterWork: a request that fails after its work committed (here, its handler
// errs after the create) is answered 500 and keeps no answer, but its key stays done and its
// lease ends at once: the retry, sent straight away, is told that the work was done (a 409
// without Retry-After) and does not do it again.
func TestFailureAfterWork(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		work := f.createComment()
		var calls atomic.Int32
		h := f.wrap(func(w http.ResponseWriter, req *http.Request) error {
			calls.Add(1)
			if err := work(httptest.NewRecorder(), req); err != nil {
				return err
			}
			return errors.New("the answer could not be read back")
		})
		if w := f.call(h, "k", `{"a":1}`); w.Code != http.StatusInternalServerError {
			t.Fatalf("the failing request: %d %s", w.Code, w.Body)
		}
		w := f.call(h, "k", `{"a":1}`)
		if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), "was done") {
			t.Fatalf("its retry: %d %v %s", w.Code, w.Header(), w.Body)
		}
		if n := f.comments(t); n != 1 || calls.Load() != 1 {
			t.Fatalf("%d records, the handler ran %d times; want 1 and 1", n, calls.Load())
		}
	})
}

// TestLostLease: request A holds a key, stalls past its lease, and request B claims the key
// and does the work. When A's work then commits, its transaction finds the key no longer A's
// and rolls back: A is answered 409 (the key is being answered by B), B's answer is the one
// kept, and exactly one record exists. The requests run on goroutines of their own against
// the real database, and the records are counted.
func TestLostLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		stalled, resume := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		work := f.createComment()
		h := f.wrap(func(w http.ResponseWriter, req *http.Request) error {
			if calls.Add(1) == 1 {
				close(stalled)
				<-resume
			}
			return work(w, req)
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
		if n := f.comments(t); n != 1 {
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

// TestExpiryPrecision: a row's expiry is stored to 100 ns (dateTime), and the claim judges it
// at that precision too: within the 100 ns after a lease's end the key is still held (a 409
// with Retry-After, read once), not found expired by one clock and left in place by the
// DELETE's truncated one three times over (errBusy); from the next tick it is claimed.
func TestExpiryPrecision(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		tb := f.k.t
		r := httptest.NewRequest(http.MethodPost, "/v2/p/things", nil)
		hash, fp := keyHash(caller, "k"), fingerprint(r, []byte(`{"a":1}`))
		now := f.clock.Now()
		end := now.Add(Lease)
		if cur, err := tb.claim(ctx, f.st, hash, fp, "dead", now, end); err != nil || cur != nil {
			t.Fatalf("claim: %v %v", cur, err)
		}
		if cur, err := tb.claim(ctx, f.st, hash, fp, "late", end.Add(50*time.Nanosecond), end.Add(Lease)); err != nil || cur == nil || cur.holder != "dead" {
			t.Fatalf("50 ns after the lease: %+v, %v; want the dead holder's row", cur, err)
		}
		if cur, err := tb.claim(ctx, f.st, hash, fp, "next", end.Add(100*time.Nanosecond), end.Add(Lease)); err != nil || cur != nil {
			t.Fatalf("100 ns after the lease: %+v, %v; want the key claimed", cur, err)
		}
	})
}
