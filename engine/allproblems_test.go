package engine_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestWriteNamesEveryProblem: one refused create, PUT or PATCH names every problem of its
// body that needs no database, each with the message it has alone: the members that did not
// decode (a wrong type, a text rule, a datetime out of range, a name given twice or that is no
// member) and the problems of the members that did (required, null, the nil UUID in a
// required reference, a validate rule, another organization, a key differing from the path).
// A member that did not decode is not also missing. Both stores; nothing is written.
func TestWriteNamesEveryProblem(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	other := "0190a6f0-0000-7000-8000-0000000000ff"
	bad := `"WidgetSize":"big","WidgetTitle":"a\u0000b","WidgetMade":"9999-12-31T23:00:00-02:00","Colour":"red",` +
		`"WidgetEmail":"not-an-email","WidgetEnabled":null`
	decodeProblems := map[string][]string{
		"WidgetSize":    {"WidgetSize must be an integer"},
		"WidgetTitle":   {"WidgetTitle contains U+0000 (NUL), which cannot be stored"},
		"WidgetMade":    nil, // the datetime's range message, checked to be there
		"Colour":        {"Colour is not a member of Widget"},
		"WidgetEmail":   {`WidgetEmail does not satisfy "email"`},
		"WidgetEnabled": {"WidgetEnabled cannot be null"},
	}
	want := func(extra map[string][]string) map[string][]string {
		m := map[string][]string{}
		for k, v := range decodeProblems {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	check := func(t *testing.T, what string, err error, want map[string][]string) {
		t.Helper()
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("%s: %v, want a ValidationError", what, err)
		}
		for m, msgs := range want {
			if msgs == nil {
				if len(verr.Fields[m]) != 1 {
					t.Errorf("%s: %s has %q, want one problem", what, m, verr.Fields[m])
				}
				verr.Fields[m] = nil
			}
		}
		if !reflect.DeepEqual(verr.Fields, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, verr.Fields, want)
		}
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		org := engine.Organization(wOrgA)

		// Create: WidgetCode missing, the organization another one.
		body := fmt.Sprintf(`{"OrganizationIdentifier":%q,%s}`, other, bad)
		_, err := testenv.CreateJSON(ctx, s, w, []byte(body), org)
		check(t, "create", err, want(map[string][]string{
			"WidgetCode":             {"WidgetCode is required"},
			"OrganizationIdentifier": {"OrganizationIdentifier must be your organization (" + wOrgA + ")"},
		}))
		// A member that does not decode is not also missing: WidgetCode is given, as a number.
		_, err = testenv.CreateJSON(ctx, s, w, []byte(`{"OrganizationIdentifier":"00000000-0000-0000-0000-000000000000","WidgetCode":7,`+bad+`}`), engine.AllOrganizations())
		check(t, "create with a required member of the wrong type", err, want(map[string][]string{
			"WidgetCode":             {"WidgetCode must be a string"},
			"OrganizationIdentifier": {"OrganizationIdentifier is required and cannot be the nil UUID 00000000-0000-0000-0000-000000000000"},
		}))
		// A name given twice is its one problem.
		_, err = testenv.CreateJSON(ctx, s, w, []byte(`{"WidgetCode":"A","WidgetCode":"B","WidgetSize":"x"}`), engine.AllOrganizations())
		check(t, "create with a member given twice", err, map[string][]string{
			"WidgetCode":             {"WidgetCode is given more than once; give it once"},
			"WidgetSize":             {"WidgetSize must be an integer"},
			"OrganizationIdentifier": {"OrganizationIdentifier is required"},
		})

		rec := mustCreate(t, s, w, widget("KEEP", ""))
		id := rec.Get(w, "WidgetIdentifier").(string)
		key := []any{id}
		// PUT: the body's key differs from the path, WidgetCode missing.
		body = fmt.Sprintf(`{"WidgetIdentifier":%q,"OrganizationIdentifier":%q,%s}`, engine.NewID(), wOrgA, bad)
		err = testenv.UpdateJSON(ctx, s, w, key, []byte(body), org)
		got := want(map[string][]string{"WidgetCode": {"WidgetCode is required"}})
		var verr *engine.ValidationError
		if errors.As(err, &verr) && len(verr.Fields["WidgetIdentifier"]) == 1 {
			got["WidgetIdentifier"] = verr.Fields["WidgetIdentifier"]
		} else {
			t.Errorf("put: %v does not name the key differing from the path", err)
		}
		check(t, "put", err, got)
		// PATCH: the organization another one; members it omits are the stored ones.
		body = fmt.Sprintf(`{"OrganizationIdentifier":%q,%s}`, other, bad)
		err = testenv.PatchJSON(ctx, s, w, key, []byte(body), org)
		check(t, "patch", err, want(map[string][]string{
			"OrganizationIdentifier": {"OrganizationIdentifier must be your organization (" + wOrgA + ")"},
		}))
		// A missing record is a 404 first, whatever the body.
		for _, verb := range []func(context.Context, *engine.Store, *engine.Resource, []any, []byte, engine.Scope) error{testenv.UpdateJSON, testenv.PatchJSON} {
			if err := verb(ctx, s, w, []any{engine.NewID()}, []byte(body), org); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("a write of a missing record: %v, want not found", err)
			}
		}
		stored, err := s.Get(ctx, w, key, nil, engine.AllOrganizations())
		if err != nil || stored.Get(w, "WidgetCode") != "KEEP" || stored.Get(w, "WidgetSize") != nil {
			t.Errorf("after the refused writes: %v, %v; want the record unchanged", stored, err)
		}
		n, err := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations())
		if err != nil || n != 1 {
			t.Errorf("count after refused creates = %d, %v; want 1", n, err)
		}
	})
}

// TestInsertAllNamesEveryProblemOfARow: a bulk insert (credo load's engine) reports a row's
// members that did not decode with the problems of its members that did, as a create does.
func TestInsertAllNamesEveryProblemOfARow(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		drafts, err := w.DecodeArray([]byte(`[{"WidgetCode":"A","OrganizationIdentifier":"` + wOrgA + `"},{"WidgetSize":true,"WidgetEmail":"x"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if drafts[1].Problems() == nil {
			t.Error("the second row's draft carries no problem")
		}
		err = s.InsertAll(context.Background(), w, drafts, engine.AllOrganizations())
		var bulk *engine.BulkError
		if !errors.As(err, &bulk) {
			t.Fatalf("insert: %v, want a BulkError", err)
		}
		want := []engine.RowError{
			{Row: 1, Member: "OrganizationIdentifier", Msg: "OrganizationIdentifier is required"},
			{Row: 1, Member: "WidgetCode", Msg: "WidgetCode is required"},
			{Row: 1, Member: "WidgetEmail", Msg: `WidgetEmail does not satisfy "email"`},
			{Row: 1, Member: "WidgetSize", Msg: "WidgetSize must be an integer"},
		}
		if !reflect.DeepEqual(bulk.Problems.List(), want) {
			t.Errorf("problems:\n got %v\nwant %v", bulk.Problems.List(), want)
		}
	})
}
