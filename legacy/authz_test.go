package legacy

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/route"
	"credo/handlers/security"
)

// authzCase makes a fresh request of one protected route that succeeds for a caller holding
// the route's flag in orgA: prepare creates what it acts on (as staff) and returns the path
// and body.
type authzCase struct {
	prepare func(e *env) (path, body string)
}

// authzCases are keyed by OperationID; every protected route must have one, so that a new
// route cannot go unchecked.
func authzCases() map[string]authzCase {
	n := 0
	future := func() string { n++; return start(20+n%30, fmt.Sprintf("%02d:%02d:00", 8+n%10, n%60), "Z") }
	registered := func(e *env, extra string) string {
		id := uuid.NewString()
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, future(), extra))
		return id
	}
	fixed := func(path, body string) authzCase {
		return authzCase{prepare: func(*env) (string, string) { return path, body }}
	}
	command := func(name, body, extra string) authzCase {
		return authzCase{prepare: func(e *env) (string, string) { return regPath(registered(e, extra), name), body }}
	}
	newEvent := func() string {
		return `{"EventVenue":"` + venueA2 + `","EventStart":"` + future() + `","EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"` + billingA + `"}`
	}
	return map[string]authzCase{
		"v1ListEvents":          fixed("/api/events/list-events?date="+start(25, "", "")[:10], ""),
		"v1AddEvent":            {prepare: func(*env) (string, string) { return "/api/events/" + uuid.NewString(), newEvent() }},
		"v1CountRegistrations":  fixed("/api/registrations/count", "{}"),
		"v1SearchRegistrations": fixed("/api/registrations/search", `{"Name":"ada"}`),
		"v1CancelEvent": {prepare: func(e *env) (string, string) {
			id := uuid.NewString()
			e.ok("POST", "/api/events/"+id, newEvent())
			return "/api/events/" + id + "/cancel", `{"Reason":"Closed"}`
		}},
		"v1GetRegistration":    {prepare: func(e *env) (string, string) { return regPath(registered(e, ""), ""), "" }},
		"v1DeleteRegistration": {prepare: func(e *env) (string, string) { return regPath(registered(e, ""), ""), "" }},
		"register-lax": {prepare: func(e *env) (string, string) {
			return regPath(uuid.NewString(), "register-lax"), e.registerBody(venueA3, future(), "")
		}},
		"transfer-lax": {prepare: func(e *env) (string, string) {
			return regPath(registered(e, ""), "transfer-lax"), `{"EventVenue":"` + venueA3 + `","EventStart":"` + future() +
				`","EventExamType":"Test","Learner":"` + ada + `","Reason":"Moved"}`
		}},
		"cancel":               command("cancel", `{"Reason":"Ill"}`, ""),
		"change-assessment":    command("change-assessment", `{"Assessment":"SCI"}`, ""),
		"grant-accommodation":  command("grant-accommodation", `{"Type":"Reader","TimeExtension":5}`, ""),
		"revoke-accommodation": command("revoke-accommodation", `{"Type":"Reader"}`, `"Accommodations":[{"Type":"Reader","TimeExtension":5}]`),
	}
}

// caseKey names a route's case: its OperationID, or for commands the command's name.
func caseKey(rt route.Route) string {
	if i := strings.LastIndex(rt.Path, "/commands/"); i >= 0 {
		return rt.Path[i+len("/commands/"):]
	}
	return rt.OperationID
}

// TestPermissions (decisions §7, §14): every protected version-1 route needs its flag on its
// permission object, decided by handlers/security's authorizer over Permission and Membership
// rows as for version 2, with a client secret and with an access token alike. A caller of
// organization A is refused (403, a problem naming the flag and the object, nothing written)
// when it holds no grant, when it holds every other flag on every object, and when only its
// group in organization B holds the flag; it succeeds once its group in A holds the flag, or
// Administrate; an operator needs no grant. The anonymous routes are exactly classes,
// scrap-paper and the partner callback.
func TestPermissions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var public []string
		var protected []route.Route
		for _, rt := range (*api)(nil).routes() {
			switch rt.Access {
			case route.Public:
				public = append(public, rt.OperationID)
			case route.Protected:
				protected = append(protected, rt)
			default:
				t.Errorf("%s %s: access %d, want Protected or Public", rt.Method, rt.Path, rt.Access)
			}
		}
		sort.Strings(public)
		if want := []string{"v1ListClasses", "v1PartnerCallback", "v1ScrapPaper"}; !slices.Equal(public, want) {
			t.Errorf("anonymous routes %v, want %v", public, want)
		}
		cases := authzCases()
		for _, rt := range protected {
			if _, ok := cases[caseKey(rt)]; !ok {
				t.Fatalf("%s %s has no case", rt.Method, rt.Path)
			}
		}
		if len(cases) != len(protected) {
			t.Fatalf("%d cases for %d protected routes", len(cases), len(protected))
		}

		// A user with a person in A and in B (one secret for each), a group in each, and an
		// operator of A.
		member := createSecret(t, e, security.SecretOptions{Email: "member@example.org", Organization: orgA})
		inB := createSecret(t, e, security.SecretOptions{Email: "member@example.org", Organization: orgB})
		if inB.UserIdentifier != member.UserIdentifier {
			t.Fatal("the second secret made another user")
		}
		op := createSecret(t, e, security.SecretOptions{Email: "operator@example.org", Organization: orgA, Operator: true})
		groupA := e.group(orgA, "Schedulers", member.UserIdentifier)
		groupB := e.group(orgB, "Schedulers", member.UserIdentifier)
		credentials := []struct{ name, value string }{
			{"secret", member.Secret}, {"token", e.token(member)},
		}
		allFlags := []auth.Flag{auth.Execute, auth.Read, auth.Write, auth.Create, auth.Delete, auth.Administrate, auth.Configure, auth.TrialAccess}
		objects := []string{EventsObject, RegistrationsObject}

		// set replaces the grants of both groups, then lets the decision cache age out.
		set := func(inA, inB func(rt route.Route) []auth.Flag, rt route.Route) {
			t.Helper()
			for _, g := range []string{groupA, groupB} {
				if _, err := e.store.DeleteWhere(ctx, registry.MustByName("Permission"), "GroupIdentifier", g); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range objects {
				for g, flags := range map[string]func(route.Route) []auth.Flag{groupA: inA, groupB: inB} {
					if f := flags(rt); len(f) > 0 {
						e.grant(g, o, f...)
					}
				}
			}
			e.secClock.Advance(auth.MaxDecisionTTL + time.Second)
		}
		none := func(route.Route) []auth.Flag { return nil }
		only := func(f auth.Flag) func(route.Route) []auth.Flag {
			return func(route.Route) []auth.Flag { return []auth.Flag{f} }
		}
		need := func(rt route.Route) []auth.Flag { return []auth.Flag{auth.Flag(rt.Need)} }
		allBut := func(rt route.Route) []auth.Flag {
			var out []auth.Flag
			for _, f := range allFlags {
				if string(f) != rt.Need && f != auth.Administrate {
					out = append(out, f)
				}
			}
			return out
		}
		all := func(route.Route) []auth.Flag { return allFlags }

		states := []struct {
			name     string
			inA, inB func(route.Route) []auth.Flag
			allowed  bool
		}{
			{name: "no grant", inA: none, inB: none},
			{name: "every other flag in A", inA: allBut, inB: none},
			{name: "the flag only in B", inA: none, inB: all},
			{name: "the flag in A", inA: need, inB: none, allowed: true},
			{name: "Administrate in A", inA: only(auth.Administrate), inB: none, allowed: true},
		}
		for _, rt := range protected {
			c := cases[caseKey(rt)]
			for _, s := range states {
				set(s.inA, s.inB, rt)
				for _, cred := range credentials {
					what := fmt.Sprintf("%s %s, %s, with the %s of A", rt.Method, rt.Path, s.name, cred.name)
					path, body := c.prepare(e)
					before := e.snapshot()
					rec := e.doWith(rt.Method, path, body, http.Header{"Authorization": {"Bearer " + cred.value}, "Content-Type": {"application/json"}})
					if s.allowed {
						if rec.Code != http.StatusOK {
							t.Errorf("%s: %d, want 200: %s", what, rec.Code, rec.Body)
						}
						continue
					}
					if rec.Code != http.StatusForbidden {
						t.Errorf("%s: %d, want 403: %s", what, rec.Code, rec.Body)
						continue
					}
					if _, detail := problemOf(t, rec); !strings.Contains(detail, rt.Need) || !strings.Contains(detail, rt.Object) {
						t.Errorf("%s: Detail %q does not name %s on %s", what, detail, rt.Need, rt.Object)
					}
					if after := e.snapshot(); after != before {
						t.Errorf("%s: a refused request changed the data:\nbefore %s\nafter  %s", what, before, after)
					}
				}
			}
			// An operator needs no grant, with either credential.
			set(none, none, rt)
			for _, cred := range []string{op.Secret, e.token(op)} {
				path, body := c.prepare(e)
				rec := e.doWith(rt.Method, path, body, http.Header{"Authorization": {"Bearer " + cred}, "Content-Type": {"application/json"}})
				if rec.Code != http.StatusOK {
					t.Errorf("%s %s as an operator: %d, want 200: %s", rt.Method, rt.Path, rec.Code, rec.Body)
				}
			}
		}
	})
}

// TestRoutesNeedAnAuthorizer: the version-1 API is never mounted without its permission
// checks (fail closed), nor with a protected route that names no object or an unknown flag.
func TestRoutesNeedAnAuthorizer(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Authz") {
				t.Errorf("Routes without an authorizer: recovered %v, want a panic naming Authz", r)
			}
		}()
		_ = Routes(mux.NewRouter(), Deps{Store: new(engine.Store), Authenticate: func(*http.Request) (*auth.Principal, error) { return nil, nil }})
	}()
	for _, rt := range []route.Route{
		{Method: http.MethodGet, Path: "/api/x", Access: route.Protected, Need: "Read"},
		{Method: http.MethodGet, Path: "/api/x", Access: route.Protected, Object: "api/x", Need: "Browse"},
		{Method: http.MethodGet, Path: "/api/x", Access: route.Access(9)},
	} {
		if err := checkAccess(rt); err == nil {
			t.Errorf("checkAccess(%+v) = nil, want an error", rt)
		}
	}
	for _, rt := range (*api)(nil).routes() {
		if err := checkAccess(rt); err != nil {
			t.Errorf("the route table: %v", err)
		}
	}
}

// TestObjectIdentifiersAreStable: stored Permission rows name version 1's objects by these
// identifiers (docs/v1.md lists them), so renaming an object would silently orphan every grant.
func TestObjectIdentifiersAreStable(t *testing.T) {
	for object, want := range map[string]string{
		EventsObject:        "f6d7138f-4b52-57a0-b9af-9b8f6d4641ab",
		RegistrationsObject: "b5242470-bf95-56c6-b974-d1ff2f02cab8",
	} {
		if got := auth.ObjectID(object).String(); got != want {
			t.Errorf("ObjectIdentifier of %s: %s, want %s", object, got, want)
		}
	}
}

// createSecret makes a client secret in the env's partition.
func createSecret(t *testing.T, e *env, opts security.SecretOptions) security.SecretResult {
	t.Helper()
	res, err := security.CreateSecret(context.Background(), e.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// token issues an access token for a secret's user and organization, signed with the
// partition's key as tokens/generate signs it, naming the secret it descends from.
func (e *env) token(s security.SecretResult) string {
	e.t.Helper()
	tokens, err := auth.NewTokens(security.DeriveKey(testKey, e.store.Partition), e.secClock.Now, security.DefaultAudience, security.DefaultIssuer)
	if err != nil {
		e.t.Fatal(err)
	}
	tok, _, err := tokens.Issue(auth.Claims{Subject: s.UserIdentifier, Organization: s.OrganizationIdentifier, Partition: e.store.Partition,
		Secret: s.Identifier}, 3600)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// snapshot is every row of the tables the protected routes write, in a stable order.
func (e *env) snapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, name := range []string{"Event", "Registration", "Accommodation"} {
		r := registry.MustByName(name)
		var rows []map[string]any
		if err := e.store.DB(context.Background()).Table(e.store.TableName(r)).Find(&rows).Error; err != nil {
			e.t.Fatal(err)
		}
		lines := make([]string, len(rows))
		for i, row := range rows {
			lines[i] = fmt.Sprint(row)
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "%s (%d): %s\n", name, len(rows), strings.Join(lines, "; "))
	}
	return b.String()
}
