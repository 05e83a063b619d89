package engine

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"credo/resources"
)

// The hot reads reuse one plan per shape, and shapes whose values are rewritten on the way
// (datetimes, substrings) are built anew every time.
func TestPlansAreReusedPerShape(t *testing.T) {
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+t.TempDir(), []string{"p1"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.Store("p1")
	w := reg.MustByName("Widget")
	org := "0190a6f0-0000-7000-8000-00000000000a"
	d, err := w.DecodeDraft([]byte(`{"OrganizationIdentifier":"` + org + `","WidgetCode":"P1","WidgetMade":"2024-03-10T14:30:00-06:00"}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Create(ctx, w, d, AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	key := []any{rec.Get(w, "WidgetIdentifier")}
	for range 2 {
		if _, err := s.Get(ctx, w, key, nil, Organization(org)); err != nil {
			t.Fatal(err)
		}
	}
	p := s.plans.plans[keyPlan(planGet, w, w.Output, org)]
	if p == nil || len(p.slots) < 2 {
		t.Fatalf("get has no reusable plan: %+v", p)
	}
	if _, err := s.Get(ctx, w, []any{"0190a6f0-0000-7000-8000-0000000000ff"}, nil, Organization(org)); !IsNotFound(err) {
		t.Errorf("a planned get of a missing key: %v", err)
	}
	if _, err := s.Get(ctx, w, key, nil, Organization("0190a6f0-0000-7000-8000-0000000000bb")); !IsNotFound(err) {
		t.Errorf("a planned get in another organization: %v", err)
	}
	q := filtered(t, w, "WidgetCode", "P1")
	if recs, n, err := s.List(ctx, w, q, AllOrganizations()); err != nil || n != 1 || len(recs) != 1 {
		t.Fatalf("list: %v %d %v", recs, n, err)
	}
	peeked := q
	peeked.peek = true // a list reads one row beyond the page
	if s.plans.plans[queryPlan(planList, w, peeked)] == nil {
		t.Error("an equality list has no plan")
	}
	q = filtered(t, w, "WidgetMade", "2024-03-10T20:30:00Z")
	if k := queryPlan(planList, w, q); k.plannable || s.planned(k) != nil {
		t.Error("a datetime filter must not be planned: its value is rewritten")
	}
	if recs, _, err := s.List(ctx, w, q, AllOrganizations()); err != nil || len(recs) != 1 {
		t.Fatalf("unplanned list: %v %v", recs, err)
	}
}

// filtered is the first page of r's records whose filter param is value, as a list request
// with that one parameter asks.
func filtered(t *testing.T, r *Resource, param, value string) Query {
	t.Helper()
	f, ok := r.Filter(param)
	if !ok {
		t.Fatalf("%s has no filter %s", r.Name, param)
	}
	v, err := f.Field.ParseText(value)
	if err != nil {
		t.Fatal(err)
	}
	return Query{Conds: []Cond{{Field: f.Field, Op: f.Op, Value: v}}, Page: 1, Take: DefaultTake,
		Sort: r.DefaultSort, Fields: r.Output, Format: FormatJSON}
}

// TestPlainJSONStringAgreesWithEncodingJSON: the fast path for member strings reads what
// encoding/json reads, or steps aside.
func TestPlainJSONStringAgreesWithEncodingJSON(t *testing.T) {
	for raw, fast := range map[string]bool{`""`: true, `"plain"`: true, `"é漢🎓"`: true, `"a\"b"`: false,
		`"\u00e9t\u00e9"`: false, "\"bad \xff utf-8\"": false, `"tab\tescaped"`: false, `5`: false, `null`: false} {
		got, ok := plainJSONString([]byte(raw))
		if ok != fast {
			t.Errorf("%s: fast path %v, want %v", raw, ok, fast)
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); ok && (err != nil || got != want) {
			t.Errorf("%s: fast path read %q, encoding/json %q (%v)", raw, got, want, err)
		}
	}
}
