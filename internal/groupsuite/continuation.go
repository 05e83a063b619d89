package groupsuite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"credo/engine"
)

// exerciseContinue walks the group's list (and search, when offered) page by page with
// Continue, under the default sort and every sortable member (alternating directions), and
// expects exactly the records and order of one page holding them all; then checks that a
// token altered, sent with another query or with Page, and Continue on count, are 400s
// naming Continue.
func exerciseContinue(t testing.TB, s *Server, r *engine.Resource) {
	Put(t, s, r, Sample(r, 4))
	Put(t, s, r, Sample(r, 5))
	paths := []string{r.Path}
	if r.Offers(engine.OpSearch) {
		paths = append(paths, r.Path+"/search")
	}
	sorts := []string{""}
	for i, f := range r.Fields {
		if !f.WriteOnly {
			sorts = append(sorts, f.Name+[]string{" asc", " desc"}[i%2])
		}
	}
	for _, path := range paths {
		for _, sort := range sorts {
			query := "Sort=" + url.QueryEscape(sort)
			if sort == "" {
				query = "Includes=" + r.SearchFields[0].Name // the default sort, and a projection
			}
			all, _ := page(t, s, path+"?Take="+fmt.Sprint(r.MaxTake)+"&"+query)
			var walked []string
			next := path + "?Take=2&" + query
			for range len(all) + 1 {
				recs, tok := page(t, s, next)
				walked = append(walked, recs...)
				if tok == "" {
					break
				}
				next = path + "?Take=2&" + query + "&Continue=" + tok
			}
			if len(all) < 3 || !slices.Equal(walked, all) {
				t.Errorf("%s %s: the Continue walk gave\n%v\nwant the one page\n%v", path, query, walked, all)
			}
		}
	}
	_, tok := page(t, s, r.Path+"?Take=1")
	if tok == "" {
		t.Fatalf("%s: a first page of 1 of 3 records has no Continuation", r.Path)
	}
	bad := map[string]string{
		"altered":          r.Path + "?Take=1&Continue=" + alter(tok),
		"another Take":     r.Path + "?Take=2&Continue=" + tok,
		"another Sort":     r.Path + "?Take=1&Sort=" + url.QueryEscape(r.Key[0].Name+" desc") + "&Continue=" + tok,
		"with Page":        r.Path + "?Take=1&Page=2&Continue=" + tok,
		"not a token":      r.Path + "?Take=1&Continue=abc",
		"empty":            r.Path + "?Take=1&Continue=",
		"another Includes": r.Path + "?Take=1&Includes=" + r.SearchFields[0].Name + "&Continue=" + tok,
	}
	if r.Offers(engine.OpSearch) {
		bad["search"] = r.Path + "/search?Take=1&Continue=" + tok
	}
	if r.Offers(engine.OpCount) {
		bad["count"] = r.Path + "/count?Continue=" + tok
	}
	for what, path := range bad {
		s.Do(t, "GET", path, "").Expect(t, "Continue "+what, http.StatusBadRequest).ProblemNames(t, "Continue "+what, "Continue")
	}
}

// alter changes one character in the middle of a token.
func alter(tok string) string {
	b := []byte(tok)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// page returns the records of a list or search answer as JSON texts, and its Continuation.
func page(t testing.TB, s *Server, path string) ([]string, string) {
	t.Helper()
	res := s.Do(t, "GET", path, "").Expect(t, "page "+path, http.StatusOK)
	var recs []json.RawMessage
	if err := json.Unmarshal(res.Body, &recs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var pg struct {
		Page, PageSize, TotalCount int
		Continuation               string
	}
	if err := json.Unmarshal([]byte(res.Header.Get("X-Query-Pagination")), &pg); err != nil {
		t.Fatalf("%s: X-Query-Pagination %q: %v", path, res.Header.Get("X-Query-Pagination"), err)
	}
	out := make([]string, len(recs))
	for i, rec := range recs {
		out[i] = strings.TrimSpace(string(rec))
	}
	return out, pg.Continuation
}
