package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

// TestKeysetPagesFollowTheOrder walks widgets page by page from each page's Next position and
// expects exactly the order of one page holding them all, on both stores: mixed directions,
// ties on the sort columns, NULLs in them (placed differently by the two databases), and
// order columns outside the projection.
func TestKeysetPagesFollowTheOrder(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for i := range 47 {
			size, title := fmt.Sprint(i%4), fmt.Sprintf("%q", fmt.Sprint("T", i%3))
			if i%5 == 0 {
				size = "null"
			}
			if i%7 == 0 {
				title = "null"
			}
			made := fmt.Sprintf("2024-03-%02dT10:00:00Z", 1+i%6)
			mustCreate(t, s, w, widget(fmt.Sprintf("K%02d", i),
				fmt.Sprintf(`,"WidgetSize":%s,"WidgetTitle":%s,"WidgetEnabled":%t,"WidgetMade":%q`, size, title, i%2 == 0, made)))
		}
		for _, tc := range []struct {
			kind   request.Kind
			params string
		}{
			{request.KindList, "Sort=WidgetSize"},
			{request.KindList, "Sort=WidgetSize desc"},
			{request.KindList, "Sort=WidgetTitle,WidgetSize desc"},
			{request.KindList, "Sort=WidgetTitle desc,WidgetSize"},
			{request.KindList, "Sort=WidgetEnabled desc,WidgetMade,WidgetCode desc"},
			{request.KindList, "Sort=WidgetMade desc"},
			{request.KindList, "Sort=WidgetIdentifier desc"},
			{request.KindList, ""}, // the default sort
			{request.KindList, "Sort=WidgetSize desc,WidgetTitle&Includes=WidgetCode"},
			{request.KindSearch, "Sort=WidgetTitle,WidgetMade desc"},
			{request.KindList, "Sort=WidgetCode&WidgetEnabled=true"},
		} {
			t.Run(tc.params, func(t *testing.T) {
				all := query(t, w, tc.kind, tc.params+"&Take=50")
				want, total, err := s.List(ctx, w, all, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				q := query(t, w, tc.kind, tc.params+"&Take=4")
				var got []any
				for pages := 0; ; pages++ {
					if pages > len(want) {
						t.Fatal("the walk does not end")
					}
					p, err := s.ListPage(ctx, w, q, engine.AllOrganizations())
					if err != nil {
						t.Fatal(err)
					}
					if p.Total != total {
						t.Errorf("page %d: total %d, want %d", pages+1, p.Total, total)
					}
					for _, rec := range p.Records {
						got = append(got, rec.Get(w, "WidgetIdentifier"))
					}
					if p.Next == nil {
						if len(p.Records) == 4 && len(got) != len(want) {
							t.Errorf("a full page without Next after %d of %d records", len(got), len(want))
						}
						break
					}
					q.After = p.Next
				}
				ids := make([]any, len(want))
				for i, rec := range want {
					ids[i] = rec.Get(w, "WidgetIdentifier")
				}
				if !slices.Equal(got, ids) {
					t.Errorf("keyset walk differs from the order:\n got %v\nwant %v", got, ids)
				}
			})
		}
	})
}

// TestCursorOfRefusesMisfits: a position that does not fit the order's columns is refused.
func TestCursorOfRefusesMisfits(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	sort, err := w.SortTerms([]string{"WidgetSize desc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range [][]any{
		{},
		{nil},
		{"3", "0190a6f0-0000-7000-8000-00000000000a"},
		{nil, nil},
		{true, "0190a6f0-0000-7000-8000-00000000000a"},
		{nil, "0190a6f0-0000-7000-8000-00000000000a", nil},
	} {
		if _, err := w.CursorOf(sort, vals); err == nil {
			t.Errorf("CursorOf(%v) accepted", vals)
		}
	}
	if _, err := w.CursorOf(sort, []any{nil, "0190a6f0-0000-7000-8000-00000000000a"}); err != nil {
		t.Errorf("a NULL size is a position: %v", err)
	}
}
