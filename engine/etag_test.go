package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"testing/fstest"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

func conditional(w *engine.Resource, tags ...string) (context.Context, *engine.Condition) {
	c := &engine.Condition{IfMatch: tags}
	return engine.WithCondition(context.Background(), w, c), c
}

// TestIfMatch: a stale If-Match refuses PUT, PATCH and DELETE with ErrPrecondition and leaves
// the record as it was; a matching one (or "*") succeeds and reports the new ETag, the one a
// get then computes; a missing record stays ErrNotFound.
func TestIfMatch(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	all := engine.AllOrganizations()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		rec := mustCreate(t, s, w, widget("E1", `,"WidgetSize":1`))
		key := []any{rec.Get(w, "WidgetIdentifier")}
		get := func() engine.Record {
			t.Helper()
			got, err := s.Get(context.Background(), w, key, nil, all)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		first := w.ETag(get())
		if first != w.ETag(rec) {
			t.Fatalf("create's ETag %s, get's %s", w.ETag(rec), first)
		}
		ctx, c := conditional(w, first)
		if err := testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetSize":2}`), all); err != nil {
			t.Fatal(err)
		}
		second := w.ETag(get())
		if c.ETag != second || second == first {
			t.Fatalf("patch reported ETag %s; get's %s, before %s", c.ETag, second, first)
		}
		stale := []struct {
			name string
			do   func(context.Context) error
		}{
			{"PUT", func(ctx context.Context) error {
				return testenv.UpdateJSON(ctx, s, w, key, []byte(widget("E1", `,"WidgetSize":9`)), all)
			}},
			{"PATCH", func(ctx context.Context) error {
				return testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetSize":9}`), all)
			}},
			{"DELETE", func(ctx context.Context) error { return s.Delete(ctx, w, key, all) }},
		}
		for _, op := range stale {
			ctx, _ := conditional(w, first)
			if err := op.do(ctx); !errors.Is(err, engine.ErrPrecondition) {
				t.Errorf("%s with a stale If-Match: %v, want ErrPrecondition", op.name, err)
			}
			if got := w.ETag(get()); got != second {
				t.Errorf("%s refused changed the record: ETag %s, want %s", op.name, got, second)
			}
		}
		ctx, c = conditional(w, `"other"`, second)
		if err := testenv.UpdateJSON(ctx, s, w, key, []byte(widget("E1", `,"WidgetSize":3`)), all); err != nil {
			t.Fatal(err)
		}
		if c.ETag != w.ETag(get()) {
			t.Fatalf("PUT reported ETag %s, get's %s", c.ETag, w.ETag(get()))
		}
		ctx, _ = conditional(w, "*")
		if err := s.Delete(ctx, w, key, all); err != nil {
			t.Fatalf("DELETE with If-Match *: %v", err)
		}
		ctx, _ = conditional(w, "*")
		if err := testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetSize":9}`), all); !engine.IsNotFound(err) {
			t.Fatalf("PATCH of a missing record with If-Match *: %v, want ErrNotFound", err)
		}
	})
}

// TestConcurrentConditionalPatches: 50 goroutines each patch one record carrying the ETag
// they all read: exactly one succeeds. Then 5 clients each add 20 with a retry loop (read,
// patch with If-Match, re-read on ErrPrecondition): no increment is lost.
func TestConcurrentConditionalPatches(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	all := engine.AllOrganizations()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		rec := mustCreate(t, s, w, widget("C1", `,"WidgetSize":0`))
		key := []any{rec.Get(w, "WidgetIdentifier")}
		read := func() (int64, string, error) {
			got, err := s.Get(context.Background(), w, key, nil, all)
			if err != nil {
				return 0, "", err
			}
			return toInt(got.Get(w, "WidgetSize")), w.ETag(got), nil
		}
		size, tag, err := read()
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		won, sum := 0, int64(0)
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				ctx, _ := conditional(w, tag)
				n := int64(i + 1)
				err := testenv.PatchJSON(ctx, s, w, key, fmt.Appendf(nil, `{"WidgetSize":%d}`, size+n), all)
				switch {
				case err == nil:
					mu.Lock()
					won++
					sum += n
					mu.Unlock()
				case !errors.Is(err, engine.ErrPrecondition):
					t.Errorf("patch %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		final, _, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if won != 1 || final != size+sum {
			t.Fatalf("50 patches carrying one ETag: %d succeeded, final %d, want 1 and %d", won, final, size+sum)
		}
		const clients, rounds = 5, 20
		for range clients {
			wg.Go(func() {
				for range rounds {
					for {
						v, tag, err := read()
						if err != nil {
							t.Error(err)
							return
						}
						ctx, _ := conditional(w, tag)
						err = testenv.PatchJSON(ctx, s, w, key, fmt.Appendf(nil, `{"WidgetSize":%d}`, v+1), all)
						if err == nil {
							break
						}
						if !errors.Is(err, engine.ErrPrecondition) {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if got, _, _ := read(); got != final+clients*rounds {
			t.Fatalf("%d clients × %d retried increments: %d, want %d", clients, rounds, got, final+clients*rounds)
		}
	})
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int:
		return int64(n)
	}
	panic(fmt.Sprintf("not an int: %T", v))
}

// gadgets is a fixture resource whose one write-only member makes it have as many output
// members as stored fields, one of them computed.
var gadgets = fstest.MapFS{"gadgets.yaml": {Data: []byte(`name: Gadget
table: gadgets
key: [GadgetIdentifier]
fields:
  - {name: GadgetIdentifier, type: uuid}
  - {name: PartIdentifier, type: uuid, nullable: true}
  - {name: GadgetSecret, type: string, nullable: true, writeOnly: true}
computed:
  - {name: PartName, type: string, output: true, lookup: {from: WidgetPart, local: PartIdentifier, remote: PartIdentifier, field: PartName}}
`)}}

// TestWritesAnswerWhatAGetReads: the record a create returns and the ETag a conditional PUT or
// PATCH reports are those a get then reads, for a resource whose output members are all
// stored (WidgetPart: written from memory, the If-Match checked on the locked row) and for
// one with a computed output member (Gadget: read back). Gadget has as many output members
// as stored fields: a create once took that for "all stored" and answered no PartName.
func TestWritesAnswerWhatAGetReads(t *testing.T) {
	reg, err := engine.Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"), gadgets)
	if err != nil {
		t.Fatal(err)
	}
	parts, gadget := reg.MustByName("WidgetPart"), reg.MustByName("Gadget")
	all := engine.AllOrganizations()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		part := mustCreate(t, s, parts, `{"PartName":"Gear"}`)
		pid := part.Get(parts, "PartIdentifier").(string)
		g := mustCreate(t, s, gadget, fmt.Sprintf(`{"PartIdentifier":%q,"GadgetSecret":"s3cret"}`, pid))
		if got := g.Get(gadget, "PartName"); got != "Gear" {
			t.Errorf("create answered PartName %v, want Gear", got)
		}
		for _, c := range []struct {
			r          *engine.Resource
			key        []any
			put, patch string
		}{
			{parts, []any{pid}, `{"PartName":"Cog"}`, `{"PartName":"Sprocket"}`},
			{gadget, []any{g.Get(gadget, "GadgetIdentifier")}, fmt.Sprintf(`{"PartIdentifier":%q}`, pid), `{"GadgetSecret":"other"}`},
		} {
			tag := func() string {
				t.Helper()
				got, err := s.Get(context.Background(), c.r, c.key, nil, all)
				if err != nil {
					t.Fatal(err)
				}
				return c.r.ETag(got)
			}
			before := tag()
			for _, w := range []struct {
				name string
				do   func(context.Context) error
			}{
				{"PUT", func(ctx context.Context) error { return testenv.UpdateJSON(ctx, s, c.r, c.key, []byte(c.put), all) }},
				{"PATCH", func(ctx context.Context) error { return testenv.PatchJSON(ctx, s, c.r, c.key, []byte(c.patch), all) }},
			} {
				ctx, _ := conditional(c.r, `"stale"`)
				if err := w.do(ctx); !errors.Is(err, engine.ErrPrecondition) {
					t.Errorf("%s %s with a stale If-Match: %v, want ErrPrecondition", c.r.Name, w.name, err)
				}
				ctx, cond := conditional(c.r, before)
				if err := w.do(ctx); err != nil {
					t.Fatalf("%s %s with the current ETag: %v", c.r.Name, w.name, err)
				}
				if after := tag(); cond.ETag != after {
					t.Errorf("%s %s reported ETag %s, a get reads %s", c.r.Name, w.name, cond.ETag, after)
				} else {
					before = after
				}
			}
		}
	})
}
