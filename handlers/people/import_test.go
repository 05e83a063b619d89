package people_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/people"
	"credo/internal/openapitest"
	"credo/internal/testenv"
	"credo/resources"
)

const (
	orgA = "0190a6f0-0000-7000-8000-00000000000a"
	orgB = "0190a6f0-0000-7000-8000-00000000000b"
	// Users seeded before every import: boss has a person in orgA, other has one in orgB only,
	// admin is the caller.
	bossID  = "0190a6f0-0000-7000-8000-0000000000b0"
	otherID = "0190a6f0-0000-7000-8000-0000000000c0"
	adminID = "0190a6f0-0000-7000-8000-0000000000d0"
	boss    = "boss@example.com"
	other   = "other@example.com"
)

var (
	callerA = &auth.Principal{UserIdentifier: adminID, OrganizationIdentifier: orgA}
	// operatorA may link users of other organizations into orgA (decisions §11).
	operatorA = &auth.Principal{UserIdentifier: adminID, OrganizationIdentifier: orgA, Operator: true}
)

var registry = sync.OnceValues(func() (*engine.Registry, error) { return engine.Load(resources.FS) })

// eachStore runs fn on a fresh, seeded partition of every backend.
func eachStore(t *testing.T, fn func(t *testing.T, st *engine.Store)) {
	eachDatabase(t, func(t *testing.T, _ *engine.Database, st *engine.Store) { fn(t, st) })
}

// eachDatabase is eachStore giving the database too, to serve it through the router.
func eachDatabase(t *testing.T, fn func(t *testing.T, db *engine.Database, st *engine.Store)) {
	reg, err := registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			st, _ := db.Store(p)
			create(t, st, "User", `{"UserIdentifier":"`+bossID+`","Email":"`+boss+`","FullName":"The Boss"}`)
			create(t, st, "User", `{"UserIdentifier":"`+otherID+`","Email":"`+other+`","FullName":"Other Org"}`)
			create(t, st, "User", `{"UserIdentifier":"`+adminID+`","Email":"admin@example.com"}`)
			create(t, st, "Person", `{"UserIdentifier":"`+bossID+`","OrganizationIdentifier":"`+orgA+`","PersonCode":"B"}`)
			create(t, st, "Person", `{"UserIdentifier":"`+otherID+`","OrganizationIdentifier":"`+orgB+`","PersonCode":"O"}`)
			fn(t, db, st)
		})
	}
}

func create(t *testing.T, st *engine.Store, name, body string) {
	t.Helper()
	reg, _ := registry()
	if _, err := testenv.CreateJSON(context.Background(), st, reg.MustByName(name), []byte(body), engine.AllOrganizations()); err != nil {
		t.Fatalf("create %s %s: %v", name, body, err)
	}
}

// post sends an import body as caller.
func post(t *testing.T, st *engine.Store, caller *auth.Principal, body []byte, contentType string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v2/"+st.Partition+"/"+people.Path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	ctx := engine.WithStore(req.Context(), st)
	if caller != nil {
		ctx = auth.WithPrincipal(ctx, caller)
	}
	rec := httptest.NewRecorder()
	openapitest.Of(t, openapitest.Document(st.Registry(), people.Routes()...)).Handler(openapitest.Served(openapitest.Resolved(t, st.Registry(), people.Routes()[0]))).ServeHTTP(rec, req.WithContext(ctx))
	return rec
}

type row = map[string]any

func encode(t *testing.T, rows []row) []byte {
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pid(n int) string { return fmt.Sprintf("0190a6f0-0000-7000-9000-%012d", n) }

// thousand returns 1,000 good rows: managers are the seeded boss, a later row or an earlier
// row; row 5 imports the user of another organization, which only an operator may.
func thousand() []row { return goodRows(1000) }

// goodRows returns n good rows made as thousand's.
func goodRows(n int) []row {
	rows := make([]row, n)
	for i := range rows {
		r := row{"Identifier": pid(i), "Email": fmt.Sprintf("person%04d@example.com", i), "FirstName": fmt.Sprintf("First%d", i),
			"LastName": "Last, \"Q\"", "BusinessTitle": "Welder", "EmployeeType": []string{"Employee", "Contractor", ""}[i%3]}
		switch i % 4 {
		case 0:
			r["Manager"] = boss
		case 1:
			r["Manager"] = fmt.Sprintf("person%04d@example.com", (i+1)%n)
		case 2:
			r["Manager"] = fmt.Sprintf("person%04d@example.com", i-1)
		}
		if i%2 == 0 {
			r["Location"] = "Edmonton"
		}
		rows[i] = r
	}
	rows[5]["Email"] = other
	rows[6]["Manager"] = other
	return rows
}

type counts struct{ users, persons, fields, conns int64 }

func count(t *testing.T, st *engine.Store) counts {
	t.Helper()
	reg, _ := registry()
	n := func(name string) int64 {
		c, err := st.Count(context.Background(), reg.MustByName(name), engine.Query{}, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return counts{n("User"), n("Person"), n("PersonField"), n("UserConnection")}
}

func TestImportThousandRows(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		began := time.Now()
		rec := post(t, st, operatorA, encode(t, thousand()), "application/json")
		took := time.Since(began)
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		t.Logf("1,000 rows imported in %v", took)
		if took > 10*time.Second {
			t.Errorf("1,000 rows took %v", took)
		}
		got := count(t, st)
		// 999 new users (row 5 is an existing one); 500 locations; 750 managers.
		want := counts{before.users + 999, before.persons + 1000, before.fields + 500, before.conns + 750}
		if got != want {
			t.Errorf("after import %+v, want %+v", got, want)
		}
		reg, _ := registry()
		ctx := context.Background()
		person := reg.MustByName("Person")
		p, err := st.Get(ctx, person, []any{pid(4)}, nil, engine.Organization(orgA))
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{"FullName": "First4 Last, \"Q\"", "JobTitle": "Welder", "EmployeeType": "Contractor",
			"PersonCode": pid(4), "CreatedBy": adminID, "OrganizationIdentifier": orgA} {
			if got := p.Get(person, name); got != v {
				t.Errorf("person 4 %s = %v, want %v", name, got, v)
			}
		}
		p5, err := st.Get(ctx, person, []any{pid(5)}, nil, engine.Organization(orgA))
		if err != nil || p5.Get(person, "UserIdentifier") != otherID {
			t.Errorf("row 5's person: %v, %v; want the existing user %s", p5, err, otherID)
		}
		user4 := p.Get(person, "UserIdentifier").(string)
		conn := reg.MustByName("UserConnection")
		for _, c := range []struct{ from, to string }{
			{bossID, user4},                      // an existing manager
			{otherID, userOf(t, st, 6)},          // a manager imported by the same file (row 5)
			{userOf(t, st, 2), userOf(t, st, 1)}, // a later row
			{userOf(t, st, 1), userOf(t, st, 2)}, // an earlier row
		} {
			rec, err := st.Get(ctx, conn, []any{c.from, c.to}, nil, engine.AllOrganizations())
			if err != nil || rec.Get(conn, "IsManager") != true {
				t.Errorf("connection %s → %s: %v, %v", c.from, c.to, rec, err)
			}
		}
	})
}

func userOf(t *testing.T, st *engine.Store, row int) string {
	t.Helper()
	reg, _ := registry()
	person := reg.MustByName("Person")
	p, err := st.Get(context.Background(), person, []any{pid(row)}, nil, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return p.Get(person, "UserIdentifier").(string)
}

// problemOf decodes a 400 problem's Errors.
func problemOf(t *testing.T, rec *httptest.ResponseRecorder, status int) map[string][]string {
	t.Helper()
	if rec.Code != status || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d %q, want a %d problem: %s", rec.Code, rec.Header().Get("Content-Type"), status, rec.Body)
	}
	var p struct{ Errors map[string][]string }
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p.Errors
}

func TestImportBadRowWritesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		rows := thousand()
		rows[537] = row{"Identifier": pid(537), "Email": "not an email", "LastName": "X", "EmployeeType": "Intern", "Manager": "nobody@example.com"}
		errs := problemOf(t, post(t, st, operatorA, encode(t, rows), ""), http.StatusBadRequest)
		want := map[string][]string{
			"Email":        {`Email "not an email" is not a well-formed address (537)`},
			"FirstName":    {"FirstName is required (537)"},
			"EmployeeType": {`EmployeeType "Intern" must be empty, Employee or Contractor (537)`},
			"Manager": {
				"Manager nobody@example.com is not the Email of a user of your organization or of a row of this file (537)",
				"Manager person0537@example.com is not the Email of a user of your organization or of a row of this file (538)",
			},
		}
		if fmt.Sprint(errs) != fmt.Sprint(want) {
			t.Errorf("errors:\n got %v\nwant %v", errs, want)
		}
		if got := count(t, st); got != before {
			t.Errorf("after a refused import %+v, want %+v", got, before)
		}
	})
}

func TestImportProblems(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		// A person that the duplicate-identifier case runs into.
		create(t, st, "Person", `{"PersonIdentifier":"`+pid(900)+`","UserIdentifier":"`+adminID+`","OrganizationIdentifier":"`+orgB+`","PersonCode":"A"}`)
		good := func(n int) row {
			return row{"Identifier": pid(n), "Email": fmt.Sprintf("p%d@example.com", n), "FirstName": "F", "LastName": "L"}
		}
		with := func(r row, kv ...any) row {
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(r, kv[i].(string))
				} else {
					r[kv[i].(string)] = kv[i+1]
				}
			}
			return r
		}
		tests := []struct {
			name string
			rows []row
			want map[string][]string
		}{
			{name: "identifier repeated in the file and already used",
				rows: []row{good(1), good(2), with(good(3), "Identifier", pid(1)), with(good(4), "Identifier", pid(900))},
				want: map[string][]string{"Identifier": {
					"Identifier " + pid(1) + " is also the Identifier of row 0 (2)",
					"Identifier " + pid(900) + " is already the identifier of a person (3)"}}},
			{name: "identifier missing or malformed",
				rows: []row{with(good(1), "Identifier", nil), with(good(2), "Identifier", "12"), with(good(3), "Identifier", "")},
				want: map[string][]string{"Identifier": {"Identifier is required (0)", `Identifier "12" is not a UUID (1)`, "Identifier is required (2)"}}},
			{name: "identifier the nil UUID",
				rows: []row{with(good(1), "Identifier", "00000000-0000-0000-0000-000000000000")},
				want: map[string][]string{"Identifier": {"Identifier cannot be the nil UUID 00000000-0000-0000-0000-000000000000 (0)"}}},
			{name: "email repeated, taken in the organization, missing, with a name",
				rows: []row{good(1), with(good(2), "Email", "p1@example.com"), with(good(3), "Email", boss),
					with(good(4), "Email", nil), with(good(5), "Email", "Five <p5@example.com>")},
				want: map[string][]string{"Email": {
					"Email p1@example.com is also the Email of row 0 (1)",
					"Email boss@example.com already has a person in your organization (2)",
					"Email is required (3)",
					`Email "Five <p5@example.com>" is not a well-formed address (4)`}}},
			{name: "names required, blank is empty",
				rows: []row{with(good(1), "FirstName", "  ", "LastName", nil)},
				want: map[string][]string{"FirstName": {"FirstName is required (0)"}, "LastName": {"LastName is required (0)"}}},
			{name: "managers: own email, another organization's user, unknown",
				rows: []row{with(good(1), "Manager", "p1@example.com"), with(good(2), "Manager", other), with(good(3), "Manager", "x@example.com")},
				want: map[string][]string{"Manager": {
					"Manager p1@example.com is the row's own Email (0)",
					"Manager other@example.com is not the Email of a user of your organization or of a row of this file (1)",
					"Manager x@example.com is not the Email of a user of your organization or of a row of this file (2)"}}},
			{name: "employee type is exact",
				rows: []row{with(good(1), "EmployeeType", "employee")},
				want: map[string][]string{"EmployeeType": {`EmployeeType "employee" must be empty, Employee or Contractor (0)`}}},
			{name: "too long",
				rows: []row{with(good(1), "BusinessTitle", strings.Repeat("é", 4001))},
				want: map[string][]string{"BusinessTitle": {"BusinessTitle is longer than 4000 characters (0)"}}},
			// A long value is not echoed whole (a 32 MiB body's), and a Manager too long to be
			// an Email is not looked up.
			{name: "long values are cut",
				rows: []row{with(good(1), "Identifier", strings.Repeat("x", 5000), "EmployeeType", strings.Repeat("y", 5000), "Manager", strings.Repeat("m", 5000)+"@example.com"),
					with(good(2), "Email", strings.Repeat("e", 5000))},
				want: map[string][]string{
					"Email":        {"Email is longer than 4000 characters (1)"},
					"EmployeeType": {`EmployeeType "` + strings.Repeat("y", 64) + `"… (5000 bytes) must be empty, Employee or Contractor (0)`},
					"Identifier":   {`Identifier "` + strings.Repeat("x", 64) + `"… (5000 bytes) is not a UUID (0)`},
					"Manager":      {"Manager is longer than 4000 characters (0)"}}},
			{name: "unknown members and wrong types",
				rows: []row{with(good(1), "Emial", "x", "FirstName", 5), with(good(2), "Manager", []string{boss}, "IsManager", true), nil},
				want: map[string][]string{
					"Emial": {"Emial is not a member of PersonImportRow (0)"}, "FirstName": {"FirstName must be a string or null (0)"},
					"IsManager": {"IsManager is not a member of PersonImportRow (1)"}, "Manager": {"Manager must be a string or null (1)"},
					"Row": {"the row must be a PersonImportRow object (2)"}}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := count(t, st)
				errs := problemOf(t, post(t, st, callerA, encode(t, tc.rows), "application/json"), http.StatusBadRequest)
				if fmt.Sprint(errs) != fmt.Sprint(tc.want) {
					t.Errorf("errors:\n got %v\nwant %v", errs, tc.want)
				}
				if got := count(t, st); got != before {
					t.Errorf("after a refused import %+v, want %+v", got, before)
				}
			})
		}
	})
}

func TestImportRequests(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		if rec := post(t, st, callerA, []byte(`[]`), ""); rec.Code != http.StatusOK {
			t.Errorf("empty array: %d %s", rec.Code, rec.Body)
		}
		for _, body := range []string{`{}`, `null`, `[1,`, ``} {
			problemOf(t, post(t, st, callerA, []byte(body), ""), http.StatusBadRequest)
		}
		problemOf(t, post(t, st, callerA, []byte(`[]`), "text/csv"), http.StatusUnsupportedMediaType)
		big := append([]byte(`["`), bytes.Repeat([]byte("x"), people.MaxBodyBytes)...)
		problemOf(t, post(t, st, callerA, append(big, `"]`...), ""), http.StatusRequestEntityTooLarge)
		problemOf(t, post(t, st, nil, []byte(`[]`), ""), http.StatusUnauthorized)
		problemOf(t, post(t, st, &auth.Principal{UserIdentifier: adminID, Operator: true}, []byte(`[]`), ""), http.StatusBadRequest)
		if got := count(t, st); got != before {
			t.Errorf("after refused imports %+v, want %+v", got, before)
		}
	})
}

// TestImportRowText: a row member repeated, holding U+0000, invalid UTF-8 or a lone surrogate
// is a problem of its row naming the member, on both stores, and nothing is imported.
func TestImportRowText(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		row := func(extra string) string {
			return `{"Identifier":"` + pid(7) + `","Email":"text@example.com","FirstName":"T","LastName":"X"` + extra + `}`
		}
		for _, tc := range []struct{ name, body, member string }{
			{name: "repeated member", body: `[` + row(`,"FirstName":"U"`) + `]`, member: "FirstName"},
			{name: "NUL", body: `[` + row(`,"Location":"a\u0000"`) + `]`, member: "Location"},
			{name: "lone surrogate", body: `[` + row(`,"BusinessTitle":"\ud800"`) + `]`, member: "BusinessTitle"},
			{name: "invalid byte", body: "[" + row(",\"Manager\":\"\xff\"") + "]", member: "Manager"},
		} {
			errs := problemOf(t, post(t, st, callerA, []byte(tc.body), "application/json"), http.StatusBadRequest)
			if msgs := errs[tc.member]; len(msgs) != 1 || !strings.HasSuffix(msgs[0], "(0)") {
				t.Errorf("%s: problems %v, want one of row 0 naming %s", tc.name, errs, tc.member)
			}
		}
		if got := count(t, st); got != before {
			t.Errorf("after refused imports %+v, want %+v", got, before)
		}
	})
}

// TestImportProblemsTogether: a file whose rows have members that do not decode (a wrong type,
// a text problem, a name given twice, a row that is not an object) still gets the checks of
// the members that did (required, managers, identifiers): one 400 names every problem with its
// row, and a member that did not decode is not also reported missing.
func TestImportProblemsTogether(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		body := `[` +
			`{"Identifier":"` + pid(1) + `","FirstName":5,"LastName":"L"},` +
			`{"Identifier":"` + pid(2) + `","FirstName":"F","LastName":"L","BusinessTitle":"a\u0000","Manager":"x@example.com"},` +
			`{"Identifier":"12","Identifier":"` + pid(3) + `","Email":"p3@example.com","FirstName":"F"},` +
			`7,` +
			`{"Identifier":"` + pid(1) + `","Email":"p4@example.com","FirstName":"F","LastName":"L","EmployeeType":"Intern"}]`
		errs := problemOf(t, post(t, st, callerA, []byte(body), "application/json"), http.StatusBadRequest)
		want := map[string][]string{
			"BusinessTitle": {"BusinessTitle contains U+0000 (NUL), which cannot be stored (1)"},
			"Email":         {"Email is required (0)", "Email is required (1)"},
			"EmployeeType":  {`EmployeeType "Intern" must be empty, Employee or Contractor (4)`},
			"FirstName":     {"FirstName must be a string or null (0)"},
			"Identifier":    {"Identifier is given more than once; give it once (2)", "Identifier " + pid(1) + " is also the Identifier of row 0 (4)"},
			"LastName":      {"LastName is required (2)"},
			"Manager":       {"Manager x@example.com is not the Email of a user of your organization or of a row of this file (1)"},
			"Row":           {"the row must be a PersonImportRow object (3)"},
		}
		if fmt.Sprint(errs) != fmt.Sprint(want) {
			t.Errorf("errors:\n got %v\nwant %v", errs, want)
		}
		if got := count(t, st); got != before {
			t.Errorf("after a refused import %+v, want %+v", got, before)
		}
	})
}

func TestImportPromotesAnExistingConnection(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		// other (a user of orgB) already follows boss without IsManager; importing other into
		// orgA with Manager boss makes that connection a manager connection.
		create(t, st, "UserConnection", `{"FromUserIdentifier":"`+bossID+`","ToUserIdentifier":"`+otherID+`","IsSupervisor":true}`)
		rows := []row{{"Identifier": pid(1), "Email": other, "FirstName": "O", "LastName": "Ther", "Manager": boss}}
		if rec := post(t, st, operatorA, encode(t, rows), ""); rec.Code != http.StatusOK {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		reg, _ := registry()
		conn := reg.MustByName("UserConnection")
		rec, err := st.Get(context.Background(), conn, []any{bossID, otherID}, nil, engine.Organization(orgA))
		if err != nil || rec.Get(conn, "IsManager") != true || rec.Get(conn, "IsSupervisor") != true {
			t.Errorf("connection: %v, %v; want IsManager and IsSupervisor", rec, err)
		}
		users := reg.MustByName("User")
		var emails []string
		err = st.Stream(context.Background(), users, engine.Query{Fields: users.Output}, engine.Organization(orgA), func(r engine.Record) error {
			emails = append(emails, r.Get(users, "Email").(string))
			return nil
		})
		slices.Sort(emails)
		if err != nil || !slices.Equal(emails, []string{boss, other}) {
			t.Errorf("users of orgA %v, %v", emails, err)
		}
	})
}

// TestImportKeepsOrganizationScope (decisions §11): a non-operator importing a row with the
// Email of another organization's user gets the row problem "Email … is already in use",
// whatever the other rows, and nothing is written; the user stays outside its organization.
// An operator may link it.
func TestImportKeepsOrganizationScope(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		rows := []row{
			{"Identifier": pid(1), "Email": "fresh@example.com", "FirstName": "F", "LastName": "Resh"},
			{"Identifier": pid(2), "Email": other, "FirstName": "O", "LastName": "Ther"},
		}
		errs := problemOf(t, post(t, st, callerA, encode(t, rows), ""), http.StatusBadRequest)
		if want := map[string][]string{"Email": {"Email other@example.com is already in use (1)"}}; fmt.Sprint(errs) != fmt.Sprint(want) {
			t.Errorf("errors %v, want %v", errs, want)
		}
		if got := count(t, st); got != before {
			t.Errorf("after a refused import %+v, want %+v", got, before)
		}
		reg, _ := registry()
		users := reg.MustByName("User")
		if _, err := st.Get(context.Background(), users, []any{otherID}, nil, engine.Organization(orgA)); !engine.IsNotFound(err) {
			t.Errorf("orgA reads the other organization's user: %v", err)
		}
		// The same row from an operator links the user into orgA.
		if rec := post(t, st, operatorA, encode(t, rows[1:]), ""); rec.Code != http.StatusOK {
			t.Fatalf("operator import: %d %s", rec.Code, rec.Body)
		}
		if _, err := st.Get(context.Background(), users, []any{otherID}, nil, engine.Organization(orgA)); err != nil {
			t.Errorf("after an operator's import orgA cannot read the user: %v", err)
		}
	})
}
