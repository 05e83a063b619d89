package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"credo/engine"
	"credo/resources"
)

// TestExclusive: while one process holds the named lock, another's Exclusive on PostgreSQL
// does not run and says so; on SQLite it waits for the first writer and then runs. After
// the holder commits, the lock is free again on both.
func TestExclusive(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		held, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := s.Exclusive(ctx, "purge", func(*engine.Store) error {
				close(held)
				<-release
				return nil
			})
			done <- err
		}()
		<-held
		var ran atomic.Bool
		second := make(chan bool, 1)
		go func() {
			ok, err := s.Exclusive(ctx, "purge", func(*engine.Store) error { ran.Store(true); return nil })
			if err != nil {
				t.Error(err)
			}
			second <- ok
		}()
		if s.Dialect() == engine.Postgres {
			if ok := <-second; ok || ran.Load() {
				t.Errorf("a second Exclusive ran while the first held the lock")
			}
			// Another name is not held.
			if ok, err := s.Exclusive(ctx, "other", func(*engine.Store) error { return nil }); !ok || err != nil {
				t.Errorf("another name: %v %v", ok, err)
			}
		} else {
			select {
			case <-second:
				t.Errorf("a second Exclusive on SQLite ran beside the first writer")
			case <-time.After(200 * time.Millisecond):
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if s.Dialect() != engine.Postgres {
			if ok := <-second; !ok || !ran.Load() {
				t.Errorf("the waiting Exclusive did not run after the first: %v", ok)
			}
		}
		if ok, err := s.Exclusive(ctx, "purge", func(*engine.Store) error { return nil }); !ok || err != nil {
			t.Errorf("after the holder committed: %v %v", ok, err)
		}
	})
}
