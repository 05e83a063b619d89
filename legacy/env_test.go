package legacy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/idempotency"
	"credo/handlers/problem"
	"credo/handlers/route"
	"credo/handlers/security"
	"credo/internal/openapitest"
	"credo/internal/testenv"
	"credo/resources"
)

// Fixture ids. Forms sort so that the bilingual MATH form comes first by FormIdentifier and
// must be skipped by its title.
const (
	orgA = "0190a6f0-0000-7000-8000-00000000000a"
	orgB = "0190a6f0-0000-7000-8000-00000000000b"

	venueA  = "0190a6f0-0000-7000-8000-0000000000a1"
	venueA2 = "0190a6f0-0000-7000-8000-0000000000a2"
	venueA3 = "0190a6f0-0000-7000-8000-0000000000a3"
	venueB  = "0190a6f0-0000-7000-8000-0000000000b1"

	formMathBilingual = "0190a6f0-0000-7000-8000-000000000f01"
	formMath          = "0190a6f0-0000-7000-8000-000000000f02"
	formDraft         = "0190a6f0-0000-7000-8000-000000000f03"
	formScienceBi     = "0190a6f0-0000-7000-8000-000000000f04"
	formEnglish       = "0190a6f0-0000-7000-8000-000000000f05"
	formScience       = "0190a6f0-0000-7000-8000-000000000f06"
	formOther         = "0190a6f0-0000-7000-8000-000000000f07"

	ada    = "0190a6f0-0000-7000-8000-0000000000c1"
	alan   = "0190a6f0-0000-7000-8000-0000000000c2"
	grace  = "0190a6f0-0000-7000-8000-0000000000c3" // a person of orgB only
	nobody = "0190a6f0-0000-7000-8000-0000000000c9"

	billingA = "BC-100"
	billingB = "BC-200"

	// staff is the caller of the X-Test-Organization requests: a user that is no operator,
	// with a membership in each organization of a group granted what the routes need.
	staff = "0190a6f0-0000-7000-8000-0000000000ee"
)

// testKey is the signing key (CREDO_SIGNING_KEY) of the tests' security: tokens are forged
// with the partition key derived from it.
var testKey = []byte("credo legacy tests: a signing key of 32+ bytes")

// testBase is the test clock's start; every reading advances it by a second so that
// LastChangeTime orders the changes.
var testBase = time.Date(2030, 1, 15, 12, 0, 0, 0, time.UTC)

var (
	registryOnce sync.Once
	registry     *engine.Registry
	registryErr  error
)

// env is the version-1 API on one real database, seeded with two organizations, behind
// handlers/security's authorizer (and its authenticator, for requests without test headers).
type env struct {
	t      *testing.T
	name   string
	store  *engine.Store
	router *mux.Router
	// sec backs authorization with the partition's Permission and Membership records, and
	// authenticates real secrets and tokens; secClock is its clock, which tests advance past
	// the decision cache (auth.MaxDecisionTTL) after changing grants.
	sec      *security.Security
	secClock *settableClock
	// api validates every exchange against the OpenAPI document.
	api   *openapitest.Validator
	ticks *atomic.Int64
	// stop makes the Idempotency-Key keeper abandon each command after its work
	// (idempotency.Config.Stop), as a process killed then would.
	stop *atomic.Bool
}

// with returns the env reporting to t, for subtests.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// forEachBackend runs fn on a fresh partition of every configured database.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	registryOnce.Do(func() { registry, registryErr = engine.Load(resources.FS) })
	if registryErr != nil {
		t.Fatal(registryErr)
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, registry)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if b.Name == "postgres" {
					s, _ := db.Store(p)
					s.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + p + `" CASCADE`)
				}
				db.Close()
			})
			s, _ := db.Store(p)
			e := &env{t: t, name: b.Name, store: s, router: mux.NewRouter(), ticks: new(atomic.Int64),
				secClock: &settableClock{now: time.Now().UTC()}, stop: new(atomic.Bool)}
			keeper, err := idempotency.New(registry, idempotency.Config{Now: e.clock,
				Stop: func(*http.Request) bool { return e.stop.Load() }})
			if err != nil {
				t.Fatal(err)
			}
			e.sec, err = security.New(ctx, db, security.Config{SigningKey: testKey, Now: e.secClock.Now})
			if err != nil {
				t.Fatal(err)
			}
			// As the server's root router answers what no route matches.
			e.router.NotFoundHandler = problem.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				return problem.New(http.StatusNotFound, "No route matches %s %s.", r.Method, r.URL.Path)
			})
			if err := Routes(e.router, Deps{Store: s, Authenticate: testAuthenticate(p, e.sec.LegacyAuthenticator(p)),
				Authz: e.sec.Authorizer(), Now: e.clock, Idempotency: keeper}); err != nil {
				t.Fatal(err)
			}
			e.api = openapitest.New(t, openapitest.Document(s.Registry(), Describe()...))
			e.seed()
			fn(t, e)
		})
	}
}

func (e *env) clock() time.Time {
	return testBase.Add(time.Duration(e.ticks.Add(1)) * time.Second)
}

// testAuthenticate maps test headers to a principal of the partition: X-Test-Organization
// (and X-Test-User, staff by default) authenticate a caller that is no operator, X-Test-Invalid
// is a bad credential. Any other request goes to real, the version-1 authenticator of
// handlers/security (a client secret or an access token; nothing is no credential).
// Authorization is never faked: the principal's grants are the Permission rows of its groups.
func testAuthenticate(partition string, real func(*http.Request) (*auth.Principal, error)) func(*http.Request) (*auth.Principal, error) {
	return func(r *http.Request) (*auth.Principal, error) {
		if r.Header.Get("X-Test-Invalid") != "" {
			return nil, fmt.Errorf("test: %w: the token expired", auth.ErrUnauthenticated)
		}
		org := r.Header.Get("X-Test-Organization")
		if org == "" {
			return real(r)
		}
		user := r.Header.Get("X-Test-User")
		if user == "" {
			user = staff
		}
		return &auth.Principal{UserIdentifier: user, OrganizationIdentifier: org, Partition: partition}, nil
	}
}

// settableClock is the security clock of a test.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *settableClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// create stores a record through the engine's validation and hooks, as credo load does, and
// returns its members.
func (e *env) create(name string, members map[string]any) map[string]any {
	e.t.Helper()
	r := registry.MustByName(name)
	body, err := json.Marshal(members)
	if err != nil {
		e.t.Fatal(err)
	}
	rec, err := testenv.CreateJSON(context.Background(), e.store, r, body, engine.AllOrganizations())
	if err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// group creates a group of an organization with the user as a current member, and returns
// the group's identifier.
func (e *env) group(org, name, user string) string {
	e.t.Helper()
	g := e.create("Group", map[string]any{"OrganizationIdentifier": org, "GroupName": name})
	id := g["GroupIdentifier"].(string)
	e.create("Membership", map[string]any{"UserIdentifier": user, "GroupIdentifier": id, "OrganizationIdentifier": org,
		"MembershipEffective": "2000-01-01T00:00:00Z"})
	return id
}

// grant gives a group flags on a permission object with a Permission row.
func (e *env) grant(group, object string, flags ...auth.Flag) {
	e.t.Helper()
	m := map[string]any{"GroupIdentifier": group, "ObjectIdentifier": auth.ObjectID(object).String(), "ObjectType": "Version1"}
	for _, f := range flags {
		m["Allow"+string(f)] = true
	}
	e.create("Permission", m)
}

// grantRoutes gives a group, on each object the protected routes name, exactly the flags
// those routes need.
func (e *env) grantRoutes(group string) {
	e.t.Helper()
	needs := map[string][]auth.Flag{}
	var objects []string
	for _, rt := range (*api)(nil).routes() {
		if rt.Access != route.Protected {
			continue
		}
		if _, ok := needs[rt.Object]; !ok {
			objects = append(objects, rt.Object)
		}
		if f := auth.Flag(rt.Need); !slices.Contains(needs[rt.Object], f) {
			needs[rt.Object] = append(needs[rt.Object], f)
		}
	}
	for _, o := range objects {
		e.grant(group, o, needs[o]...)
	}
}

func (e *env) insert(name string, members map[string]any) {
	e.t.Helper()
	d := newDraft(registry.MustByName(name))
	for m, v := range members {
		d.set(m, v)
	}
	if err := d.insert(context.Background(), e.store); err != nil {
		e.t.Fatalf("seed %s: %v", name, err)
	}
}

func (e *env) seed() {
	for _, v := range []struct{ id, org, name string }{
		{venueA, orgA, "Main Hall"}, {venueA2, orgA, "Annex"}, {venueA3, orgA, "Lab"}, {venueB, orgB, "Other Hall"},
	} {
		e.insert("Venue", map[string]any{"VenueIdentifier": v.id, "OrganizationIdentifier": v.org, "VenueName": v.name})
	}
	e.insert("BillingCode", map[string]any{"OrganizationIdentifier": orgA, "BillingCode": billingA})
	e.insert("BillingCode", map[string]any{"OrganizationIdentifier": orgB, "BillingCode": billingB})
	limit := func(n int64) any { return n }
	for _, f := range []struct {
		id, org, code, title string
		published            bool
		limit                any
	}{
		{formMathBilingual, orgA, "MATH", "Mathematics Bilingual", true, limit(120)},
		{formMath, orgA, "MATH", "Mathematics", true, limit(90)},
		{formDraft, orgA, "DRAFT", "Draft exam", false, limit(30)},
		{formScienceBi, orgA, "BIL", "Science bilingual", true, limit(60)},
		{formEnglish, orgA, "ENG", "English", true, nil},
		{formScience, orgA, "SCI", "Science", true, limit(60)},
		{formOther, orgB, "OTHER", "Other", true, limit(10)},
	} {
		e.insert("AssessmentForm", map[string]any{"FormIdentifier": f.id, "OrganizationIdentifier": f.org,
			"FormCode": f.code, "FormName": f.code + " form", "FormTitle": f.title, "FormPublished": f.published,
			"FormTimeLimit": f.limit})
	}
	for _, p := range []struct{ user, org, name, code, email string }{
		{ada, orgA, "Ada Lovelace", "AL-1", "ada@example.org"},
		{alan, orgA, "Alan Turing", "AT-2", "alan@example.org"},
		{grace, orgB, "Grace Hopper", "GH-3", "grace@example.org"},
	} {
		e.insert("User", map[string]any{"UserIdentifier": p.user, "Email": p.email, "FullName": p.name})
		e.insert("Person", map[string]any{"UserIdentifier": p.user, "OrganizationIdentifier": p.org,
			"FullName": p.name, "PersonCode": p.code})
	}
	for _, org := range []string{orgA, orgB} {
		e.grantRoutes(e.group(org, "Exam staff", staff))
	}
}

// start returns a future start time in the send format, days after the test clock's base.
func start(days int, clock string, offset string) string {
	d := testBase.AddDate(0, 0, days)
	return d.Format("2006-01-02") + "T" + clock + offset
}

// do sends a request as orgA (or as the organization in as; "-" for anonymous).
func (e *env) do(method, path, body string, as ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	h := http.Header{}
	org := orgA
	if len(as) > 0 {
		org = as[0]
	}
	if org != "-" {
		h.Set("X-Test-Organization", org)
		h.Set("X-Test-User", staff)
	}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return e.doWith(method, path, body, h)
}

// doWith sends a request with exactly these headers.
func (e *env) doWith(method, path, body string, h http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	e.api.Handler(openapitest.Served(e.router)).ServeHTTP(rec, req)
	return rec
}

// ok sends a request that must succeed and decodes its JSON answer.
func (e *env) ok(method, path, body string, as ...string) map[string]any {
	e.t.Helper()
	rec := e.do(method, path, body, as...)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("%s %s: status %d, want 200: %s", method, path, rec.Code, rec.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		e.t.Fatalf("%s %s: %v: %s", method, path, err, rec.Body)
	}
	return out
}

// register runs register-lax for id with the given body members over a default body.
func (e *env) registerBody(venue, startAt string, extra string) string {
	b := fmt.Sprintf(`{"EventVenue":%q,"EventStart":%q,"EventExamType":"Sitting","EventExamFormat":"Paper",`+
		`"EventBillingCode":%q,"Learner":%q,"Assessment":"MATH"`, venue, startAt, billingA, ada)
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func regPath(id, command string) string {
	p := "/api/registrations/" + id
	if command != "" {
		p += "/commands/" + command
	}
	return p
}

// problemOf decodes a problem document.
func problemOf(t *testing.T, rec *httptest.ResponseRecorder) (status int, detail string) {
	t.Helper()
	var p struct {
		Status int    `json:"Status"`
		Detail string `json:"Detail"`
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json: %s", ct, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem: %v: %s", err, rec.Body)
	}
	if p.Status != rec.Code {
		t.Fatalf("problem Status %d but HTTP status %d", p.Status, rec.Code)
	}
	return p.Status, p.Detail
}

// count runs a COUNT(*) on a resource's table with a condition on one member.
func (e *env) count(name, member string, value any) int64 {
	e.t.Helper()
	r := registry.MustByName(name)
	var n int64
	err := e.store.DB(context.Background()).Table(e.store.TableName(r)).Where(eq("", r, member, value)).Count(&n).Error
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// decodeJSON decodes a 200 JSON answer into v.
func decodeJSON(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
}

func containsStr(s, sub string) bool { return strings.Contains(s, sub) }

func parseDateTime(s string) (engine.DateTime, error) { return engine.ParseDateTime(s) }
