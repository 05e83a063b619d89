// Package handlers serves credo's v2 HTTP surface: routes generated from the record-group
// descriptors, the hand-written modules' routes, authentication and authorization around them.
package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/idempotency"
	"credo/handlers/observe"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// Authenticator establishes the caller of a v2 request in a partition.
type Authenticator interface {
	Authenticate(r *http.Request, partition string) (*auth.Principal, error)
}

// Authorizer decides whether a caller may use a permission flag on an object (a group path),
// and supplies the write checks that descriptors name in `hooks: authorize:`.
type Authorizer interface {
	Allow(ctx context.Context, p *auth.Principal, object, need string) error
	// WriteCheck returns the named check, false when the authorizer has none of that name.
	WriteCheck(name string) (engine.WriteCheck, bool)
}

// ContinuationKeys supplies the key that signs a partition's continuation tokens (see
// request.Continuation). Every process serving a partition must return the same key for it,
// so that a token from one replica continues on another.
type ContinuationKeys interface {
	ContinuationKey(partition string) []byte
}

// Server holds what the router needs; build it with its fields and call Handler.
type Server struct {
	Registry *engine.Registry
	Database *engine.Database
	// Modules are the hand-written v2 routes (platform, security, compliance, gradebook export…).
	Modules []route.Route
	// Auth authenticates every route that is not public. Required: Handler refuses to build a
	// server without it rather than serve anonymously.
	Auth Authenticator
	// Authz authorizes protected routes and supplies the descriptors' write checks. Required.
	Authz Authorizer
	// Root, when set, receives the router so that other APIs (version 1) can mount on it; its
	// error (a descriptor the API needs is missing) fails Handler.
	Root func(r *mux.Router) error
	// Mounted describes the routes that Root mounts, with paths from the root ("/api/…"), for
	// the OpenAPI document; their Handlers are not used.
	Mounted []route.Route
	// Observer gives every request (v2, v1, probes) its id, access line and metrics; nil means
	// one that logs to slog.Default() and registers its metrics nowhere.
	Observer *observe.Observer
	// CORSOrigins are the origins whose browser scripts may call the API (see cors.go); none
	// means no CORS headers at all.
	CORSOrigins []string
	// Continuation signs the Continue tokens of lists and searches; nil means a random key
	// made by Handler, with which tokens continue only on this server (tests, one replica).
	Continuation ContinuationKeys
	// Idempotency keeps the answers of creates sent with an Idempotency-Key; nil means one
	// on the real clock (its purge is the caller's to run).
	Idempotency *idempotency.Keeper

	draining atomic.Bool
}

// Endpoint is one routed operation, as security/settings/endpoints and resources list it.
type Endpoint struct {
	// Path is relative to /v2/{partition}/ for a v2 operation, and from the root ("/api/…")
	// for a Mounted (version-1) one.
	Method, Path, Summary string
	Access                route.Access
	Object, Need          string
	// Resource and Op are set for generated record-group routes.
	Resource *engine.Resource
	Op       engine.Op
}

// Endpoints lists every operation the server routes: the generated v2 ones, the modules',
// then the Mounted (version-1) ones, whose permission objects are granted like the groups'.
func (s *Server) Endpoints() []Endpoint {
	var out []Endpoint
	for _, r := range s.Registry.Public() {
		for _, op := range r.Ops() {
			out = append(out, Endpoint{Method: opMethod[op], Path: opPath(r, op), Summary: opSummary(r, op),
				Access: route.Protected, Object: r.Path, Need: opNeed[op], Resource: r, Op: op})
		}
	}
	for _, routes := range [][]route.Route{s.Modules, s.Mounted} {
		for _, m := range routes {
			out = append(out, Endpoint{Method: m.Method, Path: m.Path, Summary: m.Summary, Access: m.Access, Object: m.Object, Need: m.Need})
		}
	}
	return out
}

// Handler builds the router behind the middleware that every request passes: the observer
// (request id, access line, metrics), the nosniff header, CORS, then panic recovery. A path
// with an empty, "." or ".." segment, or a percent-encoded slash, is a 404 for every method,
// never a redirect (see isCleanPath and hasEncodedSlash); so is any path no route matches. It fails closed: without a registry, a
// database, an authenticator or an authorizer, or when the authorizer lacks a write check that
// a descriptor names, it returns an error instead of a server that would let callers through.
func (s *Server) Handler() (http.Handler, error) {
	if s.Registry == nil || s.Database == nil {
		return nil, errors.New("handlers: a server needs a registry and a database")
	}
	if s.Auth == nil || s.Authz == nil {
		return nil, errors.New("handlers: a server needs an authenticator and an authorizer; it never serves protected routes without them")
	}
	checks := map[*engine.Resource]engine.WriteCheck{}
	for _, r := range s.Registry.Public() {
		c, err := s.writeCheck(r)
		if err != nil {
			return nil, err
		}
		checks[r] = c
	}
	if s.Observer == nil {
		s.Observer = observe.New(observe.Options{})
	}
	if s.Idempotency == nil {
		k, err := idempotency.New(s.Registry, idempotency.Config{})
		if err != nil {
			return nil, fmt.Errorf("handlers: Idempotency-Key: %w", err)
		}
		s.Idempotency = k
	}
	if s.Continuation == nil {
		k, err := newProcessKey()
		if err != nil {
			return nil, err
		}
		s.Continuation = k
	}
	root := mux.NewRouter().SkipClean(true)
	root.NotFoundHandler = problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return problem.New(http.StatusNotFound, "No route matches %s %s.", engine.ShownName(r.Method), engine.ShownPath(r.URL.EscapedPath()))
	})
	root.MethodNotAllowedHandler = root.NotFoundHandler
	v2 := newV2Router(root.NotFoundHandler, s.partition, s.Observer)

	allowed := map[string][]string{}
	answered := map[string]bool{} // paths whose 405 route is registered
	add := func(method, path string, h http.Handler) {
		v2.handle(method, path, h)
		allowed[path] = append(allowed[path], method)
	}
	for _, m := range s.ownRoutes() {
		add(m.Method, m.Path, route.Negotiated(m, m.Handler))
	}
	for _, m := range s.Modules {
		if m.Needs != nil {
			if err := m.Needs(s.Registry); err != nil {
				return nil, fmt.Errorf("handlers: %s %s: %w", m.Method, m.Path, err)
			}
		}
		if m.Idempotent {
			// The keeper would read the body under the generated routes' limit, not the
			// module's own; a module that needs the protocol must first say its limit.
			return nil, fmt.Errorf("handlers: %s %s is marked Idempotent, which v2 modules do not support yet", m.Method, m.Path)
		}
		serve := route.Negotiated(m, m.Handler)
		if m.RefusesIdempotencyKey != "" {
			serve = idempotency.Refuse(m.RefusesIdempotencyKey, serve)
		}
		add(m.Method, m.Path, s.guard(m.Access, m.Object, m.Need, serve))
		if m.Probe {
			s.Observer.Route(v2Prefix + m.Path).Probe = true
		}
	}
	// Collection sub-paths first, so that "count" and "search" are never taken for an id.
	for _, r := range s.Registry.Public() {
		h := &resourceHandler{res: r, check: checks[r], keys: s.Continuation}
		for _, op := range []engine.Op{engine.OpCount, engine.OpSearch, engine.OpList, engine.OpCreate} {
			path := opPath(r, op)
			if _, seen := allowed[path]; !seen {
				allowed[path] = nil
			}
			if r.Offers(op) {
				serve := h.handler(op)
				if op == engine.OpCreate {
					serve = acceptsJSON(s.Idempotency.WrapCreate(idempotency.FromContext, MaxBodyBytes, r, serve, s.found(h)))
				}
				add(opMethod[op], path, s.guard(route.Protected, r.Path, opNeed[op], serve))
			} else if op == engine.OpCount || op == engine.OpSearch {
				v2.handle("", path, methodNotAllowed(nil)) // before the item routes take it for an id
			}
		}
	}
	// Every known path answers other methods with 405 and the Allow header: the fixed paths
	// (modules, collections, count, search) before the item routes, so that a PUT, PATCH,
	// DELETE or HEAD of .../count is not taken for an item named "count" (a 404), then the items.
	notAllowed := func() {
		paths := make([]string, 0, len(allowed))
		for p := range allowed {
			if !answered[p] {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			methods := append([]string(nil), allowed[p]...)
			sort.Strings(methods)
			v2.handle("", p, methodNotAllowed(methods))
			answered[p] = true
		}
	}
	notAllowed()
	for _, r := range s.Registry.Public() {
		h := &resourceHandler{res: r, check: checks[r], keys: s.Continuation}
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
	notAllowed()
	s.probes(root)
	if s.Root != nil {
		if err := s.Root(root); err != nil {
			return nil, fmt.Errorf("handlers: root routes: %w", err)
		}
	}
	root.Use(s.nameRoute)
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isCleanPath(r.URL.Path) || hasEncodedSlash(r.URL) {
			root.NotFoundHandler.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v2/") {
			v2.ServeHTTP(w, r)
			return
		}
		root.ServeHTTP(w, r)
	})
	h = recoverPanics(h)
	h = s.cors(h)
	h = nosniff(h)
	return s.Observer.Handler(h), nil
}

// nosniff marks every response, preflights and panics' problems included: no response of the
// service is content a browser should sniff into another type.
func nosniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// nameRoute records the template of the root router's route (version 1, probes) that a
// request matched.
func (s *Server) nameRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt := mux.CurrentRoute(r); rt != nil {
			if t, err := rt.GetPathTemplate(); err == nil {
				observe.NameRoute(r, s.Observer.Route(t))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// writeCheck resolves the checks a descriptor names (hooks: authorize:) with the authorizer
// into one that runs them all in order; nil when it names none.
func (s *Server) writeCheck(r *engine.Resource) (engine.WriteCheck, error) {
	var checks []engine.WriteCheck
	for _, name := range r.Authorize {
		c, ok := s.Authz.WriteCheck(name)
		if !ok || c == nil {
			return nil, fmt.Errorf("handlers: %s names the authorize check %q, which the authorizer does not supply", r.File, name)
		}
		checks = append(checks, c)
	}
	if len(checks) == 0 {
		return nil, nil
	}
	return func(ctx context.Context, tx *engine.Store, res *engine.Resource, old, new engine.Record) error {
		for _, c := range checks {
			if err := c(ctx, tx, res, old, new); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// v2Router dispatches a /v2/{partition}/... request by the first two segments after the
// partition (its key, e.g. "security/users-comments") to the routes of that key (a bucket),
// tried in the order they were added: the first whose method (any, for a route added without
// one) and template fit serves the request, its template's variables set for mux.Vars. What
// no route of its bucket fits goes to other, the routes whose key is not literal, and what
// none fits there to notFound. Templates match as gorilla/mux's would (see pattern), without
// its router: gorilla/mux copied each request twice, for its variables and for its route. The
// variables go into the request's context (withVars), so mux.Vars works in a v2 handler but
// mux.CurrentRoute is nil there; the route's template is observe's (observe.Name).
type v2Router struct {
	buckets    map[string][]v2Route
	other      []v2Route
	notFound   http.Handler
	middleware mux.MiddlewareFunc
	obs        *observe.Observer
}

// v2Route is one template of a v2 route with its method ("" for any) and handler.
type v2Route struct {
	pattern *pattern
	method  string
	handler http.Handler
}

func newV2Router(notFound http.Handler, middleware mux.MiddlewareFunc, obs *observe.Observer) *v2Router {
	return &v2Router{buckets: map[string][]v2Route{}, notFound: notFound, middleware: middleware, obs: obs}
}

// handle adds a route for method ("" for any) and path (relative to the partition) to its
// key's bucket.
func (v *v2Router) handle(method, path string, h http.Handler) {
	template := v2Prefix + path
	rt := v2Route{pattern: compilePattern(template), method: method,
		handler: observe.Name(v.obs.Route(template), v.middleware(h))}
	if key := routeKey(path); !strings.Contains(key, "{") {
		v.buckets[key] = append(v.buckets[key], rt)
		return
	}
	v.other = append(v.other, rt)
}

func (v *v2Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v2/")
	if _, rest, ok := strings.Cut(rest, "/"); ok {
		if b, ok := v.buckets[routeKey(rest)]; ok && serveFirst(b, w, r) {
			return
		}
	}
	if !serveFirst(v.other, w, r) {
		v.notFound.ServeHTTP(w, r)
	}
}

// serveFirst serves r with the first of routes that fits it and reports whether one did.
func serveFirst(routes []v2Route, w http.ResponseWriter, r *http.Request) bool {
	for i := range routes {
		rt := &routes[i]
		if rt.method != "" && rt.method != r.Method {
			continue
		}
		if vars, ok := rt.pattern.match(r.URL.Path); ok {
			rt.handler.ServeHTTP(w, withVars(r, vars))
			return true
		}
	}
	return false
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
			problem.Write(w, r, problem.New(http.StatusNotFound, "The partition %s does not exist.", engine.Quoted(slug)))
			return
		}
		observe.SetPartition(r, slug)
		next.ServeHTTP(w, withContext(r, engine.WithStore(r.Context(), store)))
	})
}

// guard authenticates and authorizes a route per its access level. Handler has checked that
// the server has an authenticator and an authorizer; a principal is required from here on.
func (s *Server) guard(access route.Access, object, need string, h http.Handler) http.Handler {
	if access == route.Public {
		return h
	}
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		store := engine.StoreFrom(r.Context())
		p, err := s.Auth.Authenticate(r, store.Partition)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("handlers: the authenticator returned no caller: %w", auth.ErrUnauthenticated)
		}
		observe.SetUser(r, p.UserIdentifier)
		ctx := auth.WithPrincipal(r.Context(), p)
		if access == route.Protected {
			if err := s.Authz.Allow(ctx, p, object, need); err != nil {
				return err
			}
		}
		h.ServeHTTP(w, withContext(r, ctx))
		return nil
	})
}

// found is h's answer to the retry of a create whose work was done and whose answer was lost
// (idempotency.Found). A caller who may read the group gets the record as it is now, which a
// get of its Location shows it anyway. A caller allowed to create and not to read gets
// idempotency.ErrNotShown, and the record is not read: its create's answer showed the record
// as it was written, and the record as it is now would show others' later edits (and
// whether it still exists), which that caller may not read (docs/design.md, "Retries").
func (s *Server) found(h *resourceHandler) idempotency.Found {
	return func(w http.ResponseWriter, r *http.Request, key []any) error {
		ctx := r.Context()
		if err := s.Authz.Allow(ctx, auth.FromContext(ctx), h.res.Path, opNeed[engine.OpGet]); err != nil {
			if errors.Is(err, auth.ErrForbidden) {
				return idempotency.ErrNotShown
			}
			return err
		}
		return h.found(w, r, key)
	}
}

func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		p := problem.New(http.StatusMethodNotAllowed, "%s is not offered here; allowed: %s.", engine.ShownName(r.Method), orNone(allow))
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
	for _, k := range r.Key {
		p += "/{" + k.Name + "}"
	}
	return p
}

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

// processKey is one random continuation key for every partition of this process.
type processKey []byte

func newProcessKey() (processKey, error) {
	k := make(processKey, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("handlers: continuation key: %w", err)
	}
	return k, nil
}

func (k processKey) ContinuationKey(partition string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(partition))
	return m.Sum(nil)
}
