package engine_test

import (
	"context"
	"errors"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestZeroScopeIsRefused pins that no verb reads or writes with the zero Scope: forgetting
// the scope never silently means every organization.
func TestZeroScopeIsRefused(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		key := []any{mustCreate(t, s, w, widget("Z1", "")).Get(w, "WidgetIdentifier")}
		var none engine.Scope
		q := engine.Query{Page: 1, Take: 5, Sort: w.DefaultSort, Fields: w.Output}
		d, err := w.DecodeDraft([]byte(widget("Z2", "")))
		if err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"get":    func() error { _, err := s.Get(ctx, w, key, nil, none); return err }(),
			"exists": func() error { _, err := s.Exists(ctx, w, key, none); return err }(),
			"create": func() error { _, err := testenv.CreateJSON(ctx, s, w, []byte(widget("Z3", "")), none); return err }(),
			"draft":  func() error { _, err := s.Create(ctx, w, d, none); return err }(),
			"bulk":   s.InsertAll(ctx, w, []engine.Draft{d}, none),
			"update": testenv.UpdateJSON(ctx, s, w, key, []byte(widget("Z4", "")), none),
			"patch":  testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetSize":1}`), none),
			"delete": s.Delete(ctx, w, key, none),
			"count":  func() error { _, err := s.Count(ctx, w, engine.Query{}, none); return err }(),
			"list":   func() error { _, _, err := s.List(ctx, w, q, none); return err }(),
			"stream": s.Stream(ctx, w, q, none, func(engine.Record) error { return nil }),
			"delete matching": func() error {
				_, err := s.DeleteMatching(ctx, w, engine.Query{}, none)
				return err
			}(),
			"one organization of none": s.Delete(ctx, w, key, engine.Organization("")),
		} {
			if !errors.Is(err, engine.ErrNoScope) {
				t.Errorf("%s with the zero Scope: %v, want ErrNoScope", name, err)
			}
		}
		if n, err := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); err != nil || n != 1 {
			t.Errorf("after refused writes: %d records (%v), want the one created", n, err)
		}
	})
}

func TestScopeIncludes(t *testing.T) {
	const a, b = "0190a6f0-0000-7000-8000-00000000000a", "0190a6f0-0000-7000-8000-00000000000b"
	for _, tc := range []struct {
		scope engine.Scope
		org   string
		want  bool
	}{
		{engine.AllOrganizations(), a, true},
		{engine.AllOrganizations(), "", true},
		{engine.Organization(a), a, true},
		{engine.Organization(a), b, false},
		{engine.Organization(a), "", false},
		{engine.Scope{}, "", false},
		{engine.Scope{}, a, false},
	} {
		if got := tc.scope.Includes(tc.org); got != tc.want {
			t.Errorf("%v includes %q: %v, want %v", tc.scope, tc.org, got, tc.want)
		}
	}
}
