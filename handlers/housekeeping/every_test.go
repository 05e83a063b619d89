package housekeeping_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"credo/handlers/housekeeping"
)

// TestEvery: the pass runs at once, again after each interval (a failure does not stop the
// loop), and not after ctx ends.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int64
	done := make(chan struct{})
	go func() {
		housekeeping.Every(ctx, 5*time.Millisecond, "test", func(context.Context) (int64, error) {
			if runs.Add(1)%2 == 0 {
				return 0, errors.New("a failing pass")
			}
			return 1, nil
		})
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for runs.Load() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d passes in 10 s, want 4", runs.Load())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	n := runs.Load()
	time.Sleep(20 * time.Millisecond)
	if runs.Load() != n {
		t.Errorf("passes went on after Every returned: %d then %d", n, runs.Load())
	}
}
