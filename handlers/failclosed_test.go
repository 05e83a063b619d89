package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/route"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// partialAuthorizer allows everything but supplies no write check.
type partialAuthorizer struct{}

func (partialAuthorizer) Allow(context.Context, *auth.Principal, string, string) error { return nil }
func (partialAuthorizer) WriteCheck(string) (engine.WriteCheck, bool)                  { return nil, false }

// TestServerFailsClosed: a server without an authenticator or an authorizer, whose
// authorizer lacks a write check that a descriptor names, or with a module that asks for an
// Idempotency-Key it would not get, is a construction error, never a
// server that lets callers through.
func TestServerFailsClosed(t *testing.T) {
	reg := registry(t)
	db, err := engine.Open(context.Background(), testenv.Backends(t)[0].URL, []string{testenv.Partition(t)}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		name string
		srv  *handlers.Server
		want string
	}{
		{"no authenticator", &handlers.Server{Registry: reg, Database: db, Authz: testauth.AllowAll{}}, "authenticator"},
		{"no authorizer", &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator()}, "authorizer"},
		{"neither", &handlers.Server{Registry: reg, Database: db}, "authenticator"},
		{"no database", &handlers.Server{Registry: reg, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}, "database"},
		{"a descriptor's check missing", &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: partialAuthorizer{}}, `"permission-grant"`},
		{"a module marked Idempotent", &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{},
			Modules: []route.Route{{Method: http.MethodPost, Path: "test/command", Tag: "platform", Idempotent: true}}}, "Idempotent"},
	} {
		h, err := tc.srv.Handler()
		if err == nil || h != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Handler() = %v, %v; want an error naming %s", tc.name, h, err, tc.want)
		}
	}
	if _, err := (&handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}).Handler(); err != nil {
		t.Errorf("a complete server: %v", err)
	}
}
