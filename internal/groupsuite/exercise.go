package groupsuite

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/engine"
	"credo/handlers"
)

// Exercise runs the generated cases of one group against s: a record stored, then every
// offered operation (success, 404 on a missing or malformed id, 400 on bad input naming what
// is wrong, 406, 413), every filter with the record's own value and a wrongly typed one, every
// sort field in both directions, write-only members never shown, and 405 with Allow for every
// operation not offered; the ETag of get, HEAD, PUT and PATCH, If-None-Match's 304 and a
// stale If-Match's 412; and paging with Continue under every sort. Each step is a method of
// groupCase named for what it checks.
func Exercise(t testing.TB, s *Server, r *engine.Resource) {
	c := store(t, s, r)
	steps := []struct {
		op   engine.Op
		step func()
	}{
		{engine.OpGet, c.get}, {engine.OpExists, c.exists}, {engine.OpCount, c.count},
		{engine.OpList, func() { exerciseList(t, s, r, c.got, c.identifier) }},
		{"", func() { exerciseWriteOnly(t, s, r, c.want, c.item, c.identifier) }},
		{engine.OpSearch, c.search}, {engine.OpList, func() { exerciseContinue(t, s, r) }},
		{engine.OpCreate, c.create}, {engine.OpUpdate, c.update}, {engine.OpDelete, c.delete},
		{"", c.notOffered},
	}
	for _, st := range steps {
		if st.op == "" || r.Offers(st.op) {
			st.step()
		}
	}
}

// groupCase is one group's exercise: the record stored first, the paths that name it and
// the ETags it has had.
type groupCase struct {
	t    testing.TB
	s    *Server
	r    *engine.Resource
	want map[string]any // the members sent
	got  map[string]any // the record stored
	// item is the stored record's path, missingPath one of no record.
	item, missingPath string
	// identifier is the query parameter that selects the stored record.
	identifier string
	// etag is the record's ETag as get answers it; stale one it had before an update.
	etag, stale string
}

// store puts a sample record of r and checks that what was stored is what was sent.
func store(t testing.TB, s *Server, r *engine.Resource) *groupCase {
	want := Sample(r, 1)
	got := Put(t, s, r, want)
	for name, v := range want {
		if f, _ := r.Member(name); f.WriteOnly {
			continue // exerciseWriteOnly: never returned
		}
		if fmt.Sprint(got[name]) != fmt.Sprint(v) {
			t.Errorf("stored %s = %v, want %v", name, got[name], v)
		}
	}
	missing := map[string]any{}
	for _, k := range r.Key {
		missing[k.Name] = uuid.NewString()
	}
	return &groupCase{t: t, s: s, r: r, want: want, got: got, item: ItemPath(r, got),
		missingPath: ItemPath(r, missing), identifier: "Identifier=" + url.QueryEscape(fmt.Sprint(got[r.Key[0].Name]))}
}

// get checks a get: the full record and its ETag, If-None-Match, 404 on a missing or
// malformed id, Includes, 406.
func (c *groupCase) get() {
	t, s, r := c.t, c.s, c.r
	res := s.Do(t, "GET", c.item, "").Expect(t, "get", http.StatusOK)
	c.etag = ETagOf(t, "get", res)
	if res := s.Do(t, "GET", c.item, "", "If-None-Match", c.etag).Expect(t, "get If-None-Match", http.StatusNotModified); len(res.Body) != 0 ||
		res.Header.Get("ETag") != c.etag {
		t.Errorf("get If-None-Match: ETag %q, body %q; want %s and none", res.Header.Get("ETag"), res.Body, c.etag)
	}
	var again map[string]any
	_ = json.Unmarshal(res.Body, &again)
	if len(again) != len(r.Output) {
		t.Errorf("get returned %d members, want every member of the record (%d): %s", len(again), len(r.Output), res.Body)
	}
	for name, v := range c.want {
		if f, _ := r.Member(name); f.WriteOnly {
			continue
		}
		if fmt.Sprint(again[name]) != fmt.Sprint(v) {
			t.Errorf("get %s = %v, want %v", name, again[name], v)
		}
	}
	s.Do(t, "GET", c.missingPath, "").Expect(t, "get missing", http.StatusNotFound)
	s.Do(t, "GET", r.Path+strings.Repeat("/not-a-uuid", len(r.Key)), "").Expect(t, "get malformed id", http.StatusNotFound)
	first := r.Output[0].Name
	res = s.Do(t, "GET", c.item+"?Includes="+first, "").Expect(t, "get Includes", http.StatusOK)
	if string(res.Body) != fmt.Sprintf("{%q:%s}\n", first, MustJSON(c.got[first])) {
		t.Errorf("get Includes=%s: %s", first, res.Body)
	}
	s.Do(t, "GET", c.item+"?Includes=Bogus", "").Expect(t, "get Includes unknown", http.StatusBadRequest).ProblemNames(t, "Includes", "Includes")
	s.Do(t, "GET", c.item, "", "Accept", "application/xml").Expect(t, "get Accept xml", http.StatusNotAcceptable)
}

// exists checks HEAD on the record (its ETag is get's) and on a missing one.
func (c *groupCase) exists() {
	t, s := c.t, c.s
	res := s.Do(t, "HEAD", c.item, "").Expect(t, "exists", http.StatusOK)
	if res.Header.Get("Content-Length") != "4" || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("exists headers %v, want JSON and the length of true", res.Header)
	}
	if tag := ETagOf(t, "exists", res); c.etag != "" && tag != c.etag {
		t.Errorf("exists ETag %s, get's %s", tag, c.etag)
	}
	res = s.Do(t, "HEAD", c.missingPath, "").Expect(t, "exists missing", http.StatusNotFound)
	if res.Header.Get("Content-Length") != "5" {
		t.Errorf("exists missing Content-Length %q, want 5", res.Header.Get("Content-Length"))
	}
}

// count checks a count by Identifier and an unknown parameter.
func (c *groupCase) count() {
	t, s, r := c.t, c.s, c.r
	res := s.Do(t, "GET", r.Path+"/count?"+c.identifier, "").Expect(t, "count", http.StatusOK)
	if string(res.Body) != "{\"Count\":1}\n" {
		t.Errorf("count by Identifier: %s", res.Body)
	}
	s.Do(t, "GET", r.Path+"/count?Bogus=1", "").Expect(t, "count unknown parameter", http.StatusBadRequest).ProblemNames(t, "count", "Bogus")
}

// search checks that search answers the reduced record, paged.
func (c *groupCase) search() {
	t, s, r := c.t, c.s, c.r
	res := s.Do(t, "GET", r.Path+"/search?"+c.identifier, "").Expect(t, "search", http.StatusOK)
	var recs []map[string]any
	_ = json.Unmarshal(res.Body, &recs)
	if len(recs) != 1 || len(recs[0]) != len(r.SearchFields) {
		t.Fatalf("search: %s, want one reduced record of %v", res.Body, engine.Names(r.SearchFields))
	}
	for _, f := range r.SearchFields {
		if _, ok := recs[0][f.Name]; !ok {
			t.Errorf("search record lacks %s: %s", f.Name, res.Body)
		}
	}
	if res.Header.Get("X-Query-Pagination") == "" {
		t.Error("search lacks X-Query-Pagination")
	}
}

// create checks create refusals: unknown member, wrong types, non-object, too large, a
// taken key.
func (c *groupCase) create() {
	t, s, r := c.t, c.s, c.r
	s.Do(t, "POST", r.Path, `{"Bogus":1}`).Expect(t, "create unknown member", http.StatusBadRequest).ProblemNames(t, "create", "Bogus")
	for _, f := range r.Fields {
		if f.Type != engine.TypeString && !f.ReadOnly {
			s.Do(t, "POST", r.Path, fmt.Sprintf(`{%q:"not a %s"}`, f.Name, f.Type)).Expect(t, "create wrong type", http.StatusBadRequest).ProblemNames(t, "create "+f.Name, f.Name)
		}
	}
	s.Do(t, "POST", r.Path, `[1]`).Expect(t, "create non-object", http.StatusBadRequest)
	s.Do(t, "POST", r.Path, `{"x":"`+strings.Repeat("a", handlers.MaxBodyBytes)+`"}`).Expect(t, "create too large", http.StatusRequestEntityTooLarge)
	fresh := Sample(r, 3)
	for _, k := range r.Key {
		fresh[k.Name] = c.got[k.Name]
	}
	dup, _ := json.Marshal(fresh)
	s.Do(t, "POST", r.Path, string(dup)).Expect(t, "create duplicate key", http.StatusBadRequest).ProblemNames(t, "duplicate", r.Key[0].Name)
}

// update checks PUT and PATCH: a replaced record and its ETag, stale If-Match, 404 before
// any member is judged, a key that differs from the path.
func (c *groupCase) update() {
	t, s, r := c.t, c.s, c.r
	repl := Sample(r, 2)
	for _, k := range r.Key {
		repl[k.Name] = c.got[k.Name]
	}
	body, _ := json.Marshal(repl)
	put := ETagOf(t, "update", s.Do(t, "PUT", c.item, string(body)).Expect(t, "update", http.StatusOK))
	res := s.Do(t, "GET", c.item, "").Expect(t, "get after update", http.StatusOK)
	if r.Offers(engine.OpGet) {
		if now := ETagOf(t, "get after update", res); now != put || now == c.etag {
			t.Errorf("update's ETag %s, get's then %s, before %s", put, now, c.etag)
		}
		c.stale, c.etag = c.etag, put
		s.Do(t, "PUT", c.item, string(body), "If-Match", c.stale).Expect(t, "update with a stale If-Match", http.StatusPreconditionFailed)
		s.Do(t, "PATCH", c.item, `{}`, "If-Match", c.stale).Expect(t, "patch with a stale If-Match", http.StatusPreconditionFailed)
		patched := ETagOf(t, "patch", s.Do(t, "PATCH", c.item, `{}`, "If-Match", c.etag).Expect(t, "patch with If-Match", http.StatusOK))
		if now := ETagOf(t, "get after patch", s.Do(t, "GET", c.item, "").Expect(t, "get after patch", http.StatusOK)); now != patched {
			t.Errorf("patch's ETag %s, get's then %s", patched, now)
		}
	}
	var after map[string]any
	_ = json.Unmarshal(res.Body, &after)
	for name, v := range repl {
		if f, _ := r.Member(name); f.WriteOnly {
			continue
		}
		if fmt.Sprint(after[name]) != fmt.Sprint(v) {
			t.Errorf("after update %s = %v, want %v", name, after[name], v)
		}
	}
	for _, k := range r.Key {
		delete(repl, k.Name)
	}
	body, _ = json.Marshal(repl)
	s.Do(t, "PUT", c.missingPath, string(body)).Expect(t, "update missing", http.StatusNotFound)
	other := map[string]any{r.Key[0].Name: uuid.NewString()}
	ob, _ := json.Marshal(other)
	s.Do(t, "PUT", c.item, string(ob)).Expect(t, "update with another key", http.StatusBadRequest).ProblemNames(t, "update key", r.Key[0].Name)
	s.Do(t, "PUT", c.item, `{"Bogus":true}`).Expect(t, "update unknown member", http.StatusBadRequest)
	s.Do(t, "PATCH", c.item, `{}`).Expect(t, "patch nothing", http.StatusOK)
	s.Do(t, "PATCH", c.missingPath, `{}`).Expect(t, "patch missing", http.StatusNotFound)
	// A missing record is a 404 before any member is judged: whatever the body lacks or
	// holds wrongly (api.md's error table).
	for _, bad := range []string{`{}`, `{"Bogus":true}`, `{` + fmt.Sprintf("%q", r.Key[0].Name) + `:"not a key"}`} {
		s.Do(t, "PUT", c.missingPath, bad).Expect(t, "update missing with "+bad, http.StatusNotFound)
		s.Do(t, "PATCH", c.missingPath, bad).Expect(t, "patch missing with "+bad, http.StatusNotFound)
	}
	// Only required members are needed (none for most groups: api.md rule 8 makes every
	// member optional; descriptors require only relation ids that make no sense missing).
	minimal := map[string]any{}
	for _, f := range r.Fields {
		if f.Required {
			minimal[f.Name] = after[f.Name]
		}
	}
	body, _ = json.Marshal(minimal)
	s.Do(t, "PUT", c.item, string(body)).Expect(t, "update with the required members only", http.StatusOK)
}

// delete checks delete (a stale If-Match first), again (404) and a get after it.
func (c *groupCase) delete() {
	t, s, r := c.t, c.s, c.r
	if c.stale != "" {
		s.Do(t, "DELETE", c.item, "", "If-Match", c.stale).Expect(t, "delete with a stale If-Match", http.StatusPreconditionFailed)
	}
	s.Do(t, "DELETE", c.item, "").Expect(t, "delete", http.StatusOK)
	s.Do(t, "DELETE", c.item, "").Expect(t, "delete again", http.StatusNotFound)
	if r.Offers(engine.OpGet) {
		s.Do(t, "GET", c.item, "").Expect(t, "get after delete", http.StatusNotFound)
	}
}

// notOffered checks that every operation the group does not offer answers 405 with Allow, and
// so does every other method on count and search.
func (c *groupCase) notOffered() {
	t, s, r := c.t, c.s, c.r
	// Operations the group does not offer answer 405 with Allow.
	notOffered := map[engine.Op][2]string{
		engine.OpGet: {"GET", c.item}, engine.OpExists: {"HEAD", c.item}, engine.OpUpdate: {"PUT", c.item},
		engine.OpPatch: {"PATCH", c.item}, engine.OpDelete: {"DELETE", c.item}, engine.OpCreate: {"POST", r.Path},
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
		res := s.Do(t, mp[0], mp[1], body).Expect(t, "not offered "+string(op), http.StatusMethodNotAllowed)
		if _, ok := res.Header["Allow"]; !ok {
			t.Errorf("405 for %s lacks Allow", op)
		}
	}
	// count and search are never items: another method there is a 405, not the 404 of an item
	// named "count" (which the item routes of a group offering HEAD, PUT or DELETE answered).
	for _, sub := range []string{"/count", "/search"} {
		for _, m := range []string{"HEAD", "PUT", "PATCH", "DELETE", "POST"} {
			body := ""
			if m == "PUT" || m == "POST" || m == "PATCH" {
				body = "{}"
			}
			res := s.Do(t, m, r.Path+sub, body).Expect(t, m+" "+r.Path+sub, http.StatusMethodNotAllowed)
			if _, ok := res.Header["Allow"]; !ok {
				t.Errorf("405 for %s %s lacks Allow", m, r.Path+sub)
			}
		}
	}
}

// exerciseWriteOnly checks decisions §7 on every group with write-only members: no response
// (get, Includes, list, CSV, search) carries their names or the values written, and a
// filter, Sort, Includes or Excludes naming one is a 400 naming it.
func exerciseWriteOnly(t testing.TB, s *Server, r *engine.Resource, written map[string]any, item, identifier string) {
	var secrets []*engine.Field
	for _, f := range r.Fields {
		if f.WriteOnly {
			secrets = append(secrets, f)
		}
	}
	if len(secrets) == 0 {
		return
	}
	var bodies []string
	if r.Offers(engine.OpGet) {
		bodies = append(bodies, string(s.Do(t, "GET", item, "").Expect(t, "get", http.StatusOK).Body))
	}
	if r.Offers(engine.OpList) {
		bodies = append(bodies, string(s.Do(t, "GET", r.Path+"?"+identifier, "").Expect(t, "list", http.StatusOK).Body),
			string(s.Do(t, "GET", r.Path+"?Format=csv&"+identifier, "").Expect(t, "list csv", http.StatusOK).Body),
			string(s.Do(t, "GET", r.Path+"?"+identifier, "", "Accept", "text/csv").Expect(t, "list Accept csv", http.StatusOK).Body))
	}
	if r.Offers(engine.OpSearch) {
		bodies = append(bodies, string(s.Do(t, "GET", r.Path+"/search?"+identifier, "").Expect(t, "search", http.StatusOK).Body),
			string(s.Do(t, "GET", r.Path+"/search?Format=csv&"+identifier, "").Expect(t, "search csv", http.StatusOK).Body))
	}
	for _, f := range secrets {
		for _, b := range bodies {
			if strings.Contains(b, `"`+f.Name+`"`) || strings.Contains(b, f.Name+",") || strings.Contains(b, ","+f.Name+"\r") {
				t.Errorf("a response carries the write-only member %s: %s", f.Name, b)
			}
			if v := fmt.Sprint(written[f.Name]); strings.Contains(b, v) {
				t.Errorf("a response carries the value written to %s: %s", f.Name, b)
			}
		}
		for _, tc := range []struct{ query, member string }{
			{f.Name + "=x", f.Name}, {"Sort=" + f.Name, "Sort"}, {"Includes=" + f.Name, "Includes"}, {"Excludes=" + f.Name, "Excludes"},
		} {
			for _, op := range []engine.Op{engine.OpList, engine.OpSearch, engine.OpCount} {
				if !r.Offers(op) || (op == engine.OpCount && tc.member != f.Name) {
					continue
				}
				path := map[engine.Op]string{engine.OpList: r.Path, engine.OpSearch: r.Path + "/search", engine.OpCount: r.Path + "/count"}[op]
				res := s.Do(t, "GET", path+"?"+tc.query, "").Expect(t, string(op)+" "+tc.query, http.StatusBadRequest)
				res.ProblemNames(t, string(op)+" "+tc.query, tc.member)
				if !strings.Contains(string(res.Body), f.Name) {
					t.Errorf("%s %s: the problem does not name %s: %s", op, tc.query, f.Name, res.Body)
				}
			}
		}
		if r.Offers(engine.OpGet) {
			s.Do(t, "GET", item+"?Includes="+f.Name, "").Expect(t, "get Includes "+f.Name, http.StatusBadRequest).ProblemNames(t, "get Includes", "Includes")
		}
	}
}

// MustJSON returns the compact JSON of v.
func MustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// exerciseList checks list paging headers, CSV, every filter with the record's own value and a
// wrongly typed one, and every sort field in both directions.
func exerciseList(t testing.TB, s *Server, r *engine.Resource, got map[string]any, identifier string) {
	res := s.Do(t, "GET", r.Path+"?"+identifier, "").Expect(t, "list", http.StatusOK)
	var recs []map[string]any
	_ = json.Unmarshal(res.Body, &recs)
	if len(recs) != 1 {
		t.Fatalf("list by Identifier: %s", res.Body)
	}
	var pg struct{ Page, PageSize, TotalCount int }
	if err := json.Unmarshal([]byte(res.Header.Get("X-Query-Pagination")), &pg); err != nil || pg != (struct{ Page, PageSize, TotalCount int }{1, 20, 1}) {
		t.Errorf("X-Query-Pagination %q", res.Header.Get("X-Query-Pagination"))
	}
	res = s.Do(t, "GET", r.Path+"?Format=csv&"+identifier, "").Expect(t, "list csv", http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(res.Body)).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != strings.Join(engine.Names(r.Output), ",") {
		t.Errorf("list csv: %v %q", err, res.Body)
	}
	s.Do(t, "GET", r.Path+"?"+identifier, "", "Accept", "text/csv").Expect(t, "list Accept csv", http.StatusOK)
	for _, f := range r.Filters {
		if !f.Field.Stored() {
			s.Do(t, "GET", r.Path+"?"+f.Param+"="+url.QueryEscape(fmt.Sprint(SampleValue(f.Field, 9))), "").Expect(t, "filter "+f.Param, http.StatusOK)
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
		res := s.Do(t, "GET", r.Path+"?"+f.Param+"="+url.QueryEscape(val)+"&"+identifier, "").Expect(t, "filter "+f.Param, http.StatusOK)
		var found []map[string]any
		_ = json.Unmarshal(res.Body, &found)
		if len(found) != 1 {
			t.Errorf("filter %s=%s did not find the record: %s", f.Param, val, res.Body)
		}
		if f.Field.Type != engine.TypeString {
			s.Do(t, "GET", r.Path+"?"+f.Param+"=%3F%3F", "").Expect(t, "filter bad "+f.Param, http.StatusBadRequest).ProblemNames(t, "filter", f.Param)
		}
	}
	for _, f := range r.Fields {
		if f.WriteOnly {
			continue
		}
		for _, dir := range []string{"asc", "desc"} {
			s.Do(t, "GET", r.Path+"?Take=5&Sort="+url.QueryEscape(f.Name+" "+dir), "").Expect(t, "sort "+f.Name, http.StatusOK)
		}
	}
	s.Do(t, "GET", r.Path+"?Sort=Bogus", "").Expect(t, "sort unknown", http.StatusBadRequest).ProblemNames(t, "sort", "Sort")
	s.Do(t, "GET", r.Path+fmt.Sprintf("?Take=%d", r.MaxTake+1), "").Expect(t, "take too large", http.StatusBadRequest).ProblemNames(t, "take", "Take")
}
