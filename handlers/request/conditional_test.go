package request_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

func withHeader(name string, values ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, v := range values {
		r.Header.Add(name, v)
	}
	return r
}

// TestIfMatch: "*", a list of strong and weak tags (kept as sent), several field lines and empty
// list elements are read; anything else, and a list naming no tag, is a 400 naming If-Match.
func TestIfMatch(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   []string
	}{
		{nil, nil},
		{[]string{"*"}, []string{"*"}},
		{[]string{" * "}, []string{"*"}},
		{[]string{`"a"`}, []string{`"a"`}},
		{[]string{`"a", W/"b" ,"c"`}, []string{`"a"`, `W/"b"`, `"c"`}},
		{[]string{`"a"`, `"b"`}, []string{`"a"`, `"b"`}},
		{[]string{`, "a",,`}, []string{`"a"`}},
		{[]string{`""`}, []string{`""`}},
		{[]string{"\"\x80\xff\""}, []string{"\"\x80\xff\""}},
	} {
		got, err := request.IfMatch(withHeader(request.IfMatchHeader, tc.values...))
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("If-Match %q: %q, %v; want %q", tc.values, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{
		{""}, {" , "}, {"abc"}, {`"a`}, {`"a" "b"`}, {`"a";"b"`}, {`*, "a"`}, {`"a"`, "*"}, {"**"},
		{`w/"a"`}, {`W/a`}, {"\"a b\""}, {"\"a\tb\""}, {"\"a\x7fb\""},
	} {
		_, err := request.IfMatch(withHeader(request.IfMatchHeader, bad...))
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields[request.IfMatchHeader]) == 0 {
			t.Errorf("If-Match %q: %v, want a 400 naming If-Match", bad, err)
		}
	}
}

// TestNoneMatch: If-None-Match holds for "*" and for a list naming the ETag, weakly or not; not
// for other tags or without the header; a malformed one is a 400 naming If-None-Match.
func TestNoneMatch(t *testing.T) {
	const etag = `"v2"`
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"*"}, true},
		{[]string{`"v2"`}, true},
		{[]string{`W/"v2"`}, true},
		{[]string{`"v1", "v2"`}, true},
		{[]string{`"v1"`, `W/"v2"`}, true},
		{[]string{`"v1"`}, false},
		{[]string{`"V2"`}, false},
		{[]string{`"v22"`, `W/"v"`}, false},
	} {
		got, err := request.NoneMatch(withHeader(request.IfNoneMatchHeader, tc.values...), etag)
		if err != nil || got != tc.want {
			t.Errorf("If-None-Match %q against %s: %v, %v; want %v", tc.values, etag, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "v2", `"v2`, `*,"v2"`} {
		r := withHeader(request.IfNoneMatchHeader, bad)
		_, err := request.NoneMatch(r, etag)
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields[request.IfNoneMatchHeader]) == 0 {
			t.Errorf("If-None-Match %q: %v, want a 400 naming If-None-Match", bad, err)
		}
		if err := request.CheckNoneMatch(r); err == nil {
			t.Errorf("CheckNoneMatch(%q) passed", bad)
		}
	}
}
