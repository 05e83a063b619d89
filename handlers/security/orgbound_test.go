package security_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/engine"
	"credo/handlers/security"
	"credo/internal/testenv"
	"credo/legacy"
)

// TestGrantsBoundToTokenOrganization (decisions §7): a user with persons and memberships in
// organizations A and B, holding a token (or, for version 1, the client secret) for A, has
// exactly A's grants on every route, version 1's included. The case is generated over every
// flag and every permission object: B's groups hold every flag (Administrate included) on
// every object, and so does another organization's group that the user was given a
// membership of *recorded in A*; A's group holds one flag at a time. Only what that flag
// allows is allowed. Version 1 sees A's registrations only, whether the credential is A's
// token or A's secret.
func TestGrantsBoundToTokenOrganization(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			inA, tokenA := e.user(t, "", false)
			orgA, orgB := inA.OrganizationIdentifier, newOrg(t, e)
			inB := e.secret(t, security.SecretOptions{Email: emailOf(t, e, inA.UserIdentifier), Organization: orgB})
			if inB.UserIdentifier != inA.UserIdentifier {
				t.Fatal("the second secret made another user")
			}
			tokenB := e.token(t, inB.Secret)
			user := inA.UserIdentifier
			ga := e.group(t, orgA, "A staff "+user[:8])
			gb := e.group(t, orgB, "B admins "+user[:8])
			borrowed := e.group(t, orgB, "B borrowed "+user[:8])
			e.member(t, user, ga, orgA)
			e.member(t, user, gb, orgB)
			e.member(t, user, borrowed, orgA) // a membership recorded in A of B's group
			eps := e.srv.Endpoints()
			objs := objects(eps)

			all := []auth.Flag{auth.Execute, auth.Read, auth.Write, auth.Create, auth.Delete, auth.Administrate, auth.Configure}
			e.grant(t, gb, objs, all...)
			e.grant(t, borrowed, objs, all...)
			for _, f := range append([]auth.Flag{""}, all...) {
				e.revokeGrants(t, ga)
				if f != "" {
					e.grant(t, ga, objs, f)
				}
				e.clock.Advance(auth.MaxDecisionTTL + time.Second)
				checkEndpoints(t, e, eps, fmt.Sprintf("A's credential, A grants %q", f), tokenA, inA.Secret, func(need string) bool {
					return f == auth.Administrate || (f != "" && string(f) == need)
				})
			}
			// The credentials for B have B's grants: everything.
			checkEndpoints(t, e, eps, "B's credential", tokenB, inB.Secret, func(string) bool { return true })

			// Roles are A's group only.
			var in struct{ Principal struct{ Roles []string } }
			e.do(t, "GET", "security/tokens/introspect", "", bearer(tokenA)...).expect(t, "introspect", http.StatusOK).json(t, &in)
			if want := []string{engine.Slugify("A staff " + user[:8])}; !slices.Equal(in.Principal.Roles, want) {
				t.Errorf("roles with the token for A: %v, want %v", in.Principal.Roles, want)
			}

			// Version 1: the organization is the credential's, and so are the grants: A's group
			// may read registrations.
			e.revokeGrants(t, ga)
			e.grant(t, ga, []string{legacy.RegistrationsObject}, auth.Read)
			e.clock.Advance(auth.MaxDecisionTTL + time.Second)
			for i, org := range []string{orgA, orgB, orgB} {
				e.create(t, "Registration", map[string]any{"OrganizationIdentifier": org, "EventIdentifier": uuid.NewString(),
					"LearnerIdentifier": user, "LastChangeType": fmt.Sprint("Created ", i)})
			}
			for _, c := range []struct {
				name, credential string
				want             int
			}{{"token for A", tokenA, 1}, {"secret of A", inA.Secret, 1}, {"token for B", tokenB, 2}, {"secret of B", inB.Secret, 2}} {
				var n struct{ Count int }
				e.do(t, "POST", "/api/registrations/count", "{}", bearer(c.credential)...).expect(t, "v1 count with the "+c.name, http.StatusOK).json(t, &n)
				if n.Count != c.want {
					t.Errorf("v1 count with the %s: %d, want %d", c.name, n.Count, c.want)
				}
			}
		})
	}
}

// emailOf reads a user's Email.
func emailOf(t *testing.T, e *env, user string) string {
	t.Helper()
	var u map[string]any
	e.do(t, "GET", "security/users/"+user, "", bearer(e.operatorToken(t))...).expect(t, "get user", http.StatusOK).json(t, &u)
	return u["Email"].(string)
}

// operatorToken returns a token of a new operator.
func (e *env) operatorToken(t *testing.T) string {
	t.Helper()
	_, tok := e.user(t, "", true)
	return tok
}
