package handlers_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"credo/internal/testenv"
)

// TestAnswersThatReadAcceptVaryOnIt: every answer of an operation that reads Accept — list and
// search in JSON or CSV, get and its 304, HEAD, count, create, a module route such as
// openapi.json, and the 406s and problems that follow the negotiation — says Vary: Accept
// once, so that a shared cache never hands one client's CSV (or 406) to another.
func TestAnswersThatReadAcceptVaryOnIt(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			item := newComment(t, ts, "")
			etag := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK).header.Get("ETag")
			for _, tc := range []struct {
				name, method, path, body string
				header                   []string
				status                   int
			}{
				{name: "list in JSON", method: "GET", path: "security/users-comments", status: http.StatusOK},
				{name: "list in CSV", method: "GET", path: "security/users-comments", header: []string{"Accept", "text/csv"}, status: http.StatusOK},
				{name: "search in CSV", method: "GET", path: "security/users-comments/search", header: []string{"Accept", "text/csv"}, status: http.StatusOK},
				{name: "list in XML", method: "GET", path: "security/users-comments", header: []string{"Accept", "application/xml"}, status: http.StatusNotAcceptable},
				{name: "list with a bad parameter", method: "GET", path: "security/users-comments?Take=0", status: http.StatusBadRequest},
				{name: "get", method: "GET", path: item, status: http.StatusOK},
				{name: "get not modified", method: "GET", path: item, header: []string{"If-None-Match", etag}, status: http.StatusNotModified},
				{name: "get in CSV", method: "GET", path: item, header: []string{"Accept", "text/csv"}, status: http.StatusNotAcceptable},
				{name: "head", method: "HEAD", path: item, status: http.StatusOK},
				{name: "count", method: "GET", path: "security/users-comments/count", status: http.StatusOK},
				{name: "create in XML", method: "POST", path: "security/users-comments", body: "{}", header: []string{"Accept", "application/xml"}, status: http.StatusNotAcceptable},
				{name: "openapi.json", method: "GET", path: "openapi.json", status: http.StatusOK},
				{name: "openapi.json in CSV", method: "GET", path: "openapi.json", header: []string{"Accept", "text/csv"}, status: http.StatusNotAcceptable},
			} {
				res := ts.do(t, tc.method, tc.path, tc.body, tc.header...).expect(t, tc.name, tc.status)
				var names []string
				for _, v := range res.header.Values("Vary") {
					for _, f := range strings.Split(v, ",") {
						names = append(names, strings.TrimSpace(f))
					}
				}
				if n := len(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s != "Accept" })); n != 1 {
					t.Errorf("%s: Vary %q, want Accept named once", tc.name, names)
				}
			}
			// The document says so: on the answers of an operation with a 406, its 406 and 304.
			var doc struct {
				Paths      map[string]map[string]json.RawMessage
				Components struct {
					Responses map[string]struct{ Headers map[string]any }
				}
			}
			if err := json.Unmarshal(ts.do(t, "GET", "openapi.json", "").body, &doc); err != nil {
				t.Fatal(err)
			}
			for _, op := range []struct{ path, method, status string }{
				{"/v2/{partition}/security/users-comments", "get", "200"},
				{"/v2/{partition}/security/users-comments/{CommentIdentifier}", "get", "200"},
				{"/v2/{partition}/openapi.json", "get", "200"},
			} {
				var o struct {
					Responses map[string]struct{ Headers map[string]any }
				}
				if err := json.Unmarshal(doc.Paths[op.path][op.method], &o); err != nil || o.Responses[op.status].Headers["Vary"] == nil {
					t.Errorf("openapi.json: %s %s %s documents no Vary", op.method, op.path, op.status)
				}
			}
			for _, name := range []string{"NotAcceptable", "NotModified"} {
				if doc.Components.Responses[name].Headers["Vary"] == nil {
					t.Errorf("openapi.json: the %s response documents no Vary", name)
				}
			}
		})
	}
}
