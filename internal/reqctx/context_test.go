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
