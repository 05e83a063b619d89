package reqctx_test

import (
	"context"
	"testing"
	"time"

	"credo/internal/reqctx"
)

type key int

// TestWithFillsTheRequestContext: With adds a value to the request Context itself while a slot
// is free and nothing answers the key, and otherwise leaves it as it is and returns a derived
// context, as context.WithValue.
func TestWithFillsTheRequestContext(t *testing.T) {
	parent := context.WithValue(context.Background(), key(100), "parent's")
	c := reqctx.New(parent)
	for i := range reqctx.Slots {
		if got := reqctx.With(c, key(i), i); got != context.Context(c) {
			t.Fatalf("With of slot %d returned %v, want the request context itself", i, got)
		}
	}
	for i := range reqctx.Slots {
		if got := c.Value(key(i)); got != i {
			t.Errorf("Value(%d) = %v, want %d", i, got, i)
		}
	}
	if got := c.Value(key(100)); got != "parent's" {
		t.Errorf("the parent's value is %v, want parent's", got)
	}
	tests := []struct {
		name string
		ctx  context.Context
		key  key
	}{
		{name: "no free slot", ctx: c, key: key(50)},
		{name: "a key the parent answers", ctx: reqctx.New(parent), key: key(100)},
		{name: "a key a slot answers", ctx: reqctx.New(context.Background()), key: key(0)},
		{name: "a context derived from the request's", ctx: context.WithoutCancel(reqctx.New(context.Background())), key: key(1)},
		{name: "a context of another kind", ctx: context.Background(), key: key(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "a key a slot answers" {
				reqctx.With(tt.ctx, key(0), "first")
			}
			before := tt.ctx.Value(tt.key)
			got := reqctx.With(tt.ctx, tt.key, "new")
			if got == tt.ctx {
				t.Fatal("With returned the context it was given")
			}
			if v := got.Value(tt.key); v != "new" {
				t.Errorf("the returned context answers %v, want new", v)
			}
			if v := tt.ctx.Value(tt.key); v != before {
				t.Errorf("the context given now answers %v, want %v as before", v, before)
			}
		})
	}
}

// TestContextKeepsItsParentsCancellation: a request Context is done when its parent is, with
// the parent's deadline and error, and contexts derived from it are cancelled with it.
func TestContextKeepsItsParentsCancellation(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.Background(), deadline)
	c := reqctx.New(parent)
	child, stop := context.WithCancel(c)
	defer stop()
	if d, ok := c.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline() = %v, %v, want the parent's %v", d, ok, deadline)
	}
	cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived from the request's was not cancelled with its parent")
	}
	if c.Err() != context.Canceled || child.Err() != context.Canceled {
		t.Errorf("Err() = %v and %v, want context.Canceled", c.Err(), child.Err())
	}
}

// TestWithoutCancel: a request Context without its cancellation and deadline answers the
// values of its slots and of its parent, also those added after it was made, and never ends;
// it is a part of the request Context (no allocation). Another context gets
// context.WithoutCancel's.
func TestWithoutCancel(t *testing.T) {
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key(100), "parent's"), time.Hour)
	c := reqctx.New(parent)
	reqctx.With(c, key(0), "slot's")
	d := reqctx.WithoutCancel(c)
	reqctx.With(c, key(1), "added after")
	cancel()
	if c.Err() == nil {
		t.Fatal("the request context did not end with its parent")
	}
	if d.Done() != nil || d.Err() != nil {
		t.Errorf("the detached context ends: Done %v, Err %v", d.Done(), d.Err())
	}
	if dl, ok := d.Deadline(); ok {
		t.Errorf("the detached context has the deadline %v", dl)
	}
	for k, want := range map[key]string{0: "slot's", 1: "added after", 100: "parent's"} {
		if got := d.Value(k); got != want {
			t.Errorf("Value(%d) = %v, want %s", k, got, want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = reqctx.WithoutCancel(c) }); n != 0 {
		t.Errorf("WithoutCancel of a request context allocates %v times", n)
	}
	var zero reqctx.Context // not made by New or Init
	other, cancelOther := context.WithCancel(context.WithValue(context.Background(), key(7), "other's"))
	cancelOther()
	for name, ctx := range map[string]context.Context{"another context": other, "a Context not made by New or Init": &zero} {
		d := reqctx.WithoutCancel(ctx)
		if d == ctx || d.Done() != nil || d.Err() != nil {
			t.Errorf("%s: WithoutCancel gave %v (Done %v, Err %v)", name, d, d.Done(), d.Err())
		}
	}
	if got := reqctx.WithoutCancel(other).Value(key(7)); got != "other's" {
		t.Errorf("another context's value: %v", got)
	}
}

// TestWithoutCancelUntil: a context with the values of its parent, the deadline given and no
// cancellation. The first of a request Context is a part of it (no allocation); the next ones
// are new and leave the first as it was, for a goroutine that may still hold it.
func TestWithoutCancelUntil(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key(100), "parent's"))
	c := reqctx.New(parent)
	reqctx.With(c, key(0), "slot's")
	d1 := time.Now().Add(time.Minute)
	first := reqctx.WithoutCancelUntil(c, d1)
	// AllocsPerRun calls its function once more than it measures, each call on a new request.
	const runs = 10
	fresh := make([]*reqctx.Context, runs+1)
	for i := range fresh {
		fresh[i] = reqctx.New(parent)
	}
	if n := testing.AllocsPerRun(runs, func() {
		_ = reqctx.WithoutCancelUntil(fresh[0], d1)
		fresh = fresh[1:]
	}); n != 0 {
		t.Errorf("the first WithoutCancelUntil of a request context allocates %v times", n)
	}
	d2 := d1.Add(time.Minute)
	second := reqctx.WithoutCancelUntil(c, d2)
	if second == first {
		t.Fatal("the second context of a request is the first")
	}
	cancel()
	for i, tc := range []struct {
		ctx  context.Context
		want time.Time
	}{{first, d1}, {second, d2}} {
		if dl, ok := tc.ctx.Deadline(); !ok || !dl.Equal(tc.want) {
			t.Errorf("context %d: deadline %v, %v; want %v", i+1, dl, ok, tc.want)
		}
		if tc.ctx.Done() != nil || tc.ctx.Err() != nil {
			t.Errorf("context %d ends: Done %v, Err %v", i+1, tc.ctx.Done(), tc.ctx.Err())
		}
		for k, want := range map[key]string{0: "slot's", 100: "parent's"} {
			if got := tc.ctx.Value(k); got != want {
				t.Errorf("context %d: Value(%d) = %v, want %s", i+1, k, got, want)
			}
		}
	}
	other := reqctx.WithoutCancelUntil(parent, d1)
	if dl, _ := other.Deadline(); !dl.Equal(d1) || other.Done() != nil || other.Value(key(100)) != "parent's" {
		t.Errorf("of another context: deadline %v, Done %v, value %v", dl, other.Done(), other.Value(key(100)))
	}
}

// TestWithoutCancelUntilConcurrently: of the contexts that goroutines take at once from one
// request Context, exactly one is the request's own.
func TestWithoutCancelUntilConcurrently(t *testing.T) {
	c := reqctx.New(context.Background())
	const n = 8
	got := make(chan context.Context, n)
	for range n {
		go func() { got <- reqctx.WithoutCancelUntil(c, time.Now().Add(time.Minute)) }()
	}
	seen := map[context.Context]bool{}
	for range n {
		seen[<-got] = true
	}
	if len(seen) != n {
		t.Errorf("%d goroutines got %d distinct contexts", n, len(seen))
	}
}
