package reqctx

import (
	"context"
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
	detached        detached // see WithoutCancel
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
	c.detached.c = c
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
	if c, ok := ctx.(*Context); ok && c.detached.c == c {
		return &c.detached
	}
	return context.WithoutCancel(ctx)
}

// detached is a request Context without its parent's cancellation and deadline. Unlike
// context.WithoutCancel's context, it answers the context package's own lookups through the
// request's, so that context.Cause reports the client's cancellation while Err is nil: the
// drivers it is given (pgx, database/sql, modernc) never call Cause, and context.WithCancel,
// WithDeadline and AfterFunc on it read its Done, which is nil.
type detached struct{ c *Context }

var _ context.Context = (*detached)(nil)

func (d *detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (d *detached) Done() <-chan struct{}       { return nil }
func (d *detached) Err() error                  { return nil }
func (d *detached) Value(key any) any           { return d.c.Value(key) }
