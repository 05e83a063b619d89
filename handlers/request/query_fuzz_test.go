package request_test

import (
	"bytes"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"credo/engine"
	_ "credo/handlers/people" // group-slug, membership-deletion
	"credo/handlers/request"
	_ "credo/handlers/security" // permission-mask
	"credo/resources"
)

// FuzzListQuery: a raw query string of a count, list or search, read as the v2 handlers read
// it (ParseQuery, TakeContinue, ListQuery, Continuation.Read). Nothing panics; every refusal
// is a *engine.ValidationError naming at least one parameter the client sent; what ParseQuery
// accepts reads as url.ParseQuery reads it; an accepted query keeps every filter given (one
// condition per filter parameter, a text filter's value as sent, an int filter's value
// written as JSON writes it), the paging given (written so too; or the defaults when none
// is), in range, and a projection of at least one member. A Continue token the server did not
// sign is a 400 naming Continue.
func FuzzListQuery(f *testing.F) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		f.Fatal(err)
	}
	rs := reg.Public()
	for _, raw := range []string{
		"", "Take=5&Page=2", "Filter.Take=5&Take=5", "Filter.Take=5&Take=6", "Take=0", "Take=1001", "Page=1000001",
		"Sort=FullName+desc,Email", "Sort=,,", "Sort=FullName asc desc", "Includes=Email,Email", "Includes=",
		"Excludes=UserIdentifier", "Format=CSV", "Filter.Format=xml", "Origin.When=2024-03-10T14:30:00%2B01:00",
		"Origin.Nope=1", "Identifier=0190A6F0-0000-7000-8000-00000000000A", "Identifier=%7B0190a6f0-0000-7000-8000-00000000000a%7D",
		"Email=a%00b", "Email=%ff", "Take=5;Sort=x", "%zz=1", "Continue=abc", "Continue=AQ&Page=2", "Continue=&Take=5",
		"IsLocked=TRUE", "IsLocked=1", "GradebookCreatedSince=2024-03-10T14:30:00Z", "Take=+5", "Page=0x10", "Take=٣",
		"Filter.Page=2&Page=2", "Filter.Includes=Email&Excludes=Email", "Take=5&Take=5", "UserPasswordHash=x",
		"Page=%2B1", "Take=007", "Take=-0", "Page=-1", "Take=5%20", "Filter.Take=05", "FieldSequence=%2B5",
		"FieldSequence=-05", "FieldSequence=-2147483648", " ", "%20Take=5", "Take%09=5", "FieldSequence=2147483648", "Filter.FieldSequence=007",
	} {
		for i := range rs {
			f.Add(uint8(i), uint8(i%3), raw)
		}
	}
	key := bytes.Repeat([]byte{7}, 32)
	f.Fuzz(func(t *testing.T, which, kind uint8, raw string) {
		r := rs[int(which)%len(rs)]
		k := request.Kind(int(kind) % 3)
		values, err := request.ParseQuery(raw)
		if err != nil {
			named(t, raw, err, nil)
			return
		}
		if want, uerr := url.ParseQuery(raw); uerr == nil && !reflect.DeepEqual(values, want) && !(len(values) == 0 && len(want) == 0) {
			t.Fatalf("ParseQuery(%q) = %v, url.ParseQuery = %v", raw, values, want)
		}
		sent := url.Values{}
		for name, vals := range values {
			sent[name] = vals
		}
		tok, err := request.TakeContinue(values)
		if err != nil {
			named(t, raw, err, []string{"Continue"})
			return
		}
		q, err := request.ListQuery(r, values, k)
		if err != nil {
			named(t, raw, err, paramsOf(values))
			return
		}
		accepted(t, r, k, raw, values, q)
		if tok != "" {
			c := request.Continuation{Key: key, Partition: "e01", Resource: r, Kind: k, Scope: engine.AllOrganizations()}
			_, _, err := c.Read(q, tok)
			named(t, raw, err, []string{"Continue"})
		}
		// A get reads Includes and Excludes alone, through the same projection.
		if _, err := request.Fields(r, sent); err != nil {
			named(t, raw, err, paramsOf(sent))
		}
	})
}

// paramsOf lists the parameter names of values.
func paramsOf(values url.Values) []string {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	return names
}

// named checks that err is a 400 naming at least one parameter, each of them one of params as
// engine.ShownName shows it (nil: any).
func named(t *testing.T, raw string, err error, params []string) {
	t.Helper()
	var verr *engine.ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("query %q: %v (%T), not a ValidationError", raw, err, err)
	}
	if len(verr.Fields) == 0 {
		t.Fatalf("query %q: %v names no parameter", raw, err)
	}
	if params == nil {
		return
	}
	for member := range verr.Fields {
		found := false
		for _, p := range params {
			if engine.ShownName(p) == member { // a name that does not read unambiguously is shown quoted
				found = true
			}
		}
		if !found {
			t.Fatalf("query %q: the problem names %q, which is not a parameter it sent (%v): %v", raw, member, params, err)
		}
	}
}

var pagingNames = map[string]bool{"Page": true, "Take": true, "Sort": true, "Excludes": true, "Includes": true, "Format": true}

// accepted checks an accepted query against what values give.
func accepted(t *testing.T, r *engine.Resource, k request.Kind, raw string, values url.Values, q engine.Query) {
	t.Helper()
	filters := 0
	for name := range values {
		if !pagingNames[name] && !strings.HasPrefix(name, "Filter.") && !strings.HasPrefix(name, "Origin.") {
			filters++
		}
	}
	if len(q.Conds) != filters {
		t.Fatalf("query %q gives %d filters, the query has %d conditions", raw, filters, len(q.Conds))
	}
	for _, c := range q.Conds {
		name := c.Field.Name
		if c.Field.Key {
			name = "Identifier"
		}
		if s, ok := c.Value.(string); ok && c.Field.Type == engine.TypeString && s != values.Get(name) {
			if f, ok := r.Filter(name); !ok || f.Field != c.Field {
				continue // a filter under another name (ClassTitle)
			}
			t.Fatalf("query %q: %s filters on %q", raw, name, s)
		}
		if n, ok := c.Value.(int64); ok && values.Has(name) && strconv.FormatInt(n, 10) != values.Get(name) && values.Get(name) != "-0" {
			t.Fatalf("query %q: %s %q read as %d", raw, name, values.Get(name), n)
		}
	}
	if k == request.KindCount {
		return
	}
	check := func(name string, got, def int) {
		v := values.Get(name)
		if v == "" {
			v = values.Get("Filter." + name)
		}
		if v == "" && !values.Has(name) && !values.Has("Filter."+name) {
			if got != def {
				t.Fatalf("query %q: %s is %d without being given", raw, name, got)
			}
			return
		}
		if strconv.Itoa(got) != v {
			// A number as JSON writes it (engine.ParseInteger): +5 and 05 are refused.
			t.Fatalf("query %q: %s %q read as %d", raw, name, v, got)
		}
	}
	check("Page", q.Page, 1)
	check("Take", q.Take, engine.DefaultTake)
	if q.Page < 1 || q.Page > 1_000_000 || q.Take < 1 || q.Take > r.MaxTake {
		t.Fatalf("query %q: Page %d, Take %d out of range", raw, q.Page, q.Take)
	}
	if len(q.Fields) == 0 || len(q.Sort) == 0 {
		t.Fatalf("query %q: %d members, %d sort terms", raw, len(q.Fields), len(q.Sort))
	}
	if q.Format != engine.FormatJSON && q.Format != engine.FormatCSV {
		t.Fatalf("query %q: format %q", raw, q.Format)
	}
}
