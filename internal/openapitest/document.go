package openapitest

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/observe"
	"credo/handlers/route"
)

// Document is the OpenAPI document of a server that routes the record groups of reg and the
// given routes: the v2 module routes, and version-1 routes (paths from the root) as mounted
// beside them. It is what a suite that serves only some modules validates against.
func Document(reg *engine.Registry, routes ...route.Route) any {
	srv := &handlers.Server{Registry: reg}
	for _, rt := range routes {
		if strings.HasPrefix(rt.Path, "/") {
			srv.Mounted = append(srv.Mounted, rt)
		} else {
			srv.Modules = append(srv.Modules, rt)
		}
	}
	return srv.OpenAPI()
}

// served is the observer that Served puts around a handler; it logs nothing.
var served = observe.New(observe.Options{Logger: slog.New(slog.DiscardHandler)})

// Served wraps a module's handler in the observer that the server puts around every handler
// (request id, X-Request-Id on every answer, RequestId in problem documents), so that a suite
// serving the bare handler answers as the server does and is validated as such.
func Served(h http.Handler) http.Handler { return served.Handler(h) }

// Resolved returns a module route's handler after its Needs has resolved, in reg, the
// descriptors it keeps, as handlers.Server.Handler does once at start-up, behind the Accept
// check the server puts it behind (route.Negotiated: the 406, Vary: Accept); a suite that
// serves the bare handler must call it first.
func Resolved(t testing.TB, reg *engine.Registry, rt route.Route) http.Handler {
	t.Helper()
	if rt.Needs != nil {
		if err := rt.Needs(reg); err != nil {
			t.Fatalf("%s %s: %v", rt.Method, rt.Path, err)
		}
	}
	return route.Negotiated(rt, rt.Handler)
}
