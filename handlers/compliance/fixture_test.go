package compliance

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/internal/openapitest"
	"credo/internal/testenv"
	"credo/resources"
)

// The fixture: organization A with 3 departments and 20 learners (learner 0 is in two
// departments; learner 19 has no person, so no name), and organization B with one department
// and one learner that A's callers must never see.
var (
	orgA = "0190a6f0-0000-7000-8000-00000000000a"
	orgB = "0190a6f0-0000-7000-8000-00000000000b"

	deptIDs   = []string{id("d", 1), id("d", 2), id("d", 3)}
	deptNames = []string{"Operations", "Finance", "Maintenance"}
	deptB     = id("d", 9)

	profileIDs = []string{id("f", 1), id("f", 2)}

	// learnerNames are deliberately not in identifier order; two learners share a name.
	learnerNames = []string{"Quinn Baker", "Ava Chen", "Noah Patel", "Mia Rossi", "Liam Okafor",
		"Zoe Martin", "Ethan Nguyen", "Sam Lee", "Olivia Brown", "Sam Lee", "Isla Novak",
		"Lucas Silva", "Emma Wilson", "Jack Murphy", "Chloe Dubois", "Henry Kim", "Grace Ali",
		"Owen Fraser", "Ruby Singh", ""}
	learnerB = id("u", 99)

	// functions[i%4] is learner i's membership function in its own department ("" = none).
	functions = []string{FunctionDepartment, FunctionOrganization, FunctionAdministration, ""}
)

const learnerCount = 20

func id(kind string, n int) string {
	prefix := map[string]string{"d": "1", "u": "2", "f": "3"}[kind]
	return fmt.Sprintf("0190a6f0-0000-7000-8000-%s%011d", prefix, n)
}

func learnerID(i int) string { return id("u", i) }

// fixtureRow is one ComplianceStatus row of the fixture.
type fixtureRow struct {
	org, dept, learner string
	key, variant       int
	counts             [9]int64
}

// pairs lists each learner's departments: own department i%3, and learner 0 also in Finance.
func pairs() [][2]int {
	var out [][2]int
	for i := range learnerCount {
		out = append(out, [2]int{i % 3, i})
		if i == 0 {
			out = append(out, [2]int{1, 0})
		}
	}
	return out
}

// counts gives every column a different deterministic value, so that a swapped column shows.
func counts(i, key, v int) [9]int64 {
	c := [9]int64{
		int64((i + key + v) % 5), int64((i*key + v) % 6), int64((i + key) % 2), int64(key % 3),
		int64(i % 2), int64(v), int64((key + 1) % 4), int64((i + 2) % 3), int64((key * v) % 5),
	}
	if v == int(PrimaryProfile) && i >= 15 || i == 19 {
		c[0] = 0 // learners 15..19 have no primary profile requirements; 19 none at all
	}
	if i == 1 && v == int(AllProfiles) {
		// Score cases: 2/3, 3/3, 5/3, 0/0, 1/8, 2/7, 0/4.
		special := map[int][2]int64{1: {3, 2}, 2: {3, 3}, 3: {3, 5}, 4: {0, 0}, 5: {8, 1}, 6: {7, 2}, 7: {4, 0}}
		if rs, ok := special[key]; ok {
			c[0], c[1] = rs[0], rs[1]
		}
	}
	return c
}

func fixtureRows() []fixtureRow {
	var rows []fixtureRow
	for _, p := range pairs() {
		for key := 1; key <= 18; key++ {
			for v := 1; v <= 3; v++ {
				rows = append(rows, fixtureRow{orgA, deptIDs[p[0]], learnerID(p[1]), key, v, counts(p[1], key, v)})
			}
		}
	}
	for key := 1; key <= 18; key++ {
		for v := 1; v <= 3; v++ {
			rows = append(rows, fixtureRow{orgB, deptB, learnerB, key, v, counts(7, key, v)})
		}
	}
	return rows
}

// fixtureMemberships returns (department index, learner, function) of A's memberships.
func fixtureMemberships() [][3]string {
	var out [][3]string
	for i := range learnerCount {
		if f := functions[i%4]; f != "" {
			out = append(out, [3]string{deptIDs[i%3], learnerID(i), f})
		}
	}
	return append(out, [3]string{deptIDs[1], learnerID(0), FunctionOrganization})
}

// registry loads every descriptor of the service, as `credo serve` does.
func registry(t testing.TB) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// openStores opens a fresh partition on every backend.
func openStores(t *testing.T) map[string]*engine.Store {
	t.Helper()
	return open(t, testenv.Backends(t))
}

// openSQLite opens a fresh SQLite partition, for tests whose SQL is the same on both stores.
func openSQLite(t *testing.T) *engine.Store {
	t.Helper()
	return open(t, []testenv.Backend{{Name: "sqlite", URL: "sqlite:" + t.TempDir()}})["sqlite"]
}

func open(t *testing.T, backends []testenv.Backend) map[string]*engine.Store {
	t.Helper()
	reg := registry(t)
	out := map[string]*engine.Store{}
	for _, b := range backends {
		p := testenv.Partition(t)
		db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		t.Cleanup(func() {
			if b.Name == "postgres" {
				st, _ := db.Store(p)
				st.DB(context.Background()).Exec(`DROP SCHEMA "` + p + `" CASCADE`)
			}
			db.Close()
		})
		st, _ := db.Store(p)
		out[b.Name] = st
	}
	return out
}

// loadDirectory stores the departments, people and memberships of the fixture.
func loadDirectory(t *testing.T, st *engine.Store) {
	t.Helper()
	ctx := context.Background()
	reg := st.Registry()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	group, person, membership := reg.MustByName("Group"), reg.MustByName("Person"), reg.MustByName("Membership")
	for i, d := range deptIDs {
		must(insert(ctx, st, group, map[string]any{"GroupIdentifier": d, "OrganizationIdentifier": orgA,
			"GroupName": deptNames[i], "GroupType": "Department", "GroupDescription": deptNames[i] + " staff"}))
	}
	must(insert(ctx, st, group, map[string]any{"GroupIdentifier": deptB, "OrganizationIdentifier": orgB,
		"GroupName": "Other Department", "GroupType": "Department"}))
	for i, name := range learnerNames {
		if name == "" {
			continue
		}
		must(insert(ctx, st, person, map[string]any{"UserIdentifier": learnerID(i), "OrganizationIdentifier": orgA,
			"FullName": name, "PersonCode": fmt.Sprintf("P%03d", i)}))
	}
	must(insert(ctx, st, person, map[string]any{"UserIdentifier": learnerB, "OrganizationIdentifier": orgB,
		"FullName": "Aaron Outsider", "PersonCode": "B001"}))
	for _, m := range fixtureMemberships() {
		must(insert(ctx, st, membership, map[string]any{"GroupIdentifier": m[0], "OrganizationIdentifier": orgA,
			"UserIdentifier": m[1], "MembershipFunction": m[2]}))
	}
	must(insert(ctx, st, membership, map[string]any{"GroupIdentifier": deptB, "OrganizationIdentifier": orgB,
		"UserIdentifier": learnerB, "MembershipFunction": FunctionDepartment}))
}

// loadCompliance stores the fixture's profiles, primary profile links and status rows.
func loadCompliance(t *testing.T, st *engine.Store) {
	t.Helper()
	ctx := context.Background()
	reg := st.Registry()
	profile, link, status := reg.MustByName("ComplianceProfile"), reg.MustByName("CompliancePrimaryProfile"), reg.MustByName("ComplianceStatus")
	err := st.Transaction(ctx, func(tx *engine.Store) error {
		if err := insert(ctx, tx, profile, map[string]any{"ProfileIdentifier": profileIDs[0], "OrganizationIdentifier": orgA,
			"ProfileType": "Occupation", "ProfileName": "Plant Operator", "ProfileSlug": "plant-op", "ProfileDescription": "Runs the plant"}); err != nil {
			return err
		}
		if err := insert(ctx, tx, profile, map[string]any{"ProfileIdentifier": profileIDs[1], "OrganizationIdentifier": orgA,
			"ProfileName": "Site Supervisor"}); err != nil {
			return err
		}
		for i := range 15 {
			if err := insert(ctx, tx, link, map[string]any{"OrganizationIdentifier": orgA, "LearnerIdentifier": learnerID(i),
				"ProfileIdentifier": profileIDs[i%2]}); err != nil {
				return err
			}
		}
		for _, r := range fixtureRows() {
			rec := map[string]any{"OrganizationIdentifier": r.org, "DepartmentIdentifier": r.dept, "LearnerIdentifier": r.learner,
				"MeasurementKey": int64(r.key), "ProfileVariant": int64(r.variant)}
			for i, name := range countMembers {
				rec[name] = r.counts[i]
			}
			if err := insert(ctx, tx, status, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func principalOf(org string) *auth.Principal {
	return &auth.Principal{UserIdentifier: learnerID(0), OrganizationIdentifier: org, Partition: "e01"}
}

// post calls the route's handler as the router would: store and principal in the context.
func post(t *testing.T, st *engine.Store, p *auth.Principal, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v2/e01/"+Path, strings.NewReader(body))
	ctx := auth.WithPrincipal(engine.WithStore(req.Context(), st), p)
	w := httptest.NewRecorder()
	openapitest.Of(t, openapitest.Document(st.Registry(), Routes()...)).Handler(openapitest.Served(openapitest.Resolved(t, st.Registry(), Routes()[0]))).ServeHTTP(w, req.WithContext(ctx))
	return w
}

// summariesOf posts a body that must succeed and decodes the array.
func summariesOf(t *testing.T, st *engine.Store, p *auth.Principal, body string) []Summary {
	t.Helper()
	w := post(t, st, p, body)
	if w.Code != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s", body, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	var out []Summary
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
	if out == nil {
		t.Fatalf("body %q is not an array", w.Body)
	}
	return out
}

// expected is the oracle: the fixture filtered and ordered by the rules of decisions §9,
// written independently of the SQL.
func expected(q Request, scope engine.Scope) []Summary {
	rows := fixtureRows()
	fns := q.Functions()
	hasRequired := map[[3]string]bool{} // (org, learner, variant)
	for _, r := range rows {
		if r.counts[0] > 0 {
			hasRequired[[3]string{r.org, r.learner, fmt.Sprint(r.variant)}] = true
		}
	}
	member := map[[2]string]string{} // (dept, learner) → function
	for _, m := range fixtureMemberships() {
		member[[2]string{m[0], m[1]}] = m[2]
	}
	member[[2]string{deptB, learnerB}] = FunctionDepartment
	var out []Summary
	for _, r := range rows {
		switch {
		case r.variant != int(q.ProfileCondition),
			!scope.Includes(r.org),
			len(q.Departments) > 0 && !slices.Contains(q.Departments, r.dept),
			len(q.Learners) > 0 && !slices.Contains(q.Learners, r.learner),
			len(q.Measurements) > 0 && !slices.Contains(q.Measurements, r.key),
			len(fns) > 0 && !slices.Contains(fns, member[[2]string{r.dept, r.learner}]),
			q.LearnerMustHaveProfile && !hasRequired[[3]string{r.org, r.learner, fmt.Sprint(r.variant)}]:
			continue
		}
		out = append(out, expectedSummary(r))
	}
	slices.SortFunc(out, func(a, b Summary) int {
		return cmp.Or(cmpName(a.Learner.Name, b.Learner.Name), strings.Compare(a.Learner.Identifier, b.Learner.Identifier),
			cmp.Compare(a.Measurement.Key, b.Measurement.Key), cmpName(a.Department.Name, b.Department.Name),
			strings.Compare(a.Department.Identifier, b.Department.Identifier))
	})
	return out
}

// cmpName orders names byte-wise with null last.
func cmpName(a, b *string) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return strings.Compare(*a, *b)
}

func expectedSummary(r fixtureRow) Summary {
	s := func(v string) *string { return &v }
	var dept Member
	if r.dept == deptB {
		dept = Member{Identifier: deptB, Type: s("Department"), Name: s("Other Department"), Slug: s("other-department")}
	} else {
		i := slices.Index(deptIDs, r.dept)
		dept = Member{Identifier: r.dept, Type: s("Department"), Name: s(deptNames[i]),
			Slug: s(strings.ToLower(deptNames[i])), Description: s(deptNames[i] + " staff")}
	}
	learner := Member{Identifier: r.learner, Type: s(LearnerType)}
	var primary *Member
	if r.learner == learnerB {
		learner.Name, learner.Slug = s("Aaron Outsider"), s("aaron-outsider")
	} else if i := slices.Index(learnerIDs(), r.learner); learnerNames[i] != "" {
		learner.Name = s(learnerNames[i])
		learner.Slug = s(strings.ReplaceAll(strings.ToLower(learnerNames[i]), " ", "-"))
		if i < 15 && i%2 == 0 {
			primary = &Member{Identifier: profileIDs[0], Type: s("Occupation"), Name: s("Plant Operator"), Slug: s("plant-op"), Description: s("Runs the plant")}
		} else if i < 15 {
			primary = &Member{Identifier: profileIDs[1], Name: s("Site Supervisor"), Slug: s("site-supervisor")}
		}
	}
	c := r.counts
	return Summary{Department: dept, Learner: learner, PrimaryProfile: primary, Measurement: Measurement{
		Key: r.key, Name: measurementNames[r.key-1], Score: Score(c[0], c[1]), Required: c[0], Satisfied: c[1],
		Expired: c[2], NotCompleted: c[3], NotApplicable: c[4], NeedsTraining: c[5], SelfAssessed: c[6],
		Submitted: c[7], Validated: c[8]}}
}

func learnerIDs() []string {
	out := make([]string, learnerCount)
	for i := range out {
		out[i] = learnerID(i)
	}
	return out
}
