package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestLostConnectionsAreDropped: when the database goes away (its connections closed, new ones
// refused), the first statement that finds its connection lost fails with ErrUnavailable and
// empties the pool of its other idle connections, lost too; once the database is back, the
// next statements connect afresh instead of each failing on one of them.
func TestLostConnectionsAreDropped(t *testing.T) {
	dbURL, proxy := testenv.ProxyURL(t, testenv.Postgres(t))
	reg := fixtureRegistry(t)
	p := testenv.Partition(t)
	ctx := context.Background()
	db, err := engine.Open(ctx, dbURL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	t.Cleanup(func() { dropSchema(t, testenv.Postgres(t), p) })
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
	err = s.DB(ctx).Exec("SELECT 1").Error
	if !errors.Is(engine.Translate(err), engine.ErrUnavailable) {
		t.Fatalf("a statement with the database gone: %v, want ErrUnavailable", err)
	}
	proxy.Up(t)
	for i := range n {
		if err := s.DB(ctx).Exec("SELECT 1").Error; err != nil {
			t.Errorf("statement %d after the database came back: %v", i, err)
		}
	}
}
