package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// waitCtx bounds the wait for a pooled connection of a statement whose context has a deadline
// but no Done channel (see socketDeadline): its Done channel closes at that deadline. Contexts
// that did not expire are reused, so that a wait costs no allocation; one that expired is
// dropped, since its channel is closed and a goroutine that pgx or puddle left behind may still
// hold it.
//
// Its timer is not stopped when a wait ends nor reset when the next begins: it stays armed for
// the deadline of an earlier wait, and when it fires for a wait still going on whose deadline
// is later, it is armed again for the rest. A timer reset on every acquire was one more timer
// inserted into the runtime's heap per statement, which woke an idle thread to watch it (0.4 µs
// of a get in process, and the thread's wake-up besides). Deadlines are the store's timeout
// from now, so that a later wait's deadline is almost always later than the timer's: the timer
// fires about once per timeout and context, not once per statement.
type waitCtx struct {
	done    chan struct{}
	timer   *time.Timer
	expired atomic.Bool

	mu       sync.Mutex // guards the fields below, shared with the timer's function
	parent   context.Context
	deadline time.Time
	waiting  bool      // a wait is going on: between waitUntil and release
	armed    bool      // the timer is pending
	fires    time.Time // when it fires, if armed
}

var _ context.Context = (*waitCtx)(nil)

var waits = sync.Pool{New: func() any {
	w := &waitCtx{done: make(chan struct{})}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}}

// waitUntil returns a waitCtx with parent's values that is done at deadline.
func waitUntil(parent context.Context, deadline time.Time) *waitCtx {
	w := waits.Get().(*waitCtx)
	w.start(parent, deadline)
	return w
}

// start begins a wait on w, a context from waits.
func (w *waitCtx) start(parent context.Context, deadline time.Time) {
	w.mu.Lock()
	w.startLocked(parent, deadline)
	w.mu.Unlock()
}

// startLocked is start with w.mu held.
func (w *waitCtx) startLocked(parent context.Context, deadline time.Time) {
	w.parent, w.deadline, w.waiting = parent, deadline, true
	if !w.armed || deadline.Before(w.fires) {
		w.arm(deadline)
	}
}

// arm sets the timer to fire at t; w.mu is held.
func (w *waitCtx) arm(t time.Time) {
	w.timer.Reset(time.Until(t))
	w.armed, w.fires = true, t
}

// fire is the timer's function: it ends the wait going on if its deadline has passed, arms the
// timer again for one still to come, and lets it lapse when no wait is going on or the wait
// already expired. It can run twice for one wait: a wait that begins while the function,
// fired for an earlier wait, is about to run, and whose deadline is earlier than that firing
// (so already passed), arms the timer again (see TestWaitFiresOnce).
func (w *waitCtx) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if !w.waiting || w.expired.Load() {
		return
	}
	if time.Now().Before(w.deadline) {
		w.arm(w.deadline)
		return
	}
	w.expired.Store(true)
	close(w.done)
}

// release ends the wait; w is not used after. An expired w keeps its parent for the
// goroutines that may still hold it, and is not reused.
func (w *waitCtx) release() {
	w.mu.Lock()
	w.waiting = false
	expired := w.expired.Load()
	if !expired {
		w.parent = nil
	}
	w.mu.Unlock()
	if !expired {
		waits.Put(w)
	}
}

func (w *waitCtx) Deadline() (time.Time, bool) { return w.deadline, true }
func (w *waitCtx) Done() <-chan struct{}       { return w.done }
func (w *waitCtx) Value(key any) any           { return w.parent.Value(key) }

func (w *waitCtx) Err() error {
	if w.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}
