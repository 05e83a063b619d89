package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"credo/handlers/observe"
)

// TestV2RouterServesLikeMux: the v2 router picks, for every method and path, the route that
// gorilla/mux picked when each key had a router of its own falling back to one for the routes
// whose key is not literal, then to the 404 (the dispatch before be63062), with the same
// variables. The routes have every shape the server registers: 405 routes (no method) before
// item routes, a literal segment where another route has a variable, two variables, a trailing
// slash, a one-segment key, and keys with a variable, one of which serves a path whose key
// has a bucket that does not fit it.
func TestV2RouterServesLikeMux(t *testing.T) {
	routes := []struct{ method, path string }{
		{"GET", "security/users-comments/count"},
		{"", "security/users-comments/count"},
		{"GET", "security/users-comments"},
		{"POST", "security/users-comments"},
		{"", "security/users-comments"},
		{"GET", "security/users-comments/{CommentIdentifier}"},
		{"HEAD", "security/users-comments/{CommentIdentifier}"},
		{"DELETE", "security/users-comments/{CommentIdentifier}"},
		{"", "security/users-comments/{CommentIdentifier}"},
		{"POST", "security/users/commands/x"},
		{"", "security/users/commands/x"},
		{"GET", "security/users/{UserIdentifier}"},
		{"", "security/users/{UserIdentifier}"},
		{"GET", "security/users-connections/{FromUserIdentifier}/{ToUserIdentifier}"},
		{"", "security/users-connections/{FromUserIdentifier}/{ToUserIdentifier}"},
		{"GET", "security/settings/"},
		{"DELETE", "security/tokens/{jti}"},
		{"", "security/tokens/{jti}"},
		{"GET", "progress/gradebooks/export"},
		{"GET", "progress/gradebooks/{GradebookIdentifier}"},
		{"GET", "progress/gradebooks/download/{ExportKey}"},
		{"", "progress/gradebooks/download/{ExportKey}"},
		{"GET", "docs"},
		{"GET", "openapi.json"},
		{"GET", "security/things/{id}"},
		{"GET", "{module}/things"},
		{"", "{module}/things"},
		{"POST", "plugins/{name}/run"},
		{"GET", "plugins/{name}"},
	}
	// answer names the route that served a request and the variables it saw.
	answer := func(i int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			vars := mux.Vars(r)
			names := make([]string, 0, len(vars))
			for k, v := range vars {
				names = append(names, k+"="+v)
			}
			sort.Strings(names)
			fmt.Fprintf(w, "route %d %v", i, names)
		})
	}
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "404") })

	v2 := newV2Router(notFound, func(h http.Handler) http.Handler { return h }, observe.New(observe.Options{}))
	other := mux.NewRouter().SkipClean(true)
	other.NotFoundHandler, other.MethodNotAllowedHandler = notFound, notFound
	buckets := map[string]*mux.Router{}
	for i, rt := range routes {
		v2.handle(rt.method, rt.path, answer(i))
		r := other
		if key := routeKey(rt.path); !strings.Contains(key, "{") {
			if r = buckets[key]; r == nil {
				r = mux.NewRouter().SkipClean(true)
				r.NotFoundHandler, r.MethodNotAllowedHandler = other, other
				buckets[key] = r
			}
		}
		m := r.Path(v2Prefix + rt.path).Handler(answer(i))
		if rt.method != "" {
			m.Methods(rt.method)
		}
	}
	reference := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/v2/")
		if _, rest, ok := strings.Cut(rest, "/"); ok {
			if b, ok := buckets[routeKey(rest)]; ok {
				b.ServeHTTP(w, r)
				return
			}
		}
		other.ServeHTTP(w, r)
	})

	paths := map[string]bool{"/v2/": true, "/v2/e01": true, "/v2/e01/": true, "/v2//": true, "/v2/e01/security": true}
	for _, rt := range routes {
		for _, v := range []string{"x", "count", "search", "commands", "download", "export", "things", "", "a b", "é", "\xff", "{id}"} {
			segs := strings.Split("/v2/e01/"+rt.path, "/")
			for i, s := range segs {
				if strings.HasPrefix(s, "{") {
					segs[i] = v
				}
			}
			p := strings.Join(segs, "/")
			for n := 3; n <= len(segs); n++ {
				q := strings.Join(segs[:n], "/")
				paths[q], paths[q+"/"], paths[q+"//"], paths[q+"/x"], paths[q+"/x/y"] = true, true, true, true, true
			}
			paths[strings.Replace(p, "/e01/", "//", 1)] = true
		}
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get", "BREW"}
	served := map[string]int{}
	for p := range paths {
		for _, method := range methods {
			req := httptest.NewRequest(method, "/", nil)
			req.URL.Path = p
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			reference.ServeHTTP(want, req)
			v2.ServeHTTP(got, req)
			if got.Body.String() != want.Body.String() {
				t.Errorf("%s %q: the v2 router says %q, gorilla/mux %q", method, p, got.Body, want.Body)
			}
			served[strings.SplitN(got.Body.String(), " [", 2)[0]]++
		}
	}
	// Every route is reached, so that the comparison is not only of 404s.
	for i := range routes {
		if served[fmt.Sprintf("route %d", i)] == 0 {
			t.Errorf("no request reached route %d (%s %s)", i, routes[i].method, routes[i].path)
		}
	}
	t.Logf("%d requests: %v", len(paths)*len(methods), served)
}
