package idempotency_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/handlers/idempotency"
	"credo/internal/testenv"
)

const comments = "security/users-comments"

// comment is a create body of a UserComment.
func comment(text string) string {
	return fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":%q,"CommentCreated":"2024-01-01T00:00:00Z"}`,
		"0190a6f0-0000-7000-8000-000000000001", "0190a6f0-0000-7000-8000-000000000002", "0190a6f0-0000-7000-8000-000000000003", text)
}

// TestRetriedCreate: a create retried with its Idempotency-Key gets the first answer again,
// marked replayed, and stores one record; the key with another body is a 422 and stores
// nothing; another caller's same key is its own; a create without the header is as it was.
func TestRetriedCreate(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			first := s.post(t, comments, comment("once"), idempotency.KeyHeader, "k-1")
			if first.status != http.StatusCreated || first.header.Get("Location") == "" {
				t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
			}
			for i := range 3 {
				sameAnswer(t, fmt.Sprintf("retry %d", i+1), first, s.post(t, comments, comment("once"), idempotency.KeyHeader, "k-1"))
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after a create and 3 retries, want 1", n)
			}

			other := s.post(t, comments, comment("another body"), idempotency.KeyHeader, "k-1")
			if other.status != http.StatusUnprocessableEntity || !strings.Contains(other.body, "another request") {
				t.Fatalf("the key with another body: %d %s", other.status, other.body)
			}
			if other.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("422 Content-Type %q", other.header.Get("Content-Type"))
			}
			// Another path with the key is another request too.
			if a := s.post(t, "platform/actions", `{}`, idempotency.KeyHeader, "k-1"); a.status != http.StatusUnprocessableEntity {
				t.Fatalf("the key on another path: %d %s", a.status, a.body)
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after a 422, want 1", n)
			}

			// The key belongs to its caller: another user's k-1 is another key.
			mine := s.post(t, comments, comment("once"), idempotency.KeyHeader, "k-1", "X-Test-User", "0190a6f0-0000-7000-8000-0000000000aa")
			if mine.status != http.StatusCreated || mine.body == first.body || mine.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("another caller's key: %d %v %s", mine.status, mine.header, mine.body)
			}
			if n := s.count(t, "UserComment"); n != 2 {
				t.Fatalf("%d records, want 2", n)
			}

			// Without the header, every create does the work.
			for range 2 {
				a := s.post(t, comments, comment("once"))
				if a.status != http.StatusCreated || a.header.Get(idempotency.ReplayedHeader) != "" {
					t.Fatalf("create without a key: %d %v %s", a.status, a.header, a.body)
				}
			}
			if n := s.count(t, "UserComment"); n != 4 {
				t.Fatalf("%d records, want 4", n)
			}

			// A 4xx changed nothing: it is not kept, and the key is free again. The same bad
			// body is refused afresh (not replayed), and the mended body does the work once.
			for i := range 2 {
				bad := s.post(t, comments, `{"CommentText":7}`, idempotency.KeyHeader, "k-bad")
				if bad.status != http.StatusBadRequest || bad.header.Get(idempotency.ReplayedHeader) != "" {
					t.Fatalf("invalid body, try %d: %d %v %s", i+1, bad.status, bad.header, bad.body)
				}
			}
			mended := s.post(t, comments, comment("mended"), idempotency.KeyHeader, "k-bad")
			if mended.status != http.StatusCreated || mended.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the mended body after a 400 with its key: %d %v %s", mended.status, mended.header, mended.body)
			}
			sameAnswer(t, "retried mended create", mended, s.post(t, comments, comment("mended"), idempotency.KeyHeader, "k-bad"))
			if n := s.count(t, "UserComment"); n != 5 {
				t.Fatalf("%d records after the mended create and its retry, want 5", n)
			}
			want := map[string]float64{"stored": 3, "replayed": 4, "mismatch": 2, "not_stored": 2}
			if got := s.counted(t); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", "credo_idempotency_requests_total", got, want)
			}
		})
	}
}

// TestBadKey: a key that is empty, too long, not printable ASCII or sent twice is a 400 naming
// the header, and nothing is created.
func TestBadKey(t *testing.T) {
	s := newServer(t, testenv.Backends(t)[0])
	for _, c := range []struct {
		name   string
		header []string
	}{
		{name: "empty", header: []string{idempotency.KeyHeader, ""}},
		{name: "256 characters", header: []string{idempotency.KeyHeader, strings.Repeat("k", 256)}},
		{name: "not ASCII", header: []string{idempotency.KeyHeader, "clé"}},
		{name: "twice", header: []string{idempotency.KeyHeader, "a", idempotency.KeyHeader, "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := s.post(t, comments, comment("x"), c.header...)
			var p struct{ Errors map[string][]string }
			if a.status != http.StatusBadRequest || json.Unmarshal([]byte(a.body), &p) != nil || len(p.Errors[idempotency.KeyHeader]) == 0 {
				t.Fatalf("%d %s", a.status, a.body)
			}
		})
	}
	if a := s.post(t, comments, comment("x"), idempotency.KeyHeader, strings.Repeat("~", 255)); a.status != http.StatusCreated {
		t.Fatalf("a key of 255 characters: %d %s", a.status, a.body)
	}
	if n := s.count(t, "UserComment"); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}

// TestConcurrentRetries: 20 clients send one create with one key at the same moment, over real
// connections. Exactly one record is created; every answer is that record's 201 (the first,
// or its replay) or a 409 with Retry-After for a retry that came while it was being answered.
func TestConcurrentRetries(t *testing.T) {
	const clients = 20
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			answers := make([]answer, clients)
			errs := make([]error, clients)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					answers[i], errs[i] = s.send(comments, comment("together"), idempotency.KeyHeader, "together")
				}()
			}
			close(start)
			wg.Wait()
			created, replayed, inFlight := 0, 0, 0
			var body string
			for i, a := range answers {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				switch {
				case a.status == http.StatusCreated && a.header.Get(idempotency.ReplayedHeader) == "true":
					replayed++
				case a.status == http.StatusCreated:
					created++
				case a.status == http.StatusConflict && a.header.Get("Retry-After") != "":
					inFlight++
					continue
				default:
					t.Fatalf("answer %d: %d %v %s", i, a.status, a.header, a.body)
				}
				if body != "" && a.body != body {
					t.Fatalf("two different 201 answers: %s and %s", body, a.body)
				}
				body = a.body
			}
			if created != 1 {
				t.Fatalf("%d first answers (%d replays, %d in flight), want exactly 1", created, replayed, inFlight)
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after %d concurrent requests with one key, want 1", n, clients)
			}
			t.Logf("%d clients: 1 created, %d replayed, %d in flight (409)", clients, replayed, inFlight)
			if again := s.post(t, comments, comment("together"), idempotency.KeyHeader, "together"); again.body != body ||
				again.header.Get(idempotency.ReplayedHeader) != "true" {
				t.Fatalf("the retry after them: %d %s", again.status, again.body)
			}
		})
	}
}

// TestKeysExpire: an answer is replayed for 24 hours and forgotten after; the purge removes
// the forgotten keys, and the key then creates again.
func TestKeysExpire(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			ctx := context.Background()
			first := s.post(t, comments, comment("day"), idempotency.KeyHeader, "daily")
			s.post(t, comments, comment("day"), idempotency.KeyHeader, "other")
			s.clock.Advance(idempotency.Retention - time.Second)
			sameAnswer(t, "a second before expiry", first, s.post(t, comments, comment("day"), idempotency.KeyHeader, "daily"))
			if n, err := s.keeper.Purge(ctx, s.db); err != nil || n != 0 {
				t.Fatalf("purge before expiry: %d, %v", n, err)
			}
			s.clock.Advance(2 * time.Second)
			if n, err := s.keeper.Purge(ctx, s.db); err != nil || n != 2 {
				t.Fatalf("purge after expiry: removed %d, %v; want 2", n, err)
			}
			again := s.post(t, comments, comment("day"), idempotency.KeyHeader, "daily")
			if again.status != http.StatusCreated || again.body == first.body || again.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the key after expiry: %d %v %s", again.status, again.header, again.body)
			}
			if n := s.count(t, "UserComment"); n != 3 {
				t.Fatalf("%d records, want 3", n)
			}
			// An expired key is forgotten even before the purge runs.
			s.clock.Advance(idempotency.Retention + time.Second)
			if a := s.post(t, comments, comment("day"), idempotency.KeyHeader, "daily"); a.status != http.StatusCreated || a.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the key after expiry, not purged: %d %v", a.status, a.header)
			}
			if n := s.count(t, "UserComment"); n != 4 {
				t.Fatalf("%d records, want 4", n)
			}
		})
	}
}
