package security_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"credo/auth"
	"credo/handlers/route"
	"credo/internal/testenv"
	"credo/legacy"
)

// TestIntrospectAndValidate checks the shapes of tokens/introspect and tokens/validate.
func TestIntrospectAndValidate(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, _ := e.user(t, "", false)
			g := e.group(t, res.OrganizationIdentifier, "Field Staff")
			e.member(t, res.UserIdentifier, g, res.OrganizationIdentifier)
			var tok struct{ AccessToken string }
			generate(t, e, fmt.Sprintf(`{"Secret":%q,"Lifetime":3600,"Debug":true}`, res.Secret)).expect(t, "token", http.StatusOK).json(t, &tok)

			var in struct {
				Jwt struct {
					Identifier, Audience, Issuer, Subject, Expiry, Lifetime string
					Roles                                                   []string
				}
				Principal struct {
					User         struct{ Identifier, Email, Name string }
					Organization struct{ Identifier, Name string }
					Partition    string
					Roles        []string
					Operator     bool
					Credential   string
				}
			}
			e.do(t, "GET", "security/tokens/introspect", "", bearer(tok.AccessToken)...).expect(t, "introspect", http.StatusOK).json(t, &in)
			j, p := in.Jwt, in.Principal
			if j.Subject != res.UserIdentifier || j.Audience != "credo" || j.Issuer != "credo" || j.Lifetime != "3,600 seconds (~1 hour)" ||
				fmt.Sprint(j.Roles) != "[field-staff]" || !strings.HasSuffix(j.Expiry, "+00:00") || j.Identifier != jti(t, tok.AccessToken) {
				t.Errorf("Jwt: %+v", j)
			}
			if p.User.Identifier != res.UserIdentifier || p.User.Email == "" || p.User.Name == "" || p.Organization.Identifier != res.OrganizationIdentifier ||
				p.Partition != e.partition || fmt.Sprint(p.Roles) != "[field-staff]" || p.Operator || p.Credential != "Bearer" {
				t.Errorf("Principal: %+v", p)
			}
			b, _ := decodeSegment(strings.Split(tok.AccessToken, ".")[1])
			for _, claim := range []string{`"user_debug"`, `"role_debug"`, `"partition_slug"`, `"org_id"`, `"role":["field-staff"]`} {
				if !strings.Contains(string(b), claim) {
					t.Errorf("Debug token claims %s lack %s", b, claim)
				}
			}

			type report struct {
				Subject, SignatureVerification, ExpiryVerification, AudienceVerification, IssuerVerification string
			}
			want := report{res.UserIdentifier, "Passed", "Not Expired (59 minutes remaining)", "Passed", "Passed"}
			for name, send := range map[string]func() response{
				"body": func() response { return e.do(t, "POST", "security/tokens/validate", tok.AccessToken) },
				"JSON string": func() response {
					return e.do(t, "POST", "security/tokens/validate", fmt.Sprintf("%q", tok.AccessToken))
				},
				"header": func() response { return e.do(t, "POST", "security/tokens/validate", "", bearer(tok.AccessToken)...) },
			} {
				var got report
				send().expect(t, name, http.StatusOK).json(t, &got)
				if got != want {
					t.Errorf("validate (%s): %+v, want %+v", name, got, want)
				}
			}
			e.do(t, "POST", "security/tokens/validate", "not a token").expect(t, "malformed", http.StatusBadRequest)
			e.do(t, "POST", "security/tokens/validate", "").expect(t, "nothing", http.StatusBadRequest)
			var got report
			e.doAt(t, e.ts, e.other, "POST", "security/tokens/validate", tok.AccessToken).expect(t, "other partition", http.StatusOK).json(t, &got)
			if got.SignatureVerification != "Failed" {
				t.Errorf("another partition's key passed the signature: %+v", got)
			}
			e.clock.Advance(2 * time.Hour)
			e.do(t, "POST", "security/tokens/validate", tok.AccessToken).expect(t, "expired", http.StatusOK).json(t, &got)
			if got.ExpiryVerification != "Expired" || got.SignatureVerification != "Passed" {
				t.Errorf("validate expired: %+v", got)
			}
		})
	}
}

// TestSettings checks that security/settings describe the routes and records as they are.
func TestSettings(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, token := e.user(t, "", true)
			for _, name := range []string{"Instructors", "Field Staff"} {
				g := e.group(t, res.OrganizationIdentifier, name)
				e.member(t, res.UserIdentifier, g, res.OrganizationIdentifier)
			}
			e.group(t, res.OrganizationIdentifier, "Unused")
			eps := e.srv.Endpoints()

			var endpoints []struct {
				Method, Path, Summary, Access string
				Permission                    *struct{ Object, ObjectIdentifier, Flag string }
			}
			e.do(t, "GET", "security/settings/endpoints", "", bearer(token)...).expect(t, "endpoints", http.StatusOK).json(t, &endpoints)
			if len(endpoints) != len(eps) {
				t.Errorf("%d endpoints listed, %d routed", len(endpoints), len(eps))
			}
			listed := map[string]bool{}
			for _, d := range endpoints {
				listed[d.Method+" "+d.Path] = true
				if d.Summary == "" || (d.Access == "Protected") != (d.Permission != nil) {
					t.Errorf("endpoint %+v", d)
				}
				if d.Permission != nil && d.Permission.ObjectIdentifier != auth.ObjectID(d.Permission.Object).String() {
					t.Errorf("endpoint %s %s: object identifier %s", d.Method, d.Path, d.Permission.ObjectIdentifier)
				}
			}
			if !listed["GET /v2/{partition}/security/users/{UserIdentifier}"] || !listed["POST /v2/{partition}/security/tokens/generate"] {
				t.Errorf("endpoints lack a generated item route or a security route: %v", listed)
			}
			// Version 1's routes, from the root, with their permission (or none when anonymous).
			v1 := map[string]string{}
			for _, d := range endpoints {
				if strings.HasPrefix(d.Path, "/api/") {
					v1[d.Method+" "+d.Path] = d.Access
					if d.Permission != nil {
						v1[d.Method+" "+d.Path] += " " + d.Permission.Flag + " " + d.Permission.Object
					}
				}
			}
			for route, want := range map[string]string{
				"GET /api/events/list-events":                                         "Protected Read api/events",
				"POST /api/events/{event}":                                            "Protected Create api/events",
				"POST /api/events/{event}/cancel":                                     "Protected Execute api/events",
				"POST /api/registrations/count":                                       "Protected Read api/registrations",
				"DELETE /api/registrations/{registration}":                            "Protected Delete api/registrations",
				"POST /api/registrations/{registration}/commands/grant-accommodation": "Protected Execute api/registrations",
				"GET /api/events/classes":                                             "Public",
				"POST /api/integration/partner/callback/{activityId}/{learnerId}":     "Public",
			} {
				if v1[route] != want {
					t.Errorf("endpoint %s: %q, want %q", route, v1[route], want)
				}
			}
			if len(v1) != len(legacy.Describe()) {
				t.Errorf("%d version-1 endpoints listed, %d routed", len(v1), len(legacy.Describe()))
			}

			var resources []struct {
				Name, ObjectType, Identifier string
				Record                       *string
				Operations                   []struct{ Method, Path, Flag string }
			}
			e.do(t, "GET", "security/settings/resources", "", bearer(token)...).expect(t, "resources", http.StatusOK).json(t, &resources)
			byName := map[string]int{}
			for i, r := range resources {
				byName[r.Name] = i
				if r.Identifier != auth.ObjectID(r.Name).String() || len(r.Operations) == 0 {
					t.Errorf("resource %+v", r)
				}
			}
			for _, r := range e.reg.Public() {
				i, ok := byName[r.Path]
				if !ok {
					t.Errorf("resources lack %s", r.Path)
					continue
				}
				d := resources[i]
				n := 0
				for _, ep := range eps {
					if ep.Access == route.Protected && ep.Object == r.Path {
						n++
					}
				}
				if d.ObjectType != "Resource" || d.Record == nil || *d.Record != r.Name || len(d.Operations) != n {
					t.Errorf("resource %s: %+v, want %d operations", r.Path, d, n)
				}
			}
			if i, ok := byName["api/plugin/cmds/compliance-summaries"]; !ok || resources[i].ObjectType != "Command" {
				t.Errorf("resources lack the compliance command")
			}
			// Version 1's objects, with every protected version-1 route as an operation.
			for object, n := range map[string]int{legacy.EventsObject: 3, legacy.RegistrationsObject: 10} {
				i, ok := byName[object]
				if !ok {
					t.Errorf("resources lack %s", object)
					continue
				}
				d := resources[i]
				if d.ObjectType != "Version1" || d.Record != nil || len(d.Operations) != n {
					t.Errorf("resource %s: %+v, want a Version1 object with %d operations", object, d, n)
				}
				for _, o := range d.Operations {
					if !strings.HasPrefix(o.Path, "/api/") || o.Flag == "" {
						t.Errorf("resource %s: operation %+v", object, o)
					}
				}
			}
			// Resource groups first, then the other objects by name.
			for i := 1; i < len(resources); i++ {
				a, b := resources[i-1], resources[i]
				if (a.ObjectType != "Resource" && b.ObjectType == "Resource") || (a.ObjectType != "Resource" && b.ObjectType != "Resource" && a.Name > b.Name) {
					t.Errorf("resources out of order: %s (%s) before %s (%s)", a.Name, a.ObjectType, b.Name, b.ObjectType)
				}
			}

			var flags []struct {
				Flag string
				Bit  int64
			}
			e.do(t, "GET", "security/settings/permissions", "", bearer(token)...).expect(t, "permissions", http.StatusOK).json(t, &flags)
			if fmt.Sprint(flags) != "[{Execute 1} {Read 2} {Write 4} {Create 8} {Delete 16} {Administrate 32} {Configure 64} {TrialAccess 0}]" {
				t.Errorf("permissions %v", flags)
			}

			var roles []string
			e.do(t, "GET", "security/settings/roles", "", bearer(token)...).expect(t, "roles", http.StatusOK).json(t, &roles)
			if fmt.Sprint(roles) != "[field-staff instructors]" {
				t.Errorf("roles %v, want the slugs of the groups that memberships hold", roles)
			}
		})
	}
}
