package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
	"credo/resources"
)

const (
	wOrgA = "0190a6f0-0000-7000-8000-00000000000a"
	wOrgB = "0190a6f0-0000-7000-8000-00000000000b"
)

func fixtureRegistry(t testing.TB) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// eachStore runs fn on a fresh partition of every backend.
func eachStore(t *testing.T, reg *engine.Registry, fn func(t *testing.T, s *engine.Store)) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			fn(t, s)
		})
	}
}

func mustCreate(t *testing.T, s *engine.Store, r *engine.Resource, body string) engine.Record {
	t.Helper()
	rec, err := testenv.CreateJSON(context.Background(), s, r, []byte(body), engine.AllOrganizations())
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return rec
}

func widget(code string, extra string) string {
	return fmt.Sprintf(`{"OrganizationIdentifier":%q,"WidgetCode":%q%s}`, wOrgA, code, extra)
}

func TestStoreCreateGetRoundTrip(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		rec := mustCreate(t, s, w, widget("A1", `,"WidgetTitle":"Blue \"one\"","WidgetEnabled":true,"WidgetSize":-3,"WidgetMade":"2024-03-10T14:30:00.1234567-06:00"`))
		id := rec.Get(w, "WidgetIdentifier").(string)
		if !strings.HasPrefix(id, "01") || len(id) != 36 {
			t.Errorf("new key %q is not a UUIDv7", id)
		}
		got, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"WidgetIdentifier":%q,"OrganizationIdentifier":%q,"WidgetCode":"A1","WidgetTitle":"Blue \"one\"","WidgetEnabled":true,"WidgetSize":-3,"WidgetMade":"2024-03-10T14:30:00.1234567-06:00","WidgetEmail":null,"PartIdentifier":null,"PartName":null}`, id, wOrgA)
		if js := string(engine.AppendJSON(nil, got, w.Output)); js != want {
			t.Errorf("get:\n got %s\nwant %s", js, want)
		}
		if _, err := s.Get(ctx, w, []any{id}, nil, engine.Organization(wOrgB)); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("get from another organization: %v, want ErrNotFound", err)
		}
	})
}

// Texts and uuids read back as written through get and list, on both stores: an empty text is
// not a null one, non-ASCII text keeps its bytes, and a joined member (PartName) and a null
// uuid among set ones keep theirs (pgx hands the scanner these values as bytes).
func TestStoreReadsTextAsWritten(t *testing.T) {
	reg := fixtureRegistry(t)
	w, parts := reg.MustByName("Widget"), reg.MustByName("WidgetPart")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		part := mustCreate(t, s, parts, `{"PartName":"Bolt ☃ \"M6\""}`)
		partID := part.Get(parts, "PartIdentifier").(string)
		empty := mustCreate(t, s, w, widget("E1", fmt.Sprintf(`,"WidgetTitle":"","PartIdentifier":%q`, partID)))
		null := mustCreate(t, s, w, widget("E2", `,"WidgetTitle":null,"WidgetEmail":"a@b.example"`))
		// Each widget's get, as JSON, and the members it must hold as written.
		want := map[string]string{}
		for rec, members := range map[*engine.Record][]string{
			&empty: {`"WidgetTitle":""`, `"PartName":"Bolt ☃ \"M6\""`, fmt.Sprintf(`"PartIdentifier":%q`, partID)},
			&null:  {`"WidgetTitle":null,`, `"PartIdentifier":null,`},
		} {
			id := rec.Get(w, "WidgetIdentifier").(string)
			got, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			js := string(engine.AppendJSON(nil, got, w.Output))
			for _, m := range members {
				if !strings.Contains(js, m) {
					t.Errorf("get: %s lacks %s", js, m)
				}
			}
			want[id] = js
		}
		recs, _, err := s.List(ctx, w, query(t, w, request.KindList, "Take=10&Sort=WidgetCode"), engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Fatalf("list: %d records, want 2", len(recs))
		}
		for _, rec := range recs {
			if js := string(engine.AppendJSON(nil, rec, w.Output)); js != want[rec.Get(w, "WidgetIdentifier").(string)] {
				t.Errorf("list:\n got %s\nget %s", js, want[rec.Get(w, "WidgetIdentifier").(string)])
			}
		}
	})
}

func TestStoreValidation(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	tests := []struct {
		name, body, member string
	}{
		{name: "unknown member", body: widget("A", `,"Colour":"red"`), member: "Colour"},
		{name: "wrong type", body: widget("A", `,"WidgetSize":"big"`), member: "WidgetSize"},
		{name: "out of int32", body: widget("A", `,"WidgetSize":3000000000`), member: "WidgetSize"},
		{name: "no offset", body: widget("A", `,"WidgetMade":"2024-03-10T14:30:00"`), member: "WidgetMade"},
		{name: "null for non-nullable", body: widget("A", `,"WidgetEnabled":null`), member: "WidgetEnabled"},
		{name: "missing required", body: fmt.Sprintf(`{"OrganizationIdentifier":%q}`, wOrgA), member: "WidgetCode"},
		{name: "too long", body: widget(strings.Repeat("x", 21), ""), member: "WidgetCode"},
		{name: "validate tag", body: widget("A", `,"WidgetEmail":"not-an-email"`), member: "WidgetEmail"},
		{name: "bad uuid", body: widget("A", `,"PartIdentifier":"nope"`), member: "PartIdentifier"},
		{name: "nil uuid in a required reference", body: `{"OrganizationIdentifier":"00000000-0000-0000-0000-000000000000","WidgetCode":"A"}`, member: "OrganizationIdentifier"},
		{name: "quoted int", body: widget("A", `,"WidgetSize":"7"`), member: "WidgetSize"},
		{name: "quoted negative zero", body: widget("A", `,"WidgetSize":"-0"`), member: "WidgetSize"},
		{name: "fractional int", body: widget("A", `,"WidgetSize":7.0`), member: "WidgetSize"},
		{name: "repeated member", body: widget("A", `,"WidgetSize":1,"WidgetSize":2`), member: "WidgetSize"},
		{name: "NUL", body: widget("A", `,"WidgetTitle":"a\u0000b"`), member: "WidgetTitle"},
		{name: "lone surrogate", body: widget("A", `,"WidgetTitle":"\udc00"`), member: "WidgetTitle"},
		{name: "invalid UTF-8", body: widget("A", ",\"WidgetTitle\":\"\xc3\x28\""), member: "WidgetTitle"},
		{name: "datetime after 9999 in UTC", body: widget("A", `,"WidgetMade":"9999-12-31T23:00:00-02:00"`), member: "WidgetMade"},
		{name: "datetime before 0001 in UTC", body: widget("A", `,"WidgetMade":"0001-01-01T00:30:00+01:00"`), member: "WidgetMade"},
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		for _, tt := range tests {
			_, err := testenv.CreateJSON(context.Background(), s, w, []byte(tt.body), engine.AllOrganizations())
			var verr *engine.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, engine.ErrInvalid) {
				t.Errorf("%s: err = %v, want a ValidationError", tt.name, err)
				continue
			}
			if _, ok := verr.Fields[tt.member]; !ok {
				t.Errorf("%s: problems %v do not name %s", tt.name, verr.Fields, tt.member)
			}
		}
		n, err := s.Count(context.Background(), w, engine.Query{}, engine.AllOrganizations())
		if err != nil || n != 0 {
			t.Errorf("count after refused creates = %d, %v; want 0 (nothing half-written)", n, err)
		}
	})
}

func TestStoreUniqueConflictNamesTheKey(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		first := mustCreate(t, s, w, widget("DUP", ""))
		_, err := testenv.CreateJSON(ctx, s, w, []byte(widget("DUP", "")), engine.AllOrganizations())
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, engine.ErrConflict) || verr.Fields["WidgetCode"] == nil {
			t.Fatalf("duplicate unique: %v, want a conflict naming WidgetCode", err)
		}
		// The same problems name the same members on both stores (decisions §4): the key when the
		// key collides, whatever else collides with it; a unique constraint alone names its members.
		id := fmt.Sprintf(`,"WidgetIdentifier":%q`, first.Get(w, "WidgetIdentifier"))
		for _, tt := range []struct {
			name, body string
			want       []string
		}{
			{name: "duplicate key", body: widget("OTHER", id), want: []string{"WidgetIdentifier"}},
			{name: "duplicate key and unique constraint", body: widget("DUP", id), want: []string{"WidgetIdentifier"}},
			{name: "duplicate unique constraint", body: widget("DUP", ""), want: []string{"OrganizationIdentifier", "WidgetCode"}},
		} {
			_, err := testenv.CreateJSON(ctx, s, w, []byte(tt.body), engine.AllOrganizations())
			var verr *engine.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, engine.ErrConflict) {
				t.Errorf("%s: %v, want a conflict", tt.name, err)
				continue
			}
			if got := verr.Members(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("%s: the problem names %v, want %v", tt.name, got, tt.want)
			}
		}
		// A load that breaks a stored record's unique constraint of several members is refused
		// with the row's problem naming the constraint's members, and writes nothing (the load
		// looks the pairs up; before, the database's refusal of the whole load was the answer).
		drafts, err := w.DecodeArray([]byte("[" + widget("NEW1", "") + "," + widget("DUP", "") + "]"))
		if err != nil {
			t.Fatal(err)
		}
		var bulk *engine.BulkError
		err = s.InsertAll(ctx, w, drafts, engine.AllOrganizations())
		if !errors.As(err, &bulk) || len(bulk.Problems.List()) != 1 || bulk.Problems.List()[0].Row != 1 ||
			!strings.Contains(bulk.Problems.List()[0].Msg, "OrganizationIdentifier, WidgetCode") {
			t.Errorf("load breaking a stored unique constraint: %v, want a problem of row 1 naming OrganizationIdentifier, WidgetCode", err)
		}
		// A file that repeats a stored key, or repeats a key itself, loads nothing and names the
		// key at the row (the load reports every problem of the file at once).
		drafts, err = w.DecodeArray([]byte("[" + widget("F1", id) + "]"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InsertAll(ctx, w, drafts, engine.AllOrganizations()); !errors.As(err, &bulk) || len(bulk.Problems.List()) != 1 || bulk.Problems.List()[0].Row != 0 || bulk.Problems.List()[0].Member != "WidgetIdentifier" {
			t.Errorf("load of a stored key: %v, want a problem of row 0 naming WidgetIdentifier", err)
		}
		twice := fmt.Sprintf(`,"WidgetIdentifier":%q`, "0190a6f0-0000-7000-8000-0000000000f1")
		drafts, err = w.DecodeArray([]byte("[" + widget("F2", twice) + "," + widget("F3", twice) + "]"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InsertAll(ctx, w, drafts, engine.AllOrganizations()); !errors.As(err, &bulk) || len(bulk.Problems.List()) != 1 || bulk.Problems.List()[0].Row != 1 || bulk.Problems.List()[0].Member != "WidgetIdentifier" {
			t.Errorf("load repeating a key: %v, want a problem of row 1 naming WidgetIdentifier", err)
		}
		if n, _ := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); n != 1 {
			t.Errorf("%d widgets after refused creates and loads, want 1", n)
		}
	})
}

func TestStoreUpdatePatchDelete(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		rec := mustCreate(t, s, w, widget("U1", `,"WidgetTitle":"T","WidgetSize":5`))
		key := []any{rec.Get(w, "WidgetIdentifier")}
		other := "0190a6f0-0000-7000-8000-0000000000ff"
		if err := testenv.UpdateJSON(ctx, s, w, key, []byte(widget("U1", fmt.Sprintf(`,"WidgetIdentifier":%q`, other))), engine.AllOrganizations()); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("update with another body key: %v, want ErrInvalid", err)
		}
		if err := testenv.UpdateJSON(ctx, s, w, key, []byte(widget("U2", "")), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Get(ctx, w, key, nil, engine.AllOrganizations())
		if got.Get(w, "WidgetCode") != "U2" || got.Get(w, "WidgetTitle") != nil || got.Get(w, "WidgetSize") != nil {
			t.Errorf("update is a full replacement; got %v", got)
		}
		if err := testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetSize":7}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := testenv.PatchJSON(ctx, s, w, key, []byte(`{"WidgetEnabled":null}`), engine.AllOrganizations()); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("patch null into non-nullable: %v, want ErrInvalid", err)
		}
		if err := testenv.PatchJSON(ctx, s, w, key, []byte(`{"OrganizationIdentifier":"00000000-0000-0000-0000-000000000000"}`), engine.AllOrganizations()); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("patch the nil UUID into a required reference: %v, want ErrInvalid", err)
		}
		got, _ = s.Get(ctx, w, key, nil, engine.AllOrganizations())
		if got.Get(w, "WidgetCode") != "U2" || got.Get(w, "WidgetSize") != int64(7) {
			t.Errorf("patch keeps other members; got %v", got)
		}
		missing := []any{other}
		for name, err := range map[string]error{
			"update": testenv.UpdateJSON(ctx, s, w, missing, []byte(widget("X", "")), engine.AllOrganizations()),
			"patch":  testenv.PatchJSON(ctx, s, w, missing, []byte(`{}`), engine.AllOrganizations()),
			"delete": s.Delete(ctx, w, missing, engine.AllOrganizations()),
			"scoped": s.Delete(ctx, w, key, engine.Organization(wOrgB)),
		} {
			if !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("%s of a missing record: %v, want ErrNotFound", name, err)
			}
		}
		if err := s.Delete(ctx, w, key, engine.Organization(wOrgA)); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.Exists(ctx, w, key, engine.AllOrganizations()); ok {
			t.Error("record exists after delete")
		}
	})
}

func query(t *testing.T, r *engine.Resource, kind request.Kind, params string) engine.Query {
	t.Helper()
	v, err := url.ParseQuery(params)
	if err != nil {
		t.Fatal(err)
	}
	q, err := request.ListQuery(r, v, kind)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", params, err)
	}
	return q
}

func TestStorePagingReturnsEveryRecordOnce(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for i := range 50 {
			// Codes collide in the sort order in pairs, so the key tie-breaker matters.
			mustCreate(t, s, w, fmt.Sprintf(`{"OrganizationIdentifier":%q,"WidgetCode":"C%02d","WidgetSize":%d}`, []string{wOrgA, wOrgB}[i%2], i/2, i%3))
		}
		seen := map[any]int{}
		for page := 1; page <= 8; page++ {
			recs, total, err := s.List(ctx, w, query(t, w, request.KindList, fmt.Sprintf("Take=7&Page=%d&Sort=WidgetSize desc", page)), engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			if total != 50 {
				t.Errorf("page %d: total %d, want 50", page, total)
			}
			if want := min(7, 50-(page-1)*7); len(recs) != want {
				t.Errorf("page %d: %d records, want %d", page, len(recs), want)
			}
			for _, r := range recs {
				seen[r.Get(w, "WidgetIdentifier")]++
			}
		}
		if len(seen) != 50 {
			t.Errorf("saw %d distinct records over the pages, want 50", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("record %v seen %d times", id, n)
			}
		}
	})
}

func TestStoreFilters(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	part := reg.MustByName("WidgetPart")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		a := mustCreate(t, s, w, widget("F1", `,"WidgetTitle":"Alpha Beam","WidgetEnabled":true,"WidgetSize":1,"WidgetMade":"2024-03-10T14:30:00-06:00"`))
		mustCreate(t, s, w, widget("F2", `,"WidgetTitle":"100% beta_x","WidgetSize":2,"WidgetMade":"2024-03-10T21:00:00+01:00"`))
		mustCreate(t, s, w, widget("F3", `,"WidgetTitle":"gamma","WidgetSize":3,"WidgetMade":"2024-03-11T00:00:00Z"`))
		pid := "0190a6f0-0000-7000-8000-0000000000p1"
		pid = strings.Replace(pid, "p1", "c1", 1)
		d, err := part.DraftOf(map[string]any{"PartIdentifier": pid, "WidgetIdentifier": a.Get(w, "WidgetIdentifier"), "PartName": "Sprocket"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, part, d, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := testenv.PatchJSON(ctx, s, w, []any{a.Get(w, "WidgetIdentifier")}, []byte(fmt.Sprintf(`{"PartIdentifier":%q}`, pid)), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			params string
			codes  string
		}{
			{params: "WidgetCode=F2", codes: "F2"},
			{params: "WidgetCode=f2", codes: ""},
			{params: "WidgetTitle=BEAM", codes: "F1"},
			{params: "WidgetTitle=%25", codes: "F2"},
			{params: "WidgetTitle=a_b", codes: ""},
			{params: "WidgetTitle=beta_x", codes: "F2"},
			{params: "WidgetEnabled=true", codes: "F1"},
			{params: "WidgetSize=3", codes: "F3"},
			{params: "WidgetMade=2024-03-10T20:30:00Z", codes: "F1"},
			{params: "WidgetMade=2024-03-10T21:30:00%2B01:00", codes: "F1"},
			{params: "WidgetMadeSince=2024-03-10T20:30:00Z", codes: "F1,F3"},
			{params: "WidgetMadeBefore=2024-03-10T20:30:00Z", codes: "F2"},
			{params: "WidgetMadeSince=2024-03-10T20:00:00Z&WidgetMadeBefore=2024-03-11T00:00:00Z", codes: "F1,F2"},
			{params: "PartNameLike=sprock", codes: "F1"},
			{params: "Identifier=" + a.Get(w, "WidgetIdentifier").(string), codes: "F1"},
			{params: "Sort=WidgetMade", codes: "F2,F1,F3"},
			{params: "Sort=widgetsize DESC", codes: ""},
			{params: "Sort=WidgetSize DESC", codes: "F3,F2,F1"},
			{params: "Origin.Reason=audit&Filter.Take=2", codes: "F1,F2"},
		}
		for _, tt := range tests {
			v, _ := url.ParseQuery(tt.params)
			q, err := request.ListQuery(w, v, request.KindList)
			if tt.params == "Sort=widgetsize DESC" {
				if !errors.Is(err, engine.ErrInvalid) {
					t.Errorf("%s: sort field names are exact; err = %v", tt.params, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.params, err)
			}
			recs, _, err := s.List(ctx, w, q, engine.AllOrganizations())
			if err != nil {
				t.Fatalf("%s: %v", tt.params, err)
			}
			var codes []string
			for _, r := range recs {
				codes = append(codes, r.Get(w, "WidgetCode").(string))
			}
			if got := strings.Join(codes, ","); got != tt.codes {
				t.Errorf("%s: got %q, want %q", tt.params, got, tt.codes)
			}
		}
		// Search projects the reduced record with its computed count.
		recs, _, err := s.List(ctx, w, query(t, w, request.KindSearch, "WidgetCode=F1"), engine.AllOrganizations())
		if err != nil || len(recs) != 1 {
			t.Fatalf("search: %v %v", recs, err)
		}
		if js := string(engine.AppendJSON(nil, recs[0], w.SearchFields)); !strings.Contains(js, `"PartCount":1`) || strings.Contains(js, "WidgetTitle") {
			t.Errorf("search record %s", js)
		}
		got, _ := s.Get(ctx, w, []any{a.Get(w, "WidgetIdentifier")}, nil, engine.AllOrganizations())
		if got.Get(w, "PartName") != "Sprocket" {
			t.Errorf("computed lookup PartName = %v", got.Get(w, "PartName"))
		}
	})
}

func TestParseQueryRejects(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	tests := []struct {
		params, member string
		kind           request.Kind
	}{
		{params: "Colour=red", member: "Colour"},
		{params: "WidgetSize=big", member: "WidgetSize"},
		{params: "WidgetEnabled=maybe", member: "WidgetEnabled"},
		{params: "WidgetMade=2024-03-10T14:30:00", member: "WidgetMade"},
		{params: "Identifier=12", member: "Identifier"},
		{params: "WidgetIdentifier=" + wOrgA, member: "WidgetIdentifier"},
		{params: "Take=0", member: "Take"},
		{params: "Take=51", member: "Take"},
		{params: "Page=0", member: "Page"},
		{params: "Take=5&Filter.Take=6", member: "Take"},
		{params: "Filter.Bogus=1", member: "Filter.Bogus"},
		{params: "Origin.When=yesterday", member: "Origin.When"},
		{params: "Origin.Nope=1", member: "Origin.Nope"},
		{params: "Sort=Nope", member: "Sort"},
		{params: "Sort=WidgetCode sideways", member: "Sort"},
		// A field sorted on twice: its second term could never order anything, and two
		// directions for one field are a client's mistake (it was accepted).
		{params: "Sort=WidgetCode,WidgetCode desc", member: "Sort"},
		{params: "Sort=WidgetCode desc,WidgetSize,WidgetCode desc", member: "Sort"},
		{params: "Includes=Nope", member: "Includes"},
		{params: "Excludes=PartCount", member: "Excludes"},
		{params: "Format=xml", member: "Format"},
		{params: "Take=5", member: "Take", kind: request.KindCount},
		{params: "WidgetCode=a&WidgetCode=b", member: "WidgetCode"},
		// Text the stores cannot keep or compare exactly (decisions §4).
		{params: "WidgetTitle=a%00b", member: "WidgetTitle"},
		{params: "WidgetCode=%ff", member: "WidgetCode"},
		{params: "WidgetCode=%c3%28", member: "WidgetCode"},
		{params: "WidgetTitle=%ed%a0%80", member: "WidgetTitle"},
		{params: "Origin.Reason=%00", member: "Origin.Reason"},
		{params: "Origin.Source=" + strings.Repeat("x", engine.MaxStringLength+1), member: "Origin.Source"},
		{params: "WidgetMade=9999-12-31T23:00:00-02:00", member: "WidgetMade"},
		{params: "WidgetMadeSince=0001-01-01T00:30:00%2B01:00", member: "WidgetMadeSince"},
		// Limits checked before the database's own.
		{params: "WidgetCode=" + strings.Repeat("x", 21), member: "WidgetCode"},
		{params: "WidgetTitle=" + strings.Repeat("é", engine.MaxStringLength+1), member: "WidgetTitle"},
		{params: "Sort=" + strings.Repeat("WidgetCode,", 10), member: "Sort"},
		{params: "Sort=" + strings.Repeat("WidgetCode,", 2000), member: "Sort"},
		// Projections that leave nothing to return.
		{params: "Includes=,", member: "Includes"},
		{params: "Includes=", member: "Includes"},
		{params: "Excludes=", member: "Excludes"},
		{params: "Excludes=,", member: "Excludes"},
		{params: "Filter.Excludes=", member: "Filter.Excludes"},
		{params: "Excludes=", member: "Excludes", kind: request.KindSearch},
		{params: "Includes=WidgetCode&Excludes=WidgetCode", member: "Excludes"},
		{params: "Excludes=WidgetIdentifier,WidgetCode,PartCount", member: "Excludes", kind: request.KindSearch},
	}
	for _, tt := range tests {
		v, _ := url.ParseQuery(tt.params)
		kind := tt.kind
		if kind == request.KindCount && tt.params != "Take=5" {
			kind = request.KindList
		}
		_, err := request.ListQuery(w, v, kind)
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || verr.Fields[tt.member] == nil {
			t.Errorf("ParseQuery(%q) = %v, want a problem naming %s", tt.params, err, tt.member)
		}
	}
	// The key's own name says how the key is filtered: a client that tries it learns the way.
	v, _ := url.ParseQuery("WidgetIdentifier=" + wOrgA)
	var verr *engine.ValidationError
	if _, err := request.ListQuery(w, v, request.KindList); !errors.As(err, &verr) ||
		!slices.Equal(verr.Fields["WidgetIdentifier"], []string{"unknown parameter WidgetIdentifier; the key is filtered as Identifier (Identifier=<WidgetIdentifier>)"}) {
		t.Errorf("filtering by the key's name: %v", err)
	}
	for _, params := range []string{"Includes=,", "Excludes=", "Excludes=,", "Excludes=" + strings.Join(engine.Names(w.Output), ","), "Includes=WidgetCode&Excludes=WidgetCode"} {
		v, _ := url.ParseQuery(params)
		if _, err := request.Fields(w, v); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("ParseFields(%q) = %v, want ErrInvalid", params, err)
		}
	}
	// Every sortable field once, and a filter at the maximum length, are within the limits.
	var sortAll []string
	for _, f := range w.Fields {
		sortAll = append(sortAll, f.Name+" desc")
	}
	query(t, w, request.KindList, "Sort="+strings.Join(sortAll, ",")+"&WidgetTitle="+strings.Repeat("é", engine.MaxStringLength))
	q := query(t, w, request.KindList, "Includes=WidgetSize,WidgetCode&Excludes=WidgetSize&Take=5&Filter.Take=5")
	if names := engine.Names(q.Fields); strings.Join(names, ",") != "WidgetCode" || q.Take != 5 {
		t.Errorf("Includes/Excludes/aliases gave %v take %d", names, q.Take)
	}
}
