package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"credo/engine"
)

// TestWritesHoldSetValuesToTheMemberRules: a draft built by code (Set, DraftOf, a bulk load's
// rows, SetMatching) is held to the rules a decoded body is — a string's text (NUL, invalid
// UTF-8) and maxLength, an int's 32 bits — by every verb, on both stores: a *ValidationError
// naming the member, and nothing written. Before, Set checked the Go type alone, and a
// 21-character WidgetCode (maxLength 20) was stored.
func TestWritesHoldSetValuesToTheMemberRules(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	code, _ := w.Member("WidgetCode")
	title, _ := w.Member("WidgetTitle")
	size, _ := w.Member("WidgetSize")
	bad := []struct {
		member string
		v      any
		msg    string
	}{
		{"WidgetCode", strings.Repeat("é", 21), "WidgetCode is 21 characters long; the maximum is 20"},
		{"WidgetTitle", "a\x00b", "WidgetTitle contains U+0000 (NUL), which cannot be stored"},
		{"WidgetTitle", "a\xffb", "WidgetTitle is not valid UTF-8 text"},
		{"WidgetTitle", strings.Repeat("x", engine.MaxStringLength+1), "WidgetTitle is 4001 characters long; the maximum is 4000"},
		{"WidgetSize", int64(1) << 31, "WidgetSize is 2147483648, outside the 32-bit integers"},
	}
	draft := func(t *testing.T, c string, member string, v any) engine.Draft {
		t.Helper()
		d, err := w.DraftOf(map[string]any{"OrganizationIdentifier": wOrgA, "WidgetCode": c})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Set(member, v); err != nil {
			t.Fatal(err)
		}
		return d
	}
	wantProblem := func(t *testing.T, verb string, err error, msg string) {
		t.Helper()
		var verr *engine.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("%s: %v, want a ValidationError", verb, err)
		}
		if !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "Widget") {
			t.Errorf("%s: %v, want %q naming the resource", verb, err, msg)
		}
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx, all := context.Background(), engine.AllOrganizations()
		stored := mustCreate(t, s, w, widget("KEEP", `,"WidgetTitle":"kept","WidgetSize":3`))
		key := []any{stored[w.Key[0].Index]}
		for _, c := range bad {
			t.Run(c.msg[:20], func(t *testing.T) {
				_, err := s.Create(ctx, w, draft(t, "NEW", c.member, c.v), all)
				wantProblem(t, "create", err, c.msg)
				err = s.Update(ctx, w, key, draft(t, "KEEP", c.member, c.v), all)
				wantProblem(t, "update", err, c.msg)
				p := w.NewDraft()
				if err := p.Set(c.member, c.v); err != nil {
					t.Fatal(err)
				}
				wantProblem(t, "patch", s.Patch(ctx, w, key, p, all), c.msg)
				err = s.InsertAll(ctx, w, []engine.Draft{draft(t, "BULK", c.member, c.v)}, all)
				var bulk *engine.BulkError
				if !errors.As(err, &bulk) || len(bulk.Problems.List()) != 1 ||
					bulk.Problems.List()[0].Member != c.member || bulk.Problems.List()[0].Msg != c.msg {
					t.Errorf("bulk: %v, want the row's problem %q", err, c.msg)
				}
				f, _ := w.Member(c.member)
				_, err = s.SetMatching(ctx, w, engine.Query{Conds: []engine.Cond{{Field: code, Op: engine.MatchEq, Value: "KEEP"}}},
					map[*engine.Field]any{f: c.v}, all)
				wantProblem(t, "set", err, c.msg)
			})
		}
		if n, err := s.Count(ctx, w, engine.Query{}, all); err != nil || n != 1 {
			t.Errorf("%d widgets, %v; want only the one created first", n, err)
		}
		got, err := s.Get(ctx, w, key, nil, all)
		if err != nil || got[title.Index] != "kept" || got[code.Index] != "KEEP" || got[size.Index] != int64(3) {
			t.Errorf("the stored widget changed: %v, %v", got, err)
		}
		// The rules hold what the write gives: a value at the limit is stored, and a patch of
		// other members does not judge the stored ones.
		ok := draft(t, strings.Repeat("é", 20), "WidgetTitle", strings.Repeat("x", engine.MaxStringLength))
		if _, err := s.Create(ctx, w, ok, all); err != nil {
			t.Errorf("create at the limits: %v", err)
		}
		_, err = s.SetMatching(ctx, w, engine.Query{Conds: []engine.Cond{{Field: code, Op: engine.MatchEq, Value: "KEEP"}}},
			map[*engine.Field]any{title: nil}, all)
		if err != nil {
			t.Errorf("set a nullable member to null: %v", err)
		}
		_, err = s.SetMatching(ctx, w, engine.Query{}, map[*engine.Field]any{code: nil}, all)
		wantProblem(t, "set null", err, "WidgetCode cannot be null")
	})
}

// TestReadOnlyEchoHeldToTheMemberRules: a read-only member that an API body echoes back is
// dropped, but still held to the member's rules, as every member of a body is: a GroupSlug
// of 4,001 characters is a problem of the draft, not silently let through.
func TestReadOnlyEchoHeldToTheMemberRules(t *testing.T) {
	g := loadGroups(t).MustByName("Group")
	for slug, want := range map[string]string{
		strings.Repeat("s", engine.MaxStringLength):   "",
		strings.Repeat("s", engine.MaxStringLength+1): "GroupSlug is 4001 characters long; the maximum is 4000",
	} {
		d, err := g.DecodeDraft([]byte(`{"GroupSlug":"` + slug + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Problems(); (got == nil) != (want == "") || got != nil && !strings.Contains(got.Error(), want) {
			t.Errorf("a GroupSlug of %d characters: %v, want %q", len(slug), got, want)
		}
		if d.Given("GroupSlug") {
			t.Errorf("a read-only GroupSlug of %d characters was kept", len(slug))
		}
	}
}
