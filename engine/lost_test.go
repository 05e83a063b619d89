package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestLostConnectionsAreDropped: when the database goes away (its connections closed, new ones
// refused), the first statement that finds its connection lost fails with ErrUnavailable and
// empties the pool of its other idle connections, lost too; once the database is back, the
// next statements connect afresh instead of each failing on one of them. The first to find the
// loss is a statement, or a page sent with its count in one batch.
func TestLostConnectionsAreDropped(t *testing.T) {
	dbURL, proxy := testenv.ProxyURL(t, testenv.Postgres(t))
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	p := testenv.Partition(t)
	ctx := context.Background()
	db, err := engine.Open(ctx, dbURL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	t.Cleanup(func() { dropSchema(t, testenv.Postgres(t), p) })
	for i := range 3 {
		mustCreate(t, s, w, widget(fmt.Sprintf("L%d", i), ""))
	}
	page := engine.Query{Page: 1, Take: 2, Sort: w.DefaultSort, Fields: w.Output}
	for _, first := range []struct {
		name string
		run  func() error
	}{
		{"statement", func() error { return s.DB(ctx).Exec("SELECT 1").Error }},
		{"page and count", func() error {
			_, total, err := s.List(ctx, w, page, engine.AllOrganizations())
			if err == nil && total != 3 {
				t.Errorf("page and count: total %d, want 3", total)
			}
			return err
		}},
	} {
		t.Run(first.name, func(t *testing.T) {
			if err := first.run(); err != nil {
				t.Fatalf("before the loss: %v", err)
			}
			const n = 8
			// n connections at once, so that the pool keeps n idle ones.
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					if err := s.DB(ctx).Exec("SELECT pg_sleep(0.1)").Error; err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if idle := db.Stats()[0].Idle; idle < n/2 {
				t.Fatalf("%d idle connections after %d concurrent statements", idle, n)
			}

			proxy.Down()
			if err := first.run(); !errors.Is(engine.Translate(err), engine.ErrUnavailable) {
				t.Fatalf("%s with the database gone: %v, want ErrUnavailable", first.name, err)
			}
			proxy.Up(t)
			// Counts go to the pgx pool directly, where nothing retries on another connection
			// (database/sql would, and hide a lost one).
			for i := range n {
				if _, err := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); err != nil {
					t.Errorf("statement %d after the database came back: %v", i, err)
				}
			}
			if err := first.run(); err != nil {
				t.Errorf("%s after the database came back: %v", first.name, err)
			}
		})
	}
}
