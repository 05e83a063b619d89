package request

import (
	"context"

	"credo/auth"
	"credo/engine"
)

// Scope returns the engine scope of the request's caller: every organization for operators
// and for internal calls without a caller, the caller's organization otherwise. A caller bound
// to no organization gets the zero Scope, which every verb refuses: it fails closed rather
// than seeing every organization.
func Scope(ctx context.Context) engine.Scope {
	p := auth.FromContext(ctx)
	if p == nil || p.Operator {
		return engine.AllOrganizations()
	}
	return engine.Organization(p.OrganizationIdentifier)
}
