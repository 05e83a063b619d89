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

// TestSerialize: outside a transaction Serialize is an error (its lock would end with its
// statement); inside, a second transaction serializing under the same name waits until the
// first ends, on both stores, and one under another name does not wait on PostgreSQL.
func TestSerialize(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		if err := s.Serialize(ctx, "grants"); err == nil {
			t.Error("Serialize outside a transaction: no error")
		}
		held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- s.Transaction(ctx, func(tx *engine.Store) error {
				if err := tx.Serialize(ctx, "grants"); err != nil {
					return err
				}
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		if s.Dialect() == engine.Postgres {
			other := s.Transaction(ctx, func(tx *engine.Store) error { return tx.Serialize(ctx, "other") })
			if other != nil {
				t.Errorf("another name: %v", other)
			}
		}
		var after atomic.Bool
		second := make(chan error, 1)
		go func() {
			second <- s.Transaction(ctx, func(tx *engine.Store) error {
				err := tx.Serialize(ctx, "grants")
				after.Store(true)
				return err
			})
		}()
		select {
		case <-second:
			t.Error("a second transaction serialized beside the first")
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := <-second; err != nil || !after.Load() {
			t.Errorf("the waiting transaction: %v, ran %v", err, after.Load())
		}
	})
}
