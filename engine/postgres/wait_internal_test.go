package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitEndsAtItsOwnDeadline: a reused waitCtx keeps its timer armed from an earlier wait
// (see waitCtx). Whatever that timer's time, each wait ends at its own deadline, not before
// and not long after, and a wait released before its deadline never expires. (Nothing else in
// this test binary takes contexts from waits, so a context released here is used on.)
func TestWaitEndsAtItsOwnDeadline(t *testing.T) {
	const (
		short = 100 * time.Millisecond
		long  = 400 * time.Millisecond
		slack = 1500 * time.Millisecond // a loaded two-CPU machine
	)
	// waitFor starts a wait of d on w and checks that it ends at its deadline; with armed, that
	// the wait's start left the timer armed for that time.
	waitFor := func(t *testing.T, w *waitCtx, d time.Duration, armed ...time.Time) {
		t.Helper()
		start := time.Now()
		w.start(context.Background(), start.Add(d))
		if fires := w.firesAt(); fires.After(start.Add(d)) {
			t.Fatalf("the timer fires at %v, after the deadline %v", fires, start.Add(d))
		} else if len(armed) > 0 && !fires.Equal(armed[0]) {
			t.Errorf("the wait's start armed the timer for %v (was %v)", fires, armed[0])
		}
		select {
		case <-w.Done():
		case <-time.After(d + slack):
			t.Fatalf("a wait of %v was not done after %v", d, d+slack)
		}
		if took := time.Since(start); took < d {
			t.Errorf("a wait of %v was done after %v", d, took)
		}
		if !errors.Is(w.Err(), context.DeadlineExceeded) {
			t.Errorf("Err: %v", w.Err())
		}
	}
	fresh := func() *waitCtx { return waits.New().(*waitCtx) }
	t.Run("later than the armed timer", func(t *testing.T) {
		w := fresh()
		w.start(context.Background(), time.Now().Add(short))
		w.release()
		first := w.firesAt()
		// The next wait leaves the timer as it is; it fires at short, in the wait, which it
		// does not end, and is armed again for the wait's deadline.
		waitFor(t, w, long, first)
	})
	t.Run("earlier than the armed timer", func(t *testing.T) {
		w := fresh()
		w.start(context.Background(), time.Now().Add(time.Hour))
		w.release()
		waitFor(t, w, short)
	})
	t.Run("after the timer lapsed", func(t *testing.T) {
		w := fresh()
		w.start(context.Background(), time.Now().Add(short/2))
		w.release()
		time.Sleep(short) // the timer fires with no wait going on
		if w.Err() != nil {
			t.Fatalf("a wait released before its deadline expired: %v", w.Err())
		}
		select {
		case <-w.Done():
			t.Fatal("a wait released before its deadline is done")
		default:
		}
		waitFor(t, w, short)
	})
}

// firesAt returns when w's timer fires, if armed.
func (w *waitCtx) firesAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fires
}

// BenchmarkWait: the wait for a pooled connection of one statement, from TraceAcquireStart to
// TraceAcquireEnd, when a connection is idle.
func BenchmarkWait(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		waitUntil(ctx, time.Now().Add(10*time.Second)).release()
	}
}

// TestWaitFiresOnce: a wait that begins while the timer's function, fired for an earlier wait,
// is about to run, and whose deadline is earlier than the timer's (a goroutine that computed
// its deadline and then was not scheduled for longer than the timeout; another store's
// shorter timeout), arms the timer again: both the running function and the new firing find
// the wait's deadline passed. The wait expires once; a second close of its channel was a panic
// in the timer's goroutine, which ends the process.
func TestWaitFiresOnce(t *testing.T) {
	w := waits.New().(*waitCtx)
	w.start(context.Background(), time.Now().Add(time.Millisecond))
	w.release()
	w.mu.Lock()
	time.Sleep(50 * time.Millisecond) // the timer fires; its function waits for w.mu
	w.startLocked(context.Background(), time.Now().Add(-time.Second))
	w.mu.Unlock()
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a wait whose deadline passed is not done")
	}
	time.Sleep(50 * time.Millisecond) // the second firing
	if !errors.Is(w.Err(), context.DeadlineExceeded) {
		t.Errorf("Err: %v", w.Err())
	}
	w.release()
}
