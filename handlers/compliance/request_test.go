package compliance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/route"
	"credo/internal/testenv"
)

func TestDecodeRequest(t *testing.T) {
	tru := true
	cases := []struct {
		name string
		body string
		want Request
	}{
		{name: "empty", body: "", want: Request{ProfileCondition: AllProfiles}},
		{name: "null", body: " null ", want: Request{ProfileCondition: AllProfiles}},
		{name: "every member", body: `{"Departments":["0190A6F0-0000-7000-8000-100000000001"],"Learners":[],
			"Measurements":[18,1,18],"ProfileCondition":2,"LearnerMustHaveProfile":true,
			"DepartmentEmployment":true,"OrganizationEmployment":null,"DataAccess":false}`,
			want: Request{Departments: []string{"0190a6f0-0000-7000-8000-100000000001"}, Learners: []string{},
				Measurements: []int{18, 1}, ProfileCondition: MandatoryProfiles, LearnerMustHaveProfile: true,
				DepartmentEmployment: &tru, DataAccess: new(bool)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFunctions(t *testing.T) {
	tru, fal := true, false
	cases := []struct {
		name string
		q    Request
		want []string
	}{
		{name: "none", q: Request{}, want: nil},
		{name: "all false", q: Request{DepartmentEmployment: &fal, OrganizationEmployment: &fal, DataAccess: &fal}, want: nil},
		{name: "department", q: Request{DepartmentEmployment: &tru}, want: []string{"Department"}},
		{name: "all", q: Request{DepartmentEmployment: &tru, OrganizationEmployment: &tru, DataAccess: &tru},
			want: []string{"Department", "Organization", "Administration"}},
	}
	for _, tc := range cases {
		if got := tc.q.Functions(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	cases := []struct {
		required, satisfied int64
		want                string
	}{
		{3, 2, "0.66"}, {3, 3, "1"}, {3, 5, "1"}, {0, 0, "null"}, {0, 4, "null"}, {3, 1, "0.33"},
		{8, 1, "0.12"}, {7, 2, "0.28"}, {4, 0, "0"}, {100, 99, "0.99"}, {1000, 999, "0.99"}, {10, 7, "0.7"},
	}
	for _, tc := range cases {
		b, _ := json.Marshal(Score(tc.required, tc.satisfied))
		if string(b) != tc.want {
			t.Errorf("Score(%d, %d) = %s, want %s", tc.required, tc.satisfied, b, tc.want)
		}
	}
}

// TestBadBodies checks that every malformed body is a 400 problem naming the member, through
// the HTTP handler (no query runs, so one SQLite store suffices).
func TestBadBodies(t *testing.T) {
	var st = openSQLite(t)
	cases := []struct {
		name   string
		body   string
		status int
		member string // the member the problem must name ("" for body-level problems)
	}{
		{name: "unknown member", body: `{"Foo":1}`, status: 400, member: "Foo"},
		{name: "wrong case", body: `{"departments":[]}`, status: 400, member: "departments"},
		{name: "departments not an array", body: `{"Departments":"x"}`, status: 400, member: "Departments"},
		{name: "department not a uuid", body: `{"Departments":["nope"]}`, status: 400, member: "Departments"},
		{name: "department null item", body: `{"Departments":[null]}`, status: 400, member: "Departments"},
		{name: "learner a number", body: `{"Learners":[1]}`, status: 400, member: "Learners"},
		{name: "measurement 0", body: `{"Measurements":[0]}`, status: 400, member: "Measurements"},
		{name: "measurement 19", body: `{"Measurements":[1,19]}`, status: 400, member: "Measurements"},
		{name: "measurement string", body: `{"Measurements":["1"]}`, status: 400, member: "Measurements"},
		{name: "measurement fraction", body: `{"Measurements":[1.5]}`, status: 400, member: "Measurements"},
		{name: "profile condition 0", body: `{"ProfileCondition":0}`, status: 400, member: "ProfileCondition"},
		{name: "profile condition 4", body: `{"ProfileCondition":4}`, status: 400, member: "ProfileCondition"},
		{name: "profile condition string", body: `{"ProfileCondition":"3"}`, status: 400, member: "ProfileCondition"},
		{name: "profile condition null", body: `{"ProfileCondition":null}`, status: 400, member: "ProfileCondition"},
		{name: "profile condition huge", body: `{"ProfileCondition":99999999999}`, status: 400, member: "ProfileCondition"},
		{name: "must have profile string", body: `{"LearnerMustHaveProfile":"yes"}`, status: 400, member: "LearnerMustHaveProfile"},
		{name: "must have profile null", body: `{"LearnerMustHaveProfile":null}`, status: 400, member: "LearnerMustHaveProfile"},
		{name: "department employment number", body: `{"DepartmentEmployment":1}`, status: 400, member: "DepartmentEmployment"},
		{name: "organization employment string", body: `{"OrganizationEmployment":"true"}`, status: 400, member: "OrganizationEmployment"},
		{name: "data access object", body: `{"DataAccess":{}}`, status: 400, member: "DataAccess"},
		{name: "array body", body: `[1,2]`, status: 400},
		{name: "string body", body: `"x"`, status: 400},
		{name: "malformed", body: `{"Departments":[`, status: 400},
		{name: "two objects", body: `{} {}`, status: 400},
		{name: "too large", body: `{"Learners":[` + strings.Repeat(`"0190a6f0-0000-7000-8000-200000000001",`, MaxBodyBytes/38) + `]}`, status: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := post(t, st, principalOf(orgA), tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Content-Type %q", ct)
			}
			var p struct {
				Status int
				Detail string
				Errors map[string][]string
			}
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != tc.status {
				t.Fatalf("problem %s: %v", w.Body, err)
			}
			if tc.member != "" && (len(p.Errors[tc.member]) == 0 || !strings.Contains(p.Errors[tc.member][0], tc.member)) {
				t.Fatalf("problem does not name %s: %s", tc.member, w.Body)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	rs := Routes()
	if len(rs) != 1 {
		t.Fatalf("%d routes", len(rs))
	}
	r := rs[0]
	if r.Method != http.MethodPost || r.Access != route.Protected || r.Path != "api/plugin/cmds/compliance-summaries" || r.Object != r.Path ||
		r.Need != "Execute" || r.Handler == nil || r.Summary == "" {
		t.Fatalf("route %+v", r)
	}
}

func TestMeasurementNames(t *testing.T) {
	if MeasurementName(1) != "Time-Sensitive Safety Certificate" || MeasurementName(18) != "HR Learning Module" ||
		MeasurementName(0) != "" || MeasurementName(19) != "" {
		t.Fatal("measurement names")
	}
}

// TestStatusDescriptor checks that `credo load` (the engine's Create) refuses status rows outside
// the measurement and variant ranges.
func TestStatusDescriptor(t *testing.T) {
	st := openSQLite(t)
	r := st.Registry().MustByName("ComplianceStatus")
	base := `"OrganizationIdentifier":"` + orgA + `","DepartmentIdentifier":"` + deptIDs[0] + `","LearnerIdentifier":"` + learnerID(0) + `"`
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{` + base + `,"MeasurementKey":18,"ProfileVariant":3,"Required":2}`, true},
		{`{` + base + `,"MeasurementKey":19,"ProfileVariant":3}`, false},
		{`{` + base + `,"MeasurementKey":1,"ProfileVariant":4}`, false},
		{`{` + base + `,"MeasurementKey":1,"ProfileVariant":1,"Required":-1}`, false},
	} {
		_, err := testenv.CreateJSON(context.Background(), st, r, []byte(tc.body), engine.AllOrganizations())
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v", tc.body, err)
		}
	}
}
