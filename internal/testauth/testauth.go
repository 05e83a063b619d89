// Package testauth gives tests the explicit allow-all authentication and authorization that
// handlers.Server needs where a suite is not about security: the server refuses to be built
// without an authenticator and an authorizer, so a test says out loud that it opens
// everything. Only test files may import it (internal/layers keeps it so).
package testauth

import (
	"context"
	"net/http"

	"credo/auth"
	"credo/engine"
)

// Caller authenticates every request as its principal.
type Caller struct{ Principal *auth.Principal }

// Authenticate returns the caller's principal, for any partition.
func (c Caller) Authenticate(*http.Request, string) (*auth.Principal, error) {
	p := *c.Principal
	return &p, nil
}

// Operator is a Caller acting as an operator: every organization, every permission.
func Operator() Caller {
	return Caller{Principal: &auth.Principal{UserIdentifier: "0190a6f0-0000-7000-8000-0000000000ff", Operator: true}}
}

// AllowAll permits every operation and every write.
type AllowAll struct{}

// Allow permits everything.
func (AllowAll) Allow(context.Context, *auth.Principal, string, string) error { return nil }

// WriteCheck supplies every named check as one that permits every write.
func (AllowAll) WriteCheck(string) (engine.WriteCheck, bool) {
	return func(context.Context, *engine.Store, *engine.Resource, engine.Record, engine.Record) error { return nil }, true
}
