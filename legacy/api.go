package legacy

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/idempotency"
	"credo/handlers/limit"
	"credo/handlers/observe"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// Deps are what the version-1 API needs from the server that mounts it.
type Deps struct {
	// Store is the partition that /api serves (--v1-partition).
	Store *engine.Store
	// Authenticate returns the caller of a request (a v2 bearer JWT, or a raw client secret as
	// "Authorization: Bearer <secret>"). It returns nil and no error when the request carries no
	// credential, and an error wrapping auth.ErrUnauthenticated for one that is not valid.
	Authenticate func(*http.Request) (*auth.Principal, error)
	// Authz decides the permission each protected route names (its Object and Need), as it
	// does for version 2: handlers/security's authorizer. Required: version 1 is never served
	// without permission checks.
	Authz Authorizer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Limits bound the anonymous partner callback per client address (limit.Callback); nil
	// means limit.Defaults.
	Limits *limit.Set
	// Idempotency keeps the answers of the commands sent with an Idempotency-Key (the routes
	// marked Idempotent); nil means one on Now.
	Idempotency *idempotency.Keeper
}

// Authorizer decides whether a caller may use a permission flag (Need) on a permission object
// (Object); a refusal wraps auth.ErrForbidden and names both. handlers.Authorizer is one.
type Authorizer interface {
	Allow(ctx context.Context, p *auth.Principal, object, need string) error
}

// api is the version-1 API bound to its partition; every table name it uses comes from t.
type api struct {
	store        *engine.Store
	authenticate func(*http.Request) (*auth.Principal, error)
	authz        Authorizer
	clock        func() time.Time
	limits       *limit.Set
	keeper       *idempotency.Keeper
	t            tables
	sql          fragments
}

// uuidPattern keeps non-UUID path segments off the routes, so that they are 404s (decisions §4)
// and fixed segments such as events/classes are never taken for an id.
const uuidPattern = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

// Routes mounts every version-1 operation of api.md under /api on the root router r. Other
// methods on those paths answer 405 with Allow. Every route that is not public authenticates
// and then asks deps.Authz for its permission. It resolves the descriptors the version-1 API
// reads once, here: a registry that lacks one, or a member of one, is an error naming it, and
// the server does not start (handlers.Server.Root). It panics when deps lacks the store, the
// authenticator or the authorizer, which are defects of the code that mounts it.
func Routes(r *mux.Router, deps Deps) error {
	a, err := newAPI(deps)
	if err != nil {
		return err
	}
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range a.routes() {
		if err := checkAccess(rt); err != nil {
			panic(err)
		}
		switch {
		case rt.Idempotent && rt.RefusesIdempotencyKey != "":
			return fmt.Errorf("legacy: %s %s both takes and refuses Idempotency-Key", rt.Method, rt.Path)
		case rt.Idempotent:
			rt.Handler = a.keeper.Wrap(a.storeOf, MaxBodyBytes, rt.Handler)
		case rt.RefusesIdempotencyKey != "":
			rt.Handler = idempotency.Refuse(rt.RefusesIdempotencyKey, rt.Handler)
		}
		// Accept is checked before the keeper, so that a replay answers it as the first did.
		rt.Handler = route.Negotiated(rt, rt.Handler)
		h := rt.Handler
		if rt.Access != route.Public {
			h = a.protect(rt)
		}
		path := muxPath(rt)
		r.Handle(path, a.inPartition(h)).Methods(rt.Method)
		if _, seen := allowed[path]; !seen {
			paths = append(paths, path)
		}
		allowed[path] = append(allowed[path], rt.Method)
	}
	for _, p := range paths {
		methods := allowed[p]
		sort.Strings(methods)
		r.Handle(p, methodNotAllowed(methods))
	}
	return nil
}

// checkAccess refuses a route that would be served with less checking than it says: a
// protected route must name its permission object and a known flag.
func checkAccess(rt route.Route) error {
	switch rt.Access {
	case route.Public, route.Authenticated:
		return nil
	case route.Protected:
		if rt.Object == "" {
			return fmt.Errorf("legacy: %s %s is protected but names no permission object", rt.Method, rt.Path)
		}
		if _, err := auth.ParseFlag(rt.Need); err != nil {
			return fmt.Errorf("legacy: %s %s: %w", rt.Method, rt.Path, err)
		}
		return nil
	default:
		return fmt.Errorf("legacy: %s %s has an unknown access level %d", rt.Method, rt.Path, rt.Access)
	}
}

// muxPath is a route's path as gorilla/mux matches it: path parameters of the uuid format
// match only UUIDs.
func muxPath(rt route.Route) string {
	path := rt.Path
	for _, p := range rt.Params {
		if p.In == route.InPath && p.Schema.Format == "uuid" {
			path = strings.Replace(path, "{"+p.Name+"}", "{"+p.Name+":"+uuidPattern+"}", 1)
		}
	}
	return path
}

func newAPI(deps Deps) (*api, error) {
	if deps.Store == nil {
		panic("legacy: Deps.Store is required")
	}
	if deps.Authenticate == nil || deps.Authz == nil {
		panic("legacy: Deps.Authenticate and Deps.Authz are required: version 1 is never served without authentication and permission checks")
	}
	a := &api{store: deps.Store, authenticate: deps.Authenticate, authz: deps.Authz, clock: deps.Now, limits: deps.Limits,
		keeper: deps.Idempotency}
	if a.clock == nil {
		a.clock = time.Now
	}
	var err error
	if a.keeper == nil {
		if a.keeper, err = idempotency.New(deps.Store.Registry(), idempotency.Config{Now: a.clock}); err != nil {
			return nil, err
		}
	}
	if a.limits == nil {
		a.limits = limit.Default()
	}
	if a.t, err = resolveTables(deps.Store.Registry()); err != nil {
		return nil, err
	}
	a.sql = buildFragments(deps.Store, a.t)
	return a, nil
}

// now is the current instant as stored values carry it.
func (a *api) now() engine.DateTime {
	return engine.DateTime{Time: a.clock().UTC().Truncate(100 * time.Nanosecond)}
}

// protect authenticates and authorizes a route: no credential is 401, a credential of another
// partition 401, one without an organization 403 (every version-1 record belongs to the
// caller's organization), and, on a Protected route, one without the route's permission flag
// on its object 403 naming both (decisions §7, §14), before the handler reads anything.
func (a *api) protect(rt route.Route) problem.HandlerFunc {
	h := rt.Handler
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := a.authenticate(r)
		if err != nil {
			return err
		}
		if p == nil {
			observe.SetCredential(r, observe.CredentialNone)
			return auth.Unauthenticated(auth.ReasonMissing, "A credential is required: send Authorization: Bearer with an access token or a client secret.")
		}
		if p.Partition != "" && p.Partition != a.store.Partition {
			return auth.Unauthenticated(auth.ReasonPartition, "The credential belongs to another partition.")
		}
		if p.OrganizationIdentifier == "" {
			return problem.New(http.StatusForbidden, "The credential acts in no organization.")
		}
		observe.SetUser(r, p.UserIdentifier)
		ctx := auth.WithPrincipal(r.Context(), p)
		if rt.Access == route.Protected {
			if err := a.authz.Allow(ctx, p, rt.Object, rt.Need); err != nil {
				return err
			}
		}
		return h(w, r.WithContext(ctx))
	}
}

// inPartition records, for the access log, that the request is served in the API's partition,
// and gives the request's context its store, as the v2 router does, before h's errors are
// written: problem.Write translates a statement's error with it, so that a 503 names the
// partition and the timeout, and a statement naming a missing column is checked against the
// partition's tables (see engine.ErrNotMigrated). On the request's own context (reqctx) that
// costs no allocation.
func (a *api) inPartition(h problem.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		observe.SetPartition(r, a.store.Partition)
		if ctx := engine.WithStore(r.Context(), a.store); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// storeOf is the store of every version-1 request: the API's partition.
func (a *api) storeOf(*http.Request) *engine.Store { return a.store }

// caller returns the authenticated principal of a protected route.
func caller(r *http.Request) *auth.Principal { return auth.FromContext(r.Context()) }

func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		p := problem.New(http.StatusMethodNotAllowed, "%s is not offered here; allowed: %s.", engine.ShownName(r.Method), allow)
		p.Header = http.Header{"Allow": {allow}}
		return p
	})
}

// pathID returns a path variable that the route's pattern restricted to a UUID, in the
// lower-case form that ids are stored in.
func pathID(r *http.Request, name string) string { return strings.ToLower(mux.Vars(r)[name]) }
