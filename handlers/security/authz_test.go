package security_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"credo/auth"
	"credo/handlers"
	"credo/handlers/route"
	"credo/internal/testenv"
)

// TestPermissionsMatrix is generated from the routes, version 1's included: a non-operator
// without permissions is refused every protected operation (403); a permission row granting
// one of Read, Create, Write and Delete on every object to a group the user belongs to allows
// exactly the operations that need that flag; Administrate allows all; an operator needs no
// row. Version-1 operations are sent with the access token and with the raw client secret.
func TestPermissionsMatrix(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			user, token := e.user(t, "", false)
			op, opToken := e.user(t, "", true)
			group := e.group(t, user.OrganizationIdentifier, "Auditors "+user.UserIdentifier[:8])
			e.member(t, user.UserIdentifier, group, user.OrganizationIdentifier)
			eps := e.srv.Endpoints()
			objs := objects(eps)

			groups := map[string]bool{}
			for _, ep := range eps {
				if ep.Resource != nil {
					groups[ep.Resource.Path] = true
				}
			}
			if len(groups) != len(e.reg.Public()) {
				t.Fatalf("the routes cover %d groups, the descriptors %d", len(groups), len(e.reg.Public()))
			}

			check := func(name string, token, secret string, allowed func(need string) bool) {
				t.Helper()
				checkEndpoints(t, e, eps, name, token, secret, allowed)
			}
			check("no permission", token, user.Secret, func(string) bool { return false })
			check("operator", opToken, op.Secret, func(string) bool { return true })

			// Each case changes the rows, then moves the clock past the decision cache.
			cases := []struct {
				flags []auth.Flag
				allow func(need string) bool
			}{
				{flags: []auth.Flag{auth.Read}, allow: func(n string) bool { return n == "Read" }},
				{flags: []auth.Flag{auth.Create}, allow: func(n string) bool { return n == "Create" }},
				{flags: []auth.Flag{auth.Write}, allow: func(n string) bool { return n == "Write" }},
				{flags: []auth.Flag{auth.Delete}, allow: func(n string) bool { return n == "Delete" }},
				{flags: []auth.Flag{auth.Execute}, allow: func(n string) bool { return n == "Execute" }},
				{flags: []auth.Flag{auth.Read, auth.Write}, allow: func(n string) bool { return n == "Read" || n == "Write" }},
				{flags: []auth.Flag{auth.Administrate}, allow: func(string) bool { return true }},
				{flags: []auth.Flag{auth.TrialAccess, auth.Configure}, allow: func(string) bool { return false }},
				{flags: nil, allow: func(string) bool { return false }},
			}
			for _, c := range cases {
				e.revokeGrants(t, group)
				if len(c.flags) > 0 {
					e.grant(t, group, objs, c.flags...)
				}
				e.clock.Advance(auth.MaxDecisionTTL + time.Second)
				check(fmt.Sprint(c.flags), token, user.Secret, c.allow)
			}
		})
	}
}

// TestMembershipsDecideGroups checks that only current memberships carry permissions: one
// not yet effective or already expired grants nothing, and a change takes effect once the
// decision cache has aged out.
func TestMembershipsDecideGroups(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			user, token := e.user(t, "", false)
			org := user.OrganizationIdentifier
			now := e.clock.Now()
			past, future := now.Add(-time.Hour).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)
			const object = "security/users"
			cases := []struct {
				name    string
				members map[string]any
				current bool
			}{
				{name: "Not yet", members: map[string]any{"MembershipEffective": future}},
				{name: "Expired", members: map[string]any{"MembershipEffective": past, "MembershipExpiry": past}},
				{name: "Until later", members: map[string]any{"MembershipEffective": past, "MembershipExpiry": future}, current: true},
				{name: "Always", members: map[string]any{"MembershipEffective": "0001-01-01T00:00:00Z"}, current: true},
			}
			for _, c := range cases {
				g := e.group(t, org, c.name)
				m := c.members
				m["UserIdentifier"], m["GroupIdentifier"], m["OrganizationIdentifier"] = user.UserIdentifier, g, org
				e.create(t, "Membership", m)
				e.grant(t, g, []string{object}, auth.Read)
				e.clock.Advance(auth.MaxDecisionTTL + time.Second)
				want := http.StatusForbidden
				if c.current {
					want = http.StatusOK
				}
				e.do(t, "GET", object+"/count", "", bearer(token)...).expect(t, c.name, want)
				if c.current {
					e.revokeGrants(t, g) // so that the next case stands alone
				}
			}
			// Roles are the slugs of the current groups; two hours later "Until later" has
			// expired and "Not yet" has begun.
			for _, want := range []string{"[always until-later]", "[always not-yet]"} {
				var in struct{ Principal struct{ Roles []string } }
				e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "introspect", http.StatusOK).json(t, &in)
				if got := fmt.Sprint(in.Principal.Roles); got != want {
					t.Errorf("roles %s, want %s", got, want)
				}
				e.clock.Advance(2 * time.Hour)
			}
		})
	}
}

// checkEndpoints sends every protected endpoint a request with the bearer token, and each
// version-1 endpoint also with the raw client secret (when secret is set), and checks that
// exactly the flags allowed lets a request past authorization: refused is 403, allowed is
// anything but 401 and 403 (the request is empty, so often a 400 or 404).
func checkEndpoints(t *testing.T, e *env, eps []handlers.Endpoint, name, token, secret string, allowed func(need string) bool) {
	t.Helper()
	for _, ep := range eps {
		if ep.Access != route.Protected {
			continue
		}
		creds := []string{token}
		if strings.HasPrefix(ep.Path, "/") && secret != "" {
			creds = append(creds, secret)
		}
		path := concrete(ep.Path)
		for i, cred := range creds {
			what := name + " with the token"
			if i > 0 {
				what = name + " with the secret"
			}
			res := e.do(t, ep.Method, path, "", bearer(cred)...)
			switch {
			case allowed(ep.Need) && (res.status == http.StatusForbidden || res.status == http.StatusUnauthorized):
				t.Errorf("%s: %s needs %s and is refused: %d %s", what, epName(ep), ep.Need, res.status, res.body)
			case !allowed(ep.Need) && res.status != http.StatusForbidden:
				t.Errorf("%s: %s needs %s and answers %d, want 403: %s", what, epName(ep), ep.Need, res.status, res.body)
			}
		}
	}
}
