package request_test

import (
	"context"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers/request"
)

// TestScopeOfCaller: operators and internal calls see every organization, a caller its own;
// a caller bound to no organization gets the zero Scope, which every verb refuses, rather
// than every organization.
func TestScopeOfCaller(t *testing.T) {
	const org = "0190a6f0-0000-7000-8000-00000000000a"
	for _, tc := range []struct {
		name   string
		caller *auth.Principal
		all    bool
		org    string
	}{
		{name: "internal call", all: true},
		{name: "operator", caller: &auth.Principal{Operator: true, OrganizationIdentifier: org}, all: true},
		{name: "member", caller: &auth.Principal{OrganizationIdentifier: org}, org: org},
		{name: "no organization", caller: &auth.Principal{}},
	} {
		ctx := context.Background()
		if tc.caller != nil {
			ctx = auth.WithPrincipal(ctx, tc.caller)
		}
		s := request.Scope(ctx)
		id, one := s.OrganizationID()
		if s.All() != tc.all || id != tc.org || one != (tc.org != "") {
			t.Errorf("%s: %v, want all %v, organization %q", tc.name, s, tc.all, tc.org)
		}
		if !tc.all && tc.org == "" && s != (engine.Scope{}) {
			t.Errorf("%s: %v, want the zero Scope", tc.name, s)
		}
	}
}
