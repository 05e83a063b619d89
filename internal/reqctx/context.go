package reqctx

import (
	"context"
	"sync/atomic"
	"time"
)

// Slots is how many values a request Context holds itself. A v2 request adds four: the
// observer's entry, the route variables, the partition's store and the caller. A value past
// them goes into a context.WithValue, as it would without this package.
const Slots = 4

// Context is the context of one request, made once by the middleware that receives it: its
// parent's deadline, cancellation and values, and up to Slots values of its own that the
// request's middleware adds with With as it learns them.
//
// A slot is filled only while nothing in the context answers its key, so adding a value
// never changes an answer that a reader had; it gives an answer where there was none, to
// every holder of the context. That is what a request's own facts (its route, partition,
// caller) are for, and why With fills slots only of the request's Context itself, never
// through a context derived from it. Like any value handed to another goroutine, the Context
// is filled by the goroutine serving the request before it is shared: in particular, no slot is
// filled once a database statement has run on it (a driver's goroutine may still read its
// values, as pgx's connection wait can after it gave up).
type Context struct {
	context.Context // the parent
	n               int
	keys            [Slots]any
	vals            [Slots]any
	detached        detached    // see WithoutCancel
	statement       detached    // see WithoutCancelUntil
	claimed         atomic.Bool // statement was given out
}

// New returns a request context over parent.
func New(parent context.Context) *Context {
	c := new(Context)
	c.Init(parent)
	return c
}

// Init makes c an empty request context over parent, for a Context that lives inside a larger
// per-request value (the observer's response recorder), which saves New's allocation.
func (c *Context) Init(parent context.Context) {
	*c = Context{Context: parent}
	c.detached.parent = c
}

// Value returns the value of key in c's slots, otherwise its parent's.
func (c *Context) Value(key any) any {
	for i := range c.n {
		if c.keys[i] == key {
			return c.vals[i]
		}
	}
	return c.Context.Value(key)
}

// With returns a context carrying val under key, as context.WithValue(ctx, key, val) does;
// key must be comparable, as there. When ctx is a request Context with a free slot and
// nothing in it answers key yet, val goes into that slot and With returns ctx itself, so that
// the caller keeps its *http.Request instead of copying it for the new context (compare the
// result with r.Context()). Otherwise it returns context.WithValue(ctx, key, val).
func With(ctx context.Context, key, val any) context.Context {
	c, ok := ctx.(*Context)
	if !ok || c.n == Slots || key == nil || c.Value(key) != nil {
		return context.WithValue(ctx, key, val)
	}
	c.keys[c.n], c.vals[c.n] = key, val
	c.n++
	return c
}

// WithoutCancel returns a context with ctx's values and neither its cancellation nor its
// deadline, as context.WithoutCancel(ctx) does. For a request Context it is a part of that
// Context rather than a new allocation: the engine detaches the statements of every request
// from its client (see engine.Store.detach).
func WithoutCancel(ctx context.Context) context.Context {
	if c, ok := ctx.(*Context); ok && c.detached.parent == c {
		return &c.detached
	}
	return context.WithoutCancel(ctx)
}

// WithoutCancelUntil returns a context with ctx's values, no cancellation (its Done is nil,
// its Err always nil) and the deadline d, which nothing in the context enforces: it is for a
// reader that enforces the deadline itself (the engine's PostgreSQL statements, see
// engine.Store.statement). The first such context of a request Context is a part of that
// Context rather than a new allocation; the ones after it are new, since a driver's goroutine
// may still hold a context that a statement ran on.
func WithoutCancelUntil(ctx context.Context, d time.Time) context.Context {
	if c, ok := ctx.(*Context); ok && c.detached.parent == c && c.claimed.CompareAndSwap(false, true) {
		c.statement = detached{parent: c, deadline: d}
		return &c.statement
	}
	return &detached{parent: ctx, deadline: d}
}

// detached is a context without its parent's cancellation and deadline, with a deadline of
// its own if any. Unlike context.WithoutCancel's context, it answers the context package's own
// lookups through its parent, so that context.Cause reports the parent's cancellation while Err
// is nil: the drivers it is given (pgx, database/sql, modernc) never call Cause, and
// context.WithCancel, WithDeadline and AfterFunc on it read its Done, which is nil.
type detached struct {
	parent   context.Context
	deadline time.Time // zero: none
}

var _ context.Context = (*detached)(nil)

func (d *detached) Deadline() (time.Time, bool) { return d.deadline, !d.deadline.IsZero() }
func (d *detached) Done() <-chan struct{}       { return nil }
func (d *detached) Err() error                  { return nil }
func (d *detached) Value(key any) any           { return d.parent.Value(key) }
