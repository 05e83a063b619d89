package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/engine"
	"credo/handlers"
	"credo/internal/testenv"
	"credo/resources"
)

// The suite below is generated from the descriptors: every public group, including the 16th
// group of testdata/descriptors/extra that exists only as YAML, is exercised through HTTP for
// every offered operation, every filter and sort field, and every operation it does not offer.

func registry(t testing.TB) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, os.DirFS("../testdata/descriptors/extra"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// testServer serves a fresh partition of a backend without authentication (the security suite
// covers authentication and scope).
type testServer struct {
	*httptest.Server
	store     *engine.Store
	partition string
}

func newTestServer(t *testing.T, b testenv.Backend, reg *engine.Registry, partitions ...string) *testServer {
	t.Helper()
	if len(partitions) == 0 {
		partitions = []string{testenv.Partition(t)}
	}
	db, err := engine.Open(context.Background(), b.URL, partitions, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := &handlers.Server{Registry: reg, Database: db}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	s, _ := db.Store(partitions[0])
	return &testServer{Server: ts, store: s, partition: partitions[0]}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+"/v2/"+ts.partition+"/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (r response) expect(t *testing.T, what string, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	return r
}

// problemNames asserts a problem+json document whose Errors name member.
func (r response) problemNames(t *testing.T, what, member string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	var p struct {
		Status int
		Errors map[string][]string
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("%s: problem document: %v: %s", what, err, r.body)
	}
	if _, ok := p.Errors[member]; !ok {
		t.Errorf("%s: problem %s does not name %s", what, r.body, member)
	}
}

// sample returns valid JSON values for every stored member of r, distinct per n.
func sample(r *engine.Resource, n int) map[string]any {
	out := map[string]any{}
	for _, f := range r.Fields {
		if f.ReadOnly {
			continue
		}
		out[f.Name] = sampleValue(f, n)
	}
	return out
}

func sampleValue(f *engine.Field, n int) any {
	switch f.Type {
	case engine.TypeUUID:
		return uuid.NewString()
	case engine.TypeBool:
		return n%2 == 0
	case engine.TypeInt:
		return 10 + n
	case engine.TypeDateTime:
		return fmt.Sprintf("2024-03-%02dT14:30:00.1234567-06:00", 10+n)
	}
	if strings.Contains(f.Validate, "email") {
		return fmt.Sprintf("user%d.%s@example.com", n, strings.ToLower(uuid.NewString()[:8]))
	}
	s := fmt.Sprintf("%s %d %s", f.Name, n, uuid.NewString()[:8])
	if len(s) > f.MaxLen {
		s = s[len(s)-f.MaxLen:]
	}
	return s
}

// itemPath returns the item path of a record given its JSON members.
func itemPath(r *engine.Resource, members map[string]any) string {
	p := r.Path
	for _, k := range r.Key {
		p += "/" + url.PathEscape(fmt.Sprint(members[k.Name]))
	}
	return p
}

// put stores a record: through POST where the group offers create, else through the engine
// (as credo load does for read-only groups).
func put(t *testing.T, ts *testServer, r *engine.Resource, members map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(members)
	if r.Offers(engine.OpCreate) {
		res := ts.do(t, "POST", r.Path, string(body)).expect(t, "create", http.StatusCreated)
		var got map[string]any
		if err := json.Unmarshal(res.body, &got); err != nil {
			t.Fatal(err)
		}
		if loc := res.header.Get("Location"); loc != "/v2/"+ts.partition+"/"+itemPath(r, got) {
			t.Errorf("create Location %q, want the item path %q", loc, itemPath(r, got))
		}
		return got
	}
	rec, err := ts.store.Create(context.Background(), r, body, "")
	if err != nil {
		t.Fatalf("load %s: %v", r.Name, err)
	}
	var got map[string]any
	if err := json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestGeneratedGroups(t *testing.T) {
	reg := registry(t)
	if _, ok := reg.ByName("UserNote"); !ok {
		t.Fatal("the 16th group of testdata/descriptors/extra did not load")
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			for _, r := range reg.Public() {
				t.Run(r.Path, func(t *testing.T) { exerciseGroup(t, ts, r) })
			}
		})
	}
}

func exerciseGroup(t *testing.T, ts *testServer, r *engine.Resource) {
	want := sample(r, 1)
	got := put(t, ts, r, want)
	for name, v := range want {
		if fmt.Sprint(got[name]) != fmt.Sprint(v) {
			t.Errorf("stored %s = %v, want %v", name, got[name], v)
		}
	}
	item := itemPath(r, got)
	missing := map[string]any{}
	for _, k := range r.Key {
		missing[k.Name] = uuid.NewString()
	}
	missingPath := itemPath(r, missing)

	if r.Offers(engine.OpGet) {
		res := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)
		var again map[string]any
		_ = json.Unmarshal(res.body, &again)
		if len(again) != len(r.Output) {
			t.Errorf("get returned %d members, want every member of the record (%d): %s", len(again), len(r.Output), res.body)
		}
		for name, v := range want {
			if fmt.Sprint(again[name]) != fmt.Sprint(v) {
				t.Errorf("get %s = %v, want %v", name, again[name], v)
			}
		}
		ts.do(t, "GET", missingPath, "").expect(t, "get missing", http.StatusNotFound)
		ts.do(t, "GET", r.Path+strings.Repeat("/not-a-uuid", len(r.Key)), "").expect(t, "get malformed id", http.StatusNotFound)
		first := r.Output[0].Name
		res = ts.do(t, "GET", item+"?Includes="+first, "").expect(t, "get Includes", http.StatusOK)
		if string(res.body) != fmt.Sprintf("{%q:%s}\n", first, mustJSON(got[first])) {
			t.Errorf("get Includes=%s: %s", first, res.body)
		}
		ts.do(t, "GET", item+"?Includes=Bogus", "").expect(t, "get Includes unknown", http.StatusBadRequest).problemNames(t, "Includes", "Includes")
		ts.do(t, "GET", item, "", "Accept", "application/xml").expect(t, "get Accept xml", http.StatusNotAcceptable)
	}
	if r.Offers(engine.OpExists) {
		res := ts.do(t, "HEAD", item, "").expect(t, "exists", http.StatusOK)
		if res.header.Get("Content-Length") != "4" || res.header.Get("Content-Type") != "application/json" {
			t.Errorf("exists headers %v, want JSON and the length of true", res.header)
		}
		res = ts.do(t, "HEAD", missingPath, "").expect(t, "exists missing", http.StatusNotFound)
		if res.header.Get("Content-Length") != "5" {
			t.Errorf("exists missing Content-Length %q, want 5", res.header.Get("Content-Length"))
		}
	}
	identifier := "Identifier=" + url.QueryEscape(fmt.Sprint(got[r.Key[0].Name]))
	if r.Offers(engine.OpCount) {
		res := ts.do(t, "GET", r.Path+"/count?"+identifier, "").expect(t, "count", http.StatusOK)
		if string(res.body) != "{\"Count\":1}\n" {
			t.Errorf("count by Identifier: %s", res.body)
		}
		ts.do(t, "GET", r.Path+"/count?Bogus=1", "").expect(t, "count unknown parameter", http.StatusBadRequest).problemNames(t, "count", "Bogus")
	}
	if r.Offers(engine.OpList) {
		exerciseList(t, ts, r, got, identifier)
	}
	if r.Offers(engine.OpSearch) {
		res := ts.do(t, "GET", r.Path+"/search?"+identifier, "").expect(t, "search", http.StatusOK)
		var recs []map[string]any
		_ = json.Unmarshal(res.body, &recs)
		if len(recs) != 1 || len(recs[0]) != len(r.SearchFields) {
			t.Fatalf("search: %s, want one reduced record of %v", res.body, engine.Names(r.SearchFields))
		}
		for _, f := range r.SearchFields {
			if _, ok := recs[0][f.Name]; !ok {
				t.Errorf("search record lacks %s: %s", f.Name, res.body)
			}
		}
		if res.header.Get("X-Query-Pagination") == "" {
			t.Error("search lacks X-Query-Pagination")
		}
	}
	if r.Offers(engine.OpCreate) {
		ts.do(t, "POST", r.Path, `{"Bogus":1}`).expect(t, "create unknown member", http.StatusBadRequest).problemNames(t, "create", "Bogus")
		for _, f := range r.Fields {
			if f.Type != engine.TypeString && !f.ReadOnly {
				ts.do(t, "POST", r.Path, fmt.Sprintf(`{%q:"not a %s"}`, f.Name, f.Type)).expect(t, "create wrong type", http.StatusBadRequest).problemNames(t, "create "+f.Name, f.Name)
			}
		}
		ts.do(t, "POST", r.Path, `[1]`).expect(t, "create non-object", http.StatusBadRequest)
		ts.do(t, "POST", r.Path, `{"x":"`+strings.Repeat("a", handlers.MaxBodyBytes)+`"}`).expect(t, "create too large", http.StatusRequestEntityTooLarge)
		fresh := sample(r, 3)
		for _, k := range r.Key {
			fresh[k.Name] = got[k.Name]
		}
		dup, _ := json.Marshal(fresh)
		ts.do(t, "POST", r.Path, string(dup)).expect(t, "create duplicate key", http.StatusBadRequest).problemNames(t, "duplicate", r.Key[0].Name)
	}
	if r.Offers(engine.OpUpdate) {
		repl := sample(r, 2)
		for _, k := range r.Key {
			repl[k.Name] = got[k.Name]
		}
		body, _ := json.Marshal(repl)
		ts.do(t, "PUT", item, string(body)).expect(t, "update", http.StatusOK)
		res := ts.do(t, "GET", item, "").expect(t, "get after update", http.StatusOK)
		var after map[string]any
		_ = json.Unmarshal(res.body, &after)
		for name, v := range repl {
			if fmt.Sprint(after[name]) != fmt.Sprint(v) {
				t.Errorf("after update %s = %v, want %v", name, after[name], v)
			}
		}
		for _, k := range r.Key {
			delete(repl, k.Name)
		}
		body, _ = json.Marshal(repl)
		ts.do(t, "PUT", missingPath, string(body)).expect(t, "update missing", http.StatusNotFound)
		other := map[string]any{r.Key[0].Name: uuid.NewString()}
		ob, _ := json.Marshal(other)
		ts.do(t, "PUT", item, string(ob)).expect(t, "update with another key", http.StatusBadRequest).problemNames(t, "update key", r.Key[0].Name)
		ts.do(t, "PUT", item, `{"Bogus":true}`).expect(t, "update unknown member", http.StatusBadRequest)
		ts.do(t, "PATCH", item, `{}`).expect(t, "patch nothing", http.StatusOK)
		ts.do(t, "PATCH", missingPath, `{}`).expect(t, "patch missing", http.StatusNotFound)
	}
	if r.Offers(engine.OpDelete) {
		ts.do(t, "DELETE", item, "").expect(t, "delete", http.StatusOK)
		ts.do(t, "DELETE", item, "").expect(t, "delete again", http.StatusNotFound)
		if r.Offers(engine.OpGet) {
			ts.do(t, "GET", item, "").expect(t, "get after delete", http.StatusNotFound)
		}
	}
	// Operations the group does not offer answer 405 with Allow.
	notOffered := map[engine.Op][2]string{
		engine.OpGet: {"GET", item}, engine.OpExists: {"HEAD", item}, engine.OpUpdate: {"PUT", item},
		engine.OpPatch: {"PATCH", item}, engine.OpDelete: {"DELETE", item}, engine.OpCreate: {"POST", r.Path},
		engine.OpCount: {"GET", r.Path + "/count"}, engine.OpList: {"GET", r.Path}, engine.OpSearch: {"GET", r.Path + "/search"},
	}
	for op, mp := range notOffered {
		if r.Offers(op) {
			continue
		}
		body := ""
		if mp[0] == "PUT" || mp[0] == "POST" || mp[0] == "PATCH" {
			body = "{}"
		}
		res := ts.do(t, mp[0], mp[1], body).expect(t, "not offered "+string(op), http.StatusMethodNotAllowed)
		if _, ok := res.header["Allow"]; !ok {
			t.Errorf("405 for %s lacks Allow", op)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// exerciseList checks list paging headers, CSV, every filter with the record's own value and a
// wrongly typed one, and every sort field in both directions.
func exerciseList(t *testing.T, ts *testServer, r *engine.Resource, got map[string]any, identifier string) {
	res := ts.do(t, "GET", r.Path+"?"+identifier, "").expect(t, "list", http.StatusOK)
	var recs []map[string]any
	_ = json.Unmarshal(res.body, &recs)
	if len(recs) != 1 {
		t.Fatalf("list by Identifier: %s", res.body)
	}
	var pg struct{ Page, PageSize, TotalCount int }
	if err := json.Unmarshal([]byte(res.header.Get("X-Query-Pagination")), &pg); err != nil || pg != (struct{ Page, PageSize, TotalCount int }{1, 20, 1}) {
		t.Errorf("X-Query-Pagination %q", res.header.Get("X-Query-Pagination"))
	}
	res = ts.do(t, "GET", r.Path+"?Format=csv&"+identifier, "").expect(t, "list csv", http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(res.body)).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != strings.Join(engine.Names(r.Output), ",") {
		t.Errorf("list csv: %v %q", err, res.body)
	}
	ts.do(t, "GET", r.Path+"?"+identifier, "", "Accept", "text/csv").expect(t, "list Accept csv", http.StatusOK)
	for _, f := range r.Filters {
		if !f.Field.Stored() {
			ts.do(t, "GET", r.Path+"?"+f.Param+"="+url.QueryEscape(fmt.Sprint(sampleValue(f.Field, 9))), "").expect(t, "filter "+f.Param, http.StatusOK)
			continue
		}
		v := got[f.Field.Name]
		if v == nil {
			continue
		}
		val := fmt.Sprint(v)
		if f.Op == engine.MatchContains && len(val) > 4 {
			val = strings.ToUpper(val[1 : len(val)-1])
		}
		if f.Op == engine.MatchLt {
			continue // the record's own value is excluded by an exclusive bound
		}
		res := ts.do(t, "GET", r.Path+"?"+f.Param+"="+url.QueryEscape(val)+"&"+identifier, "").expect(t, "filter "+f.Param, http.StatusOK)
		var found []map[string]any
		_ = json.Unmarshal(res.body, &found)
		if len(found) != 1 {
			t.Errorf("filter %s=%s did not find the record: %s", f.Param, val, res.body)
		}
		if f.Field.Type != engine.TypeString {
			ts.do(t, "GET", r.Path+"?"+f.Param+"=%3F%3F", "").expect(t, "filter bad "+f.Param, http.StatusBadRequest).problemNames(t, "filter", f.Param)
		}
	}
	for _, f := range r.Fields {
		for _, dir := range []string{"asc", "desc"} {
			ts.do(t, "GET", r.Path+"?Take=5&Sort="+url.QueryEscape(f.Name+" "+dir), "").expect(t, "sort "+f.Name, http.StatusOK)
		}
	}
	ts.do(t, "GET", r.Path+"?Sort=Bogus", "").expect(t, "sort unknown", http.StatusBadRequest).problemNames(t, "sort", "Sort")
	ts.do(t, "GET", r.Path+fmt.Sprintf("?Take=%d", r.MaxTake+1), "").expect(t, "take too large", http.StatusBadRequest).problemNames(t, "take", "Take")
}
