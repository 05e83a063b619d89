package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// waitCtx bounds the wait for a pooled connection of a statement whose context has a deadline
// but no Done channel (see socketDeadline): its Done channel closes at that deadline. Contexts
// whose timer was stopped before it fired are reused, so that a wait costs no allocation; one
// whose timer fired is dropped, since its channel is closed and a goroutine that pgx or puddle
// left behind may still hold it.
type waitCtx struct {
	parent   context.Context
	deadline time.Time
	done     chan struct{}
	timer    *time.Timer
	expired  atomic.Bool
}

var _ context.Context = (*waitCtx)(nil)

var waits = sync.Pool{New: func() any {
	w := &waitCtx{done: make(chan struct{})}
	w.timer = time.AfterFunc(time.Hour, w.expire)
	w.timer.Stop()
	return w
}}

// waitUntil returns a waitCtx with parent's values that is done at deadline.
func waitUntil(parent context.Context, deadline time.Time) *waitCtx {
	w := waits.Get().(*waitCtx)
	w.parent, w.deadline = parent, deadline
	w.timer.Reset(time.Until(deadline))
	return w
}

func (w *waitCtx) expire() {
	w.expired.Store(true)
	close(w.done)
}

// release ends the wait; w is not used after.
func (w *waitCtx) release() {
	if w.timer.Stop() {
		w.parent = nil
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
