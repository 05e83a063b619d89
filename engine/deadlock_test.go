package engine_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers/problem"
	"credo/internal/testenv"
)

// TestDeadlockIsARetryable503: two transactions that update two widgets in opposite order.
// On PostgreSQL one of them waits for the other's row while holding the row the other waits
// for; PostgreSQL aborts one (SQLSTATE 40P01), which must be ErrAborted, answered 503 with
// Retry-After (it was a 500), with nothing of it written, while the other commits. On SQLite a
// transaction holds the writer from its BEGIN, so the second waits for the first and both
// commit in turn.
func TestDeadlockIsARetryable503(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		a := []any{mustCreate(t, s, w, widget("D1", "")).Get(w, "WidgetIdentifier")}
		b := []any{mustCreate(t, s, w, widget("D2", "")).Get(w, "WidgetIdentifier")}
		var locked sync.WaitGroup // each transaction has locked its first row
		locked.Add(2)
		run := func(title string, first, second []any) error {
			return s.Transaction(ctx, func(tx *engine.Store) error {
				body := []byte(`{"WidgetTitle":"` + title + `"}`)
				if err := testenv.PatchJSON(ctx, tx, w, first, body, engine.AllOrganizations()); err != nil {
					return err
				}
				locked.Done()
				waitAtMost(&locked, 3*time.Second) // SQLite: the other cannot begin before this commits
				return testenv.PatchJSON(ctx, tx, w, second, body, engine.AllOrganizations())
			})
		}
		errs := make([]error, 2)
		var done sync.WaitGroup
		done.Add(2)
		go func() { defer done.Done(); errs[0] = run("ab", a, b) }()
		go func() { defer done.Done(); errs[1] = run("ba", b, a) }()
		done.Wait()

		titles := func() (string, string) {
			ra, err := s.Get(ctx, w, a, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			rb, err := s.Get(ctx, w, b, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			ta, _ := ra.Get(w, "WidgetTitle").(string)
			tb, _ := rb.Get(w, "WidgetTitle").(string)
			return ta, tb
		}
		ta, tb := titles()
		if s.Dialect() == engine.SQLite {
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("SQLite: transactions in turn failed: %v, %v", errs[0], errs[1])
			}
			if ta != tb {
				t.Fatalf("titles %q, %q: one transaction is half-written", ta, tb)
			}
			return
		}
		failed, won := -1, ""
		for i, err := range errs {
			switch {
			case err == nil:
				won = []string{"ab", "ba"}[i]
			case failed >= 0:
				t.Fatalf("both transactions failed: %v; %v", errs[0], errs[1])
			default:
				failed = i
			}
		}
		if failed < 0 {
			t.Fatal("no deadlock: both transactions committed")
		}
		err := errs[failed]
		if !errors.Is(err, engine.ErrAborted) || errors.Is(err, engine.ErrUnavailable) {
			t.Fatalf("deadlock: %v, want ErrAborted (and not an outage)", err)
		}
		p := problem.From(err)
		if p.Status != http.StatusServiceUnavailable || p.Header.Get("Retry-After") == "" {
			t.Fatalf("deadlock answered %d, Retry-After %q; want 503 with Retry-After", p.Status, p.Header.Get("Retry-After"))
		}
		if ta != won || tb != won {
			t.Fatalf("titles %q, %q; want both %q: the aborted transaction left a write", ta, tb, won)
		}
	})
}

// waitAtMost waits for wg, or d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
	case <-time.After(d):
	}
}
