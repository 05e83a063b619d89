package idempotency

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
	"credo/internal/testenv"
	"credo/resources"
)

// Clock is a settable clock for the tests of both test packages.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2030, 1, 15, 12, 0, 0, 0, time.UTC)} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// OpenPartition opens a fresh partition of b's database for the tests of both test packages,
// dropped (PostgreSQL) and closed when t ends.
func OpenPartition(t *testing.T, b testenv.Backend, reg *engine.Registry) (*engine.Database, *engine.Store) {
	t.Helper()
	p := testenv.Partition(t)
	db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := db.Store(p)
	t.Cleanup(func() {
		if b.Name == "postgres" {
			st.DB(context.Background()).Exec(`DROP SCHEMA IF EXISTS "` + p + `" CASCADE`)
		}
		db.Close()
	})
	return db, st
}

// Abandon claims key for user's request req with body in st, as a process that died while
// doing its work leaves it: held, in flight, its work not done (for the tests of both test
// packages).
func (k *Keeper) Abandon(t *testing.T, st *engine.Store, user, key string, req *http.Request, body string) {
	t.Helper()
	now := k.now()
	p := &auth.Principal{UserIdentifier: user, Operator: true, Partition: st.Partition}
	if cur, err := k.t.claim(context.Background(), st, keyHash(p, key), fingerprint(req, []byte(body)), newHolder(), now, now.Add(Lease)); err != nil || cur != nil {
		t.Fatalf("abandon %s: %v, %v", key, cur, err)
	}
}

// fixture is a keeper on a test clock and a fresh partition of one database.
type fixture struct {
	st    *engine.Store
	k     *Keeper
	clock *Clock
}

var caller = &auth.Principal{UserIdentifier: "0190a6f0-0000-7000-8000-0000000000ff", OrganizationIdentifier: "0190a6f0-0000-7000-8000-0000000000aa"}

func forEachStore(t *testing.T, fn func(t *testing.T, f *fixture)) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			_, st := OpenPartition(t, b, reg)
			f := &fixture{st: st, clock: NewClock()}
			if f.k, err = New(reg, Config{Now: f.clock.Now}); err != nil {
				t.Fatal(err)
			}
			fn(t, f)
		})
	}
}

// call sends the key and body to h as caller.
func (f *fixture) call(h problem.HandlerFunc, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v2/p/things", strings.NewReader(body))
	r.Header.Set(KeyHeader, key)
	r = r.WithContext(auth.WithPrincipal(r.Context(), caller))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func (f *fixture) wrap(next problem.HandlerFunc) problem.HandlerFunc {
	return f.k.Wrap(func(*http.Request) *engine.Store { return f.st }, 1<<10, next)
}

// created answers 201 with the body it read.
func created(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/v2/p/things/1")
	w.WriteHeader(http.StatusCreated)
	b := make([]byte, 64)
	n, _ := r.Body.Read(b)
	_, err := w.Write(b[:n])
	return err
}

// TestServerFailureIsNotKept: a 5xx (returned or written) is passed on but not kept, so the
// retry does the work; the retry's answer is kept.
func TestServerFailureIsNotKept(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		h := f.wrap(func(w http.ResponseWriter, r *http.Request) error {
			switch calls.Add(1) {
			case 1:
				return errors.New("boom")
			case 2:
				w.WriteHeader(http.StatusBadGateway)
				return nil
			}
			return created(w, r)
		})
		for i, want := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusCreated, http.StatusCreated} {
			w := f.call(h, "k", `{"a":1}`)
			if w.Code != want {
				t.Fatalf("call %d: %d %s, want %d", i+1, w.Code, w.Body, want)
			}
			if replayed := w.Header().Get(ReplayedHeader) == "true"; replayed != (i == 3) {
				t.Fatalf("call %d: replayed %v", i+1, replayed)
			}
		}
		if n := calls.Load(); n != 3 {
			t.Fatalf("the handler ran %d times, want 3", n)
		}
	})
}

// TestInFlight: while the first request with a key is being answered, a retry is a 409 with
// Retry-After and does nothing; after it, the retry gets its answer.
func TestInFlight(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		h := f.wrap(func(w http.ResponseWriter, r *http.Request) error {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
			return created(w, r)
		})
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- f.call(h, "k", `{"a":1}`) }()
		<-entered
		w := f.call(h, "k", `{"a":1}`)
		if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != InFlightRetryAfter {
			t.Fatalf("retry in flight: %d %v %s", w.Code, w.Header(), w.Body)
		}
		if w := f.call(h, "k", `{"a":2}`); w.Code != http.StatusUnprocessableEntity {
			t.Fatalf("another body in flight: %d %s", w.Code, w.Body)
		}
		close(release)
		first := <-done
		again := f.call(h, "k", `{"a":1}`)
		if first.Code != http.StatusCreated || again.Code != http.StatusCreated || again.Body.String() != first.Body.String() ||
			again.Header().Get("Location") != "/v2/p/things/1" || again.Header().Get(ReplayedHeader) != "true" {
			t.Fatalf("first %d %s; retry %d %v %s", first.Code, first.Body, again.Code, again.Header(), again.Body)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("the handler ran %d times, want 1", n)
		}
	})
}

// TestLease: a key whose holder died while answering (its row left in flight) is refused with
// 409 until the lease ends, and then claimed by the retry, which does the work; the dead
// holder can no longer store its answer over the new one. A handler that panics gives its key
// up at once.
func TestLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		tb := f.k.t
		r := httptest.NewRequest(http.MethodPost, "/v2/p/things", nil)
		hash, fp := keyHash(caller, "k"), fingerprint(r, []byte(`{"a":1}`))
		now := f.clock.Now()
		if cur, err := tb.claim(ctx, f.st, hash, fp, "dead", now, now.Add(Lease)); err != nil || cur != nil {
			t.Fatalf("claim: %v %v", cur, err)
		}
		var calls atomic.Int32
		h := f.wrap(func(w http.ResponseWriter, r *http.Request) error {
			calls.Add(1)
			return created(w, r)
		})
		if w := f.call(h, "k", `{"a":1}`); w.Code != http.StatusConflict {
			t.Fatalf("within the dead holder's lease: %d %s", w.Code, w.Body)
		}
		f.clock.Advance(Lease + time.Second)
		if w := f.call(h, "k", `{"a":1}`); w.Code != http.StatusCreated || w.Header().Get(ReplayedHeader) != "" {
			t.Fatalf("after the lease: %d %v %s", w.Code, w.Header(), w.Body)
		}
		later := f.clock.Now()
		if err := tb.complete(ctx, f.st, hash, fp, "dead", later, later.Add(Retention), &answer{status: 418}); !errors.Is(err, errLost) {
			t.Fatalf("the dead holder's late answer: %v, want errLost", err)
		}
		if w := f.call(h, "k", `{"a":1}`); w.Code != http.StatusCreated || w.Header().Get(ReplayedHeader) != "true" {
			t.Fatalf("the retry after: %d %v %s", w.Code, w.Header(), w.Body)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("the handler ran %d times, want 1", n)
		}

		panics := f.wrap(func(http.ResponseWriter, *http.Request) error { panic("handler bug") })
		func() {
			defer func() { _ = recover() }()
			f.call(panics, "p", `{}`)
		}()
		if w := f.call(h, "p", `{}`); w.Code != http.StatusCreated {
			t.Fatalf("the key of a handler that panicked: %d %s", w.Code, w.Body)
		}
	})
}
