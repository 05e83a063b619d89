// Package handlers serves credo's v2 HTTP surface: routes generated from the record-group
// descriptors, the hand-written modules' routes, authentication and authorization around them.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// Authenticator establishes the caller of a v2 request in a partition.
type Authenticator interface {
	Authenticate(r *http.Request, partition string) (*auth.Principal, error)
}

// Authorizer decides whether a caller may use a permission flag on an object (a group path).
type Authorizer interface {
	Allow(ctx context.Context, p *auth.Principal, object, need string) error
}

// Server holds what the router needs; build it with its fields and call Handler.
type Server struct {
	Registry *engine.Registry
	Database *engine.Database
	// Modules are the hand-written v2 routes (platform, security, compliance, gradebook export…).
	Modules []route.Route
	// Auth authenticates protected routes; nil serves every route anonymously (tests of the
	// engine's HTTP behaviour only — cmd/credo always sets it).
	Auth Authenticator
	// Authz authorizes protected routes; nil allows every authenticated caller.
	Authz Authorizer
	// Root, when set, receives the router so that other APIs (version 1) can mount on it.
	Root func(r *mux.Router)
}

// Endpoint is one routed v2 operation, as security/settings/endpoints and OpenAPI list it.
type Endpoint struct {
	Method, Path, Summary string
	Access                route.Access
	Object, Need          string
	// Resource and Op are set for generated record-group routes.
	Resource *engine.Resource
	Op       engine.Op
}

// Endpoints lists every v2 operation the server routes, generated ones first, sorted by path.
func (s *Server) Endpoints() []Endpoint {
	var out []Endpoint
	for _, r := range s.Registry.Public() {
		for _, op := range r.Ops() {
			out = append(out, Endpoint{Method: opMethod[op], Path: opPath(r, op), Summary: opSummary(r, op),
				Access: route.Protected, Object: r.Path, Need: opNeed[op], Resource: r, Op: op})
		}
	}
	for _, m := range s.Modules {
		out = append(out, Endpoint{Method: m.Method, Path: m.Path, Summary: m.Summary, Access: m.Access, Object: m.Object, Need: m.Need})
	}
	return out
}

// Handler builds the router.
func (s *Server) Handler() http.Handler {
	root := mux.NewRouter()
	root.NotFoundHandler = problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return problem.New(http.StatusNotFound, "No route matches %s %s.", r.Method, r.URL.Path)
	})
	root.MethodNotAllowedHandler = root.NotFoundHandler
	v2 := newV2Router(root.NotFoundHandler, s.partition)

	allowed := map[string][]string{}
	add := func(method, path string, h http.Handler) {
		v2.handle(path, h).Methods(method)
		allowed[path] = append(allowed[path], method)
	}
	add(http.MethodGet, "openapi.json", problem.HandlerFunc(s.serveOpenAPI))
	for _, m := range s.Modules {
		add(m.Method, m.Path, s.guard(m.Access, m.Object, m.Need, m.Handler))
	}
	// Collection sub-paths first, so that "count" and "search" are never taken for an id.
	for _, r := range s.Registry.Public() {
		h := &resourceHandler{res: r}
		for _, op := range []engine.Op{engine.OpCount, engine.OpSearch, engine.OpList, engine.OpCreate} {
			path := opPath(r, op)
			if _, seen := allowed[path]; !seen {
				allowed[path] = nil
			}
			if r.Offers(op) {
				add(opMethod[op], path, s.guard(route.Protected, r.Path, opNeed[op], h.handler(op)))
			} else if op == engine.OpCount || op == engine.OpSearch {
				v2.handle(path, methodNotAllowed(nil)) // before the item routes take it for an id
			}
		}
	}
	for _, r := range s.Registry.Public() {
		h := &resourceHandler{res: r}
		for _, op := range []engine.Op{engine.OpGet, engine.OpExists, engine.OpUpdate, engine.OpPatch, engine.OpDelete} {
			path := opPath(r, op)
			if _, seen := allowed[path]; !seen {
				allowed[path] = nil
			}
			if r.Offers(op) {
				add(opMethod[op], path, s.guard(route.Protected, r.Path, opNeed[op], h.handler(op)))
			}
		}
	}
	// Every known path answers other methods with 405 and the Allow header.
	paths := make([]string, 0, len(allowed))
	for p := range allowed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		methods := append([]string(nil), allowed[p]...)
		sort.Strings(methods)
		v2.handle(p, methodNotAllowed(methods))
	}
	if s.Root != nil {
		s.Root(root)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/") {
			v2.ServeHTTP(w, r)
			return
		}
		root.ServeHTTP(w, r)
	})
}

// v2Router dispatches a /v2/{partition}/... request by the first two segments after the
// partition (its key, e.g. "security/users-comments") to a router holding only the routes of
// that key. Each route matches its template with a pattern, not gorilla/mux's regular
// expressions, and its handler runs behind the partition middleware. Routes whose key is not
// literal go to other, which also answers what no bucket matches.
type v2Router struct {
	buckets    map[string]*mux.Router
	other      *mux.Router
	middleware mux.MiddlewareFunc
}

func newV2Router(notFound http.Handler, middleware mux.MiddlewareFunc) *v2Router {
	v := &v2Router{buckets: map[string]*mux.Router{}, middleware: middleware}
	v.other = v.router(notFound)
	return v
}

// router returns a router whose unmatched requests go to fallback.
func (v *v2Router) router(fallback http.Handler) *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler, r.MethodNotAllowedHandler = fallback, fallback
	return r
}

// handle adds a route for path (relative to the partition) to its key's router.
func (v *v2Router) handle(path string, h http.Handler) *mux.Route {
	key := routeKey(path)
	r := v.other
	if !strings.Contains(key, "{") {
		if r = v.buckets[key]; r == nil {
			r = v.router(v.other)
			v.buckets[key] = r
		}
	}
	return r.NewRoute().MatcherFunc(compilePattern("/v2/{partition}/" + path).match).Handler(v.middleware(h))
}

func (v *v2Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v2/")
	if _, rest, ok := strings.Cut(rest, "/"); ok {
		if b, ok := v.buckets[routeKey(rest)]; ok {
			b.ServeHTTP(w, r)
			return
		}
	}
	v.other.ServeHTTP(w, r)
}

// routeKey returns the first two segments of a path relative to the partition.
func routeKey(path string) string {
	i := strings.IndexByte(path, '/')
	if i < 0 {
		return path
	}
	if j := strings.IndexByte(path[i+1:], '/'); j >= 0 {
		return path[:i+1+j]
	}
	return path
}

// partition resolves {partition} to its store before anything else: an unknown partition is
// a 404 even without a credential (decisions §2).
func (s *Server) partition(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slug := mux.Vars(r)["partition"]
		store, ok := s.Database.Store(slug)
		if !ok {
			problem.Write(w, r, problem.New(http.StatusNotFound, "The partition %q does not exist.", slug))
			return
		}
		next.ServeHTTP(w, r.WithContext(engine.WithStore(r.Context(), store)))
	})
}

// guard authenticates and authorizes a route per its access level.
func (s *Server) guard(access route.Access, object, need string, h http.Handler) http.Handler {
	if access == route.Public || s.Auth == nil {
		return h
	}
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		store := engine.StoreFrom(r.Context())
		p, err := s.Auth.Authenticate(r, store.Partition)
		if err != nil {
			return err
		}
		ctx := auth.WithPrincipal(r.Context(), p)
		if access == route.Protected && s.Authz != nil {
			if err := s.Authz.Allow(ctx, p, object, need); err != nil {
				return err
			}
		}
		h.ServeHTTP(w, r.WithContext(ctx))
		return nil
	})
}

func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		p := problem.New(http.StatusMethodNotAllowed, "%s is not offered here; allowed: %s.", r.Method, orNone(allow))
		p.Header = http.Header{"Allow": {allow}}
		return p
	})
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

var opMethod = map[engine.Op]string{
	engine.OpGet: http.MethodGet, engine.OpExists: http.MethodHead, engine.OpUpdate: http.MethodPut,
	engine.OpPatch: http.MethodPatch, engine.OpDelete: http.MethodDelete, engine.OpCreate: http.MethodPost,
	engine.OpCount: http.MethodGet, engine.OpList: http.MethodGet, engine.OpSearch: http.MethodGet,
}

// opNeed is the permission flag each operation needs (decisions §7).
var opNeed = map[engine.Op]string{
	engine.OpGet: "Read", engine.OpExists: "Read", engine.OpCount: "Read", engine.OpList: "Read",
	engine.OpSearch: "Read", engine.OpCreate: "Create", engine.OpUpdate: "Write", engine.OpPatch: "Write",
	engine.OpDelete: "Delete",
}

// opPath returns the route template of an operation, relative to the partition.
func opPath(r *engine.Resource, op engine.Op) string {
	switch op {
	case engine.OpCount:
		return r.Path + "/count"
	case engine.OpSearch:
		return r.Path + "/search"
	case engine.OpList, engine.OpCreate:
		return r.Path
	}
	p := r.Path
	for i := range r.Key {
		p += "/{" + keyVar(i) + "}"
	}
	return p
}

func keyVar(i int) string { return "key" + string(rune('0'+i)) }

func opSummary(r *engine.Resource, op engine.Op) string {
	switch op {
	case engine.OpGet:
		return "Get a " + r.Name + " by its key."
	case engine.OpExists:
		return "Tell whether a " + r.Name + " exists."
	case engine.OpUpdate:
		return "Replace a " + r.Name + "."
	case engine.OpPatch:
		return "Change members of a " + r.Name + " with a JSON merge patch."
	case engine.OpDelete:
		return "Delete a " + r.Name + "."
	case engine.OpCreate:
		return "Create a " + r.Name + "."
	case engine.OpCount:
		return "Count " + r.Name + " records matching the filters."
	case engine.OpList:
		return "List " + r.Name + " records matching the filters, one page at a time."
	case engine.OpSearch:
		return "Search " + r.Name + " records, returning reduced records."
	}
	return ""
}

func logOrigin(r *http.Request, origin map[string]string) {
	if len(origin) > 0 {
		slog.Debug("origin", "path", r.URL.Path, "origin", origin)
	}
}
