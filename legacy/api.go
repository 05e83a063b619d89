package legacy

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
)

// Deps are what the version-1 API needs from the server that mounts it.
type Deps struct {
	// Store is the partition that /api serves (--v1-partition).
	Store *engine.Store
	// Authenticate returns the caller of a request (a v2 bearer JWT, or a raw client secret as
	// "Authorization: Bearer <secret>"). It returns nil and no error when the request carries no
	// credential, and an error wrapping auth.ErrUnauthenticated for one that is not valid.
	Authenticate func(*http.Request) (*auth.Principal, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// api is the version-1 API bound to its partition; every table name it uses comes from t.
type api struct {
	store        *engine.Store
	authenticate func(*http.Request) (*auth.Principal, error)
	clock        func() time.Time
	t            tables
	sql          fragments
}

// uuidPattern keeps non-UUID path segments off the routes, so that they are 404s (decisions §4)
// and fixed segments such as events/classes are never taken for an id.
const uuidPattern = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

// Routes mounts every version-1 operation of api.md under /api on the root router r. Other
// methods on those paths answer 405 with Allow. It panics when the registry lacks a descriptor
// or member that the version-1 API reads, which is a build defect like a bad embedded file.
func Routes(r *mux.Router, deps Deps) {
	a := newAPI(deps)
	const (
		reg = "/api/registrations/{registration:" + uuidPattern + "}"
		ev  = "/api/events/{event:" + uuidPattern + "}"
	)
	routes := []struct {
		method, path string
		anonymous    bool
		h            problem.HandlerFunc
	}{
		{http.MethodGet, "/api/events/list-events", false, a.listEvents},
		{http.MethodGet, "/api/events/classes", true, a.classes},
		{http.MethodGet, "/api/events/scrap-paper", true, a.scrapPaper},
		{http.MethodPost, ev, false, a.addEvent},
		{http.MethodPost, ev + "/cancel", false, a.cancelEvent},
		{http.MethodPost, "/api/registrations/count", false, a.countRegistrations},
		{http.MethodPost, "/api/registrations/search", false, a.searchRegistrations},
		{http.MethodGet, reg, false, a.getRegistration},
		{http.MethodDelete, reg, false, a.deleteRegistration},
		{http.MethodPost, reg + "/commands/register-lax", false, a.registerLax},
		{http.MethodPost, reg + "/commands/transfer-lax", false, a.transferLax},
		{http.MethodPost, reg + "/commands/cancel", false, a.cancelRegistration},
		{http.MethodPost, reg + "/commands/change-assessment", false, a.changeAssessment},
		{http.MethodPost, reg + "/commands/grant-accommodation", false, a.grantAccommodation},
		{http.MethodPost, reg + "/commands/revoke-accommodation", false, a.revokeAccommodation},
		{http.MethodPost, "/api/integration/partner/callback/{activity:" + uuidPattern + "}/{learner:" + uuidPattern + "}", true, a.callback},
	}
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range routes {
		var h http.Handler = rt.h
		if !rt.anonymous {
			h = a.protect(rt.h)
		}
		r.Handle(rt.path, h).Methods(rt.method)
		if _, seen := allowed[rt.path]; !seen {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for _, p := range paths {
		methods := allowed[p]
		sort.Strings(methods)
		r.Handle(p, methodNotAllowed(methods))
	}
}

func newAPI(deps Deps) *api {
	if deps.Store == nil || deps.Authenticate == nil {
		panic("legacy: Deps.Store and Deps.Authenticate are required")
	}
	a := &api{store: deps.Store, authenticate: deps.Authenticate, clock: deps.Now}
	if a.clock == nil {
		a.clock = time.Now
	}
	a.t = resolveTables(deps.Store)
	a.sql = buildFragments(deps.Store, a.t)
	return a
}

// now is the current instant as stored values carry it.
func (a *api) now() engine.DateTime {
	return engine.DateTime{Time: a.clock().UTC().Truncate(100 * time.Nanosecond)}
}

// protect authenticates a route: no credential is 401, a credential of another partition 401,
// and one without an organization 403 (every version-1 record belongs to the caller's organization).
func (a *api) protect(h problem.HandlerFunc) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := a.authenticate(r)
		if err != nil {
			return err
		}
		if p == nil {
			return unauthenticated("A credential is required: send Authorization: Bearer with an access token or a client secret.")
		}
		if p.Partition != "" && p.Partition != a.store.Partition {
			return unauthenticated("The credential belongs to another partition.")
		}
		if p.OrganizationIdentifier == "" {
			return problem.New(http.StatusForbidden, "The credential acts in no organization.")
		}
		return h(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}
}

func unauthenticated(detail string) *problem.Problem {
	p := problem.New(http.StatusUnauthorized, "%s", detail)
	p.Header = http.Header{"WWW-Authenticate": {`Bearer realm="credo"`}}
	return p
}

// caller returns the authenticated principal of a protected route.
func caller(r *http.Request) *auth.Principal { return auth.FromContext(r.Context()) }

func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		p := problem.New(http.StatusMethodNotAllowed, "%s is not offered here; allowed: %s.", r.Method, allow)
		p.Header = http.Header{"Allow": {allow}}
		return p
	})
}

// pathID returns a path variable that the route's pattern restricted to a UUID, in the
// lower-case form that ids are stored in.
func pathID(r *http.Request, name string) string { return strings.ToLower(mux.Vars(r)[name]) }
