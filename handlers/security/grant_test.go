package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
	"credo/legacy"
)

// permissionBody is a Permission create body granting flags on an object path to a group.
func permissionBody(group, object string, flags ...auth.Flag) string {
	m := map[string]any{"GroupIdentifier": group, "ObjectIdentifier": auth.ObjectID(object).String(), "ObjectType": "Resource"}
	for _, f := range flags {
		m["Allow"+string(f)] = true
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestGrantBoundedByGrantor (decisions §7): a caller with Create, Write and Delete on
// security/permissions but only Read on directory/people can grant Read there to its own
// organization's group, and nothing else: no flag it lacks (generated over every flag, on an
// object where it holds Read and one where it holds nothing), not Administrate or Configure,
// not to another organization's group or an unknown one, not by moving or widening an
// existing grant, not by changing or deleting a grant it could not have made. An operator
// may; and the caller may once it holds Administrate on the object.
func TestGrantBoundedByGrantor(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			granter, token := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			orgA := granter.OrganizationIdentifier
			ga := e.group(t, orgA, "Granters "+granter.UserIdentifier[:8])
			e.member(t, granter.UserIdentifier, ga, orgA)
			e.grant(t, ga, []string{"security/permissions"}, auth.Create, auth.Write, auth.Delete, auth.Read)
			e.grant(t, ga, []string{"directory/people"}, auth.Read)
			gb := e.group(t, newOrg(t, e), "Other organization's group")
			// Grants go to another group of the caller's organization (a group has one
			// permission row per object).
			gr := e.group(t, orgA, "Grantees "+granter.UserIdentifier[:8])
			h := bearer(token)
			post := func(body string) response { return e.do(t, "POST", "security/permissions", body, h...) }

			for _, f := range auth.Flags() {
				want := http.StatusForbidden
				if f == auth.Read {
					want = http.StatusCreated
				}
				res := post(permissionBody(gr, "directory/people", f)).expect(t, fmt.Sprintf("grant %s on people", f), want)
				if want == http.StatusCreated {
					var rec map[string]any
					res.json(t, &rec)
					e.do(t, "DELETE", "security/permissions/"+rec["PermissionIdentifier"].(string), "", h...).expect(t, "delete own grant", http.StatusOK)
				} else if d := res.detail(t); f != auth.Read && d == "" {
					t.Errorf("grant %s: a 403 without a reason", f)
				}
				post(permissionBody(gr, "progress/gradebooks", f)).expect(t, fmt.Sprintf("grant %s on gradebooks", f), http.StatusForbidden)
			}
			// The escalation of issue 11: Create on permissions is not Administrate anywhere.
			post(permissionBody(gr, "security/permissions", auth.Administrate)).expect(t, "self-grant Administrate", http.StatusForbidden)
			if d := post(permissionBody(gr, "directory/people", auth.Read, auth.Delete)).expect(t, "Read and a missing flag", http.StatusForbidden).detail(t); d !=
				fmt.Sprintf("granting on object %s (directory/people) needs the caller to hold there every flag it grants; it lacks Delete", auth.ObjectID("directory/people")) {
				t.Errorf("Read and a missing flag: Detail %q", d)
			}
			post(permissionBody(gb, "directory/people", auth.Read)).expect(t, "grant to another organization's group", http.StatusForbidden)
			post(permissionBody(uuid.NewString(), "directory/people", auth.Read)).expect(t, "grant to an unknown group", http.StatusForbidden)

			// A grant it may make, then changes that would widen or move it.
			var own map[string]any
			post(permissionBody(gr, "directory/people", auth.Read)).expect(t, "grant Read on people", http.StatusCreated).json(t, &own)
			item := "security/permissions/" + own["PermissionIdentifier"].(string)
			e.do(t, "PATCH", item, `{"AllowDelete":true}`, h...).expect(t, "widen by patch", http.StatusForbidden)
			e.do(t, "PATCH", item, `{"AllowAdministrate":true}`, h...).expect(t, "Administrate by patch", http.StatusForbidden)
			e.do(t, "PATCH", item, fmt.Sprintf(`{"ObjectIdentifier":%q}`, auth.ObjectID("progress/gradebooks")), h...).expect(t, "move by patch", http.StatusForbidden)
			e.do(t, "PATCH", item, fmt.Sprintf(`{"GroupIdentifier":%q}`, gb), h...).expect(t, "give away by patch", http.StatusForbidden)
			e.do(t, "PUT", item, permissionBody(gr, "progress/gradebooks", auth.Read), h...).expect(t, "move by put", http.StatusForbidden)
			e.do(t, "PUT", item, permissionBody(gr, "directory/people", auth.Read), h...).expect(t, "put within its grants", http.StatusOK)
			e.do(t, "PATCH", item, `{"ObjectType":"Resource"}`, h...).expect(t, "patch within its grants", http.StatusOK)

			// A grant an operator made that the caller could not make: untouchable.
			var wide map[string]any
			e.do(t, "POST", "security/permissions", permissionBody(gr, "progress/gradebooks", auth.Read, auth.Delete), bearer(opToken)...).
				expect(t, "operator grants", http.StatusCreated).json(t, &wide)
			wideItem := "security/permissions/" + wide["PermissionIdentifier"].(string)
			if d := e.do(t, "PATCH", wideItem, `{"AllowDelete":false}`, h...).expect(t, "narrow another's grant", http.StatusForbidden).detail(t); d !=
				fmt.Sprintf("the permission %s grants on object %s (progress/gradebooks) what the caller does not hold there (Read, Delete); only a caller who holds every flag a permission grants may change or delete it",
					wide["PermissionIdentifier"], auth.ObjectID("progress/gradebooks")) {
				t.Errorf("narrow another's grant: Detail %q", d)
			}
			e.do(t, "PUT", wideItem, permissionBody(gr, "directory/people", auth.Read), h...).expect(t, "move another's grant to its object", http.StatusForbidden)
			e.do(t, "DELETE", wideItem, "", h...).expect(t, "delete another's grant", http.StatusForbidden)
			e.do(t, "GET", wideItem, "", h...).expect(t, "the grant is still there", http.StatusOK)
			// Another organization's grant, even of flags the caller holds, is not its to change.
			var theirs map[string]any
			e.do(t, "POST", "security/permissions", permissionBody(gb, "directory/people", auth.Read), bearer(opToken)...).
				expect(t, "operator grants to another organization", http.StatusCreated).json(t, &theirs)
			e.do(t, "DELETE", "security/permissions/"+theirs["PermissionIdentifier"].(string), "", h...).expect(t, "delete another organization's grant", http.StatusForbidden)

			// Administrate on the object lets it grant everything there, at once (the check
			// reads the grants in the write's transaction, not the decision cache).
			e.grant(t, ga, []string{"progress/gradebooks"}, auth.Administrate)
			e.do(t, "DELETE", wideItem, "", h...).expect(t, "delete with Administrate", http.StatusOK)
			post(permissionBody(gr, "progress/gradebooks", auth.Administrate, auth.Configure, auth.TrialAccess, auth.Delete)).
				expect(t, "grant with Administrate", http.StatusCreated)
			post(permissionBody(gb, "progress/gradebooks", auth.Read)).expect(t, "Administrate is no licence for another organization", http.StatusForbidden)
		})
	}
}

// TestGrantBoundedOnVersion1Objects: version 1's permission objects are granted like the
// groups' (decisions §7). A caller with Create on security/permissions and Read on
// api/registrations grants Read there and no other flag (generated over every flag), nothing
// on api/events, and nothing to another organization's group; once it holds Administrate on
// api/events it grants every flag there. The grant it made lets the grantee's version-1
// requests through, with a token and with a secret.
func TestGrantBoundedOnVersion1Objects(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			granter, token := e.user(t, "", false)
			org := granter.OrganizationIdentifier
			ga := e.group(t, org, "Granters "+granter.UserIdentifier[:8])
			e.member(t, granter.UserIdentifier, ga, org)
			e.grant(t, ga, []string{"security/permissions"}, auth.Create, auth.Delete)
			e.grant(t, ga, []string{legacy.RegistrationsObject}, auth.Read)
			grantee, granteeToken := e.user(t, org, false)
			gr := e.group(t, org, "Grantees "+granter.UserIdentifier[:8])
			e.member(t, grantee.UserIdentifier, gr, org)
			gb := e.group(t, newOrg(t, e), "Other organization's group")
			h := bearer(token)
			post := func(body string) response { return e.do(t, "POST", "security/permissions", body, h...) }

			for _, f := range auth.Flags() {
				want := http.StatusForbidden
				if f == auth.Read {
					want = http.StatusCreated
				}
				res := post(permissionBody(gr, legacy.RegistrationsObject, f)).expect(t, fmt.Sprintf("grant %s on %s", f, legacy.RegistrationsObject), want)
				if want == http.StatusCreated {
					var rec map[string]any
					res.json(t, &rec)
					e.do(t, "DELETE", "security/permissions/"+rec["PermissionIdentifier"].(string), "", h...).expect(t, "delete own grant", http.StatusOK)
				} else if !strings.Contains(res.detail(t), "it lacks") {
					t.Errorf("grant %s: Detail %q does not name what is missing", f, res.detail(t))
				}
				post(permissionBody(gr, legacy.EventsObject, f)).expect(t, fmt.Sprintf("grant %s on %s", f, legacy.EventsObject), http.StatusForbidden)
			}
			post(permissionBody(gb, legacy.RegistrationsObject, auth.Read)).expect(t, "grant to another organization's group", http.StatusForbidden)

			// The grant works end to end: the grantee counts registrations in version 1.
			count := func(cred string) int {
				return e.do(t, "POST", "/api/registrations/count", "{}", bearer(cred)...).status
			}
			if st := count(granteeToken); st != http.StatusForbidden {
				t.Errorf("grantee before the grant: %d, want 403", st)
			}
			post(permissionBody(gr, legacy.RegistrationsObject, auth.Read)).expect(t, "grant Read", http.StatusCreated)
			e.clock.Advance(auth.MaxDecisionTTL + time.Second)
			for _, cred := range []string{granteeToken, grantee.Secret} {
				if st := count(cred); st != http.StatusOK {
					t.Errorf("grantee after the grant: %d, want 200", st)
				}
			}

			// Administrate on api/events: every flag may be granted there.
			e.grant(t, ga, []string{legacy.EventsObject}, auth.Administrate)
			post(permissionBody(gr, legacy.EventsObject, auth.Flags()...)).expect(t, "grant with Administrate", http.StatusCreated)
		})
	}
}

// TestImportKeepsOrganizationScope (decisions §11), end to end: a non-operator of A with
// Create on people imports a row with the Email of B's user; the import is a 400 naming the
// row, nothing is written, and B's user stays unreadable in A.
func TestImportKeepsOrganizationScope(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			importer, token := e.user(t, "", false)
			g := e.group(t, importer.OrganizationIdentifier, "Importers "+importer.UserIdentifier[:8])
			e.member(t, importer.UserIdentifier, g, importer.OrganizationIdentifier)
			e.grant(t, g, []string{"directory/people", "security/users"}, auth.Create, auth.Read)
			outsider := e.secret(t, security.SecretOptions{Email: "outsider@example.com", Organization: newOrg(t, e)})
			h := bearer(token)
			e.do(t, "GET", "security/users/"+outsider.UserIdentifier, "", h...).expect(t, "outsider before", http.StatusNotFound)
			body := `[{"Identifier":"` + uuid.NewString() + `","Email":"outsider@example.com","FirstName":"O","LastName":"Utsider"}]`
			res := e.do(t, "POST", "contact/persons/import", body, h...).expect(t, "import", http.StatusBadRequest)
			if !strings.Contains(string(res.body), "Email outsider@example.com is already in use (0)") {
				t.Errorf("import problem: %s", res.body)
			}
			e.do(t, "GET", "security/users/"+outsider.UserIdentifier, "", h...).expect(t, "outsider after", http.StatusNotFound)
			var n struct{ Count int }
			e.do(t, "GET", "directory/people/count?UserIdentifier="+outsider.UserIdentifier, "", h...).expect(t, "people", http.StatusOK).json(t, &n)
			if n.Count != 0 {
				t.Errorf("the refused import wrote %d person(s)", n.Count)
			}
		})
	}
}
