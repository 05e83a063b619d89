package compliance

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"credo/auth"
	"credo/handlers/request"
)

func TestSummaries(t *testing.T) {
	for name, st := range openStores(t) {
		t.Run(name, func(t *testing.T) {
			loadDirectory(t, st)
			loadCompliance(t, st)
			callerA := principalOf(orgA)
			operator := &auth.Principal{UserIdentifier: learnerID(0), OrganizationIdentifier: orgA, Operator: true}
			tru, fal := true, false
			cases := []struct {
				name   string
				body   string
				caller *auth.Principal
				want   Request // the request the oracle applies
				count  int     // the expected number of rows, as a check on the oracle
			}{
				{name: "empty body", body: ``, want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "empty object", body: `{}`, want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "primary", body: `{"ProfileCondition":1}`, want: Request{ProfileCondition: PrimaryProfile}, count: 21 * 18},
				{name: "mandatory", body: `{"ProfileCondition":2}`, want: Request{ProfileCondition: MandatoryProfiles}, count: 21 * 18},
				{name: "all", body: `{"ProfileCondition":3}`, want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "must have profile, primary", body: `{"ProfileCondition":1,"LearnerMustHaveProfile":true}`,
					want: Request{ProfileCondition: PrimaryProfile, LearnerMustHaveProfile: true}, count: 16 * 18},
				{name: "must have profile, all", body: `{"LearnerMustHaveProfile":true}`,
					want: Request{ProfileCondition: AllProfiles, LearnerMustHaveProfile: true}, count: 20 * 18},
				{name: "must have profile false", body: `{"LearnerMustHaveProfile":false}`,
					want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "department employment", body: `{"DepartmentEmployment":true}`,
					want: Request{ProfileCondition: AllProfiles, DepartmentEmployment: &tru}, count: 5 * 18},
				{name: "organization employment", body: `{"OrganizationEmployment":true}`,
					want: Request{ProfileCondition: AllProfiles, OrganizationEmployment: &tru}, count: 6 * 18},
				{name: "data access", body: `{"DataAccess":true}`,
					want: Request{ProfileCondition: AllProfiles, DataAccess: &tru}, count: 5 * 18},
				{name: "department or data access", body: `{"DepartmentEmployment":true,"OrganizationEmployment":false,"DataAccess":true}`,
					want: Request{ProfileCondition: AllProfiles, DepartmentEmployment: &tru, DataAccess: &tru}, count: 10 * 18},
				{name: "all employment false: no filter", body: `{"DepartmentEmployment":false,"OrganizationEmployment":false,"DataAccess":false}`,
					want: Request{ProfileCondition: AllProfiles, DepartmentEmployment: &fal}, count: 21 * 18},
				{name: "all employment null: no filter", body: `{"DepartmentEmployment":null,"OrganizationEmployment":null,"DataAccess":null}`,
					want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "departments", body: `{"Departments":["` + strings.ToUpper(deptIDs[1]) + `"]}`,
					want: Request{ProfileCondition: AllProfiles, Departments: deptIDs[1:2]}, count: 8 * 18},
				{name: "departments empty = all", body: `{"Departments":[],"Learners":null,"Measurements":[]}`,
					want: Request{ProfileCondition: AllProfiles}, count: 21 * 18},
				{name: "learners", body: `{"Learners":["` + learnerID(0) + `","` + learnerID(19) + `","` + learnerB + `"]}`,
					want: Request{ProfileCondition: AllProfiles, Learners: []string{learnerID(0), learnerID(19), learnerB}}, count: 3 * 18},
				{name: "measurements", body: `{"Measurements":[18,1,1]}`,
					want: Request{ProfileCondition: AllProfiles, Measurements: []int{18, 1}}, count: 21 * 2},
				{name: "combined", body: `{"Departments":["` + deptIDs[0] + `","` + deptIDs[1] + `"],"Measurements":[3,4,5],"ProfileCondition":1,"LearnerMustHaveProfile":true,"OrganizationEmployment":true}`,
					want: Request{ProfileCondition: PrimaryProfile, Departments: deptIDs[:2], Measurements: []int{3, 4, 5}, LearnerMustHaveProfile: true, OrganizationEmployment: &tru}, count: 4 * 3},
				{name: "operator sees every organization", body: `{}`, caller: operator,
					want: Request{ProfileCondition: AllProfiles}, count: 22 * 18},
				{name: "another organization's learner is invisible", body: `{"Learners":["` + learnerB + `"]}`,
					want: Request{ProfileCondition: AllProfiles, Learners: []string{learnerB}}, count: 0},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					caller := cmpOr(tc.caller, callerA)
					got := summariesOf(t, st, caller, tc.body)
					want := expected(tc.want, request.Scope(auth.WithPrincipal(context.Background(), caller)))
					if len(want) != tc.count {
						t.Fatalf("oracle gives %d rows, the case expects %d", len(want), tc.count)
					}
					if len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
						t.Fatalf("got %d rows, want %d\nfirst difference: %s", len(got), len(want), firstDiff(got, want))
					}
				})
			}

			t.Run("scores", func(t *testing.T) {
				got := summariesOf(t, st, callerA, `{"Learners":["`+learnerID(1)+`"],"Measurements":[1,2,3,4,5,6,7]}`)
				want := []string{"0.66", "1", "1", "null", "0.12", "0.28", "0"}
				if len(got) != len(want) {
					t.Fatalf("got %d rows", len(got))
				}
				for i, s := range got {
					b, _ := json.Marshal(s.Measurement.Score)
					if string(b) != want[i] || s.Measurement.Key != i+1 {
						t.Errorf("key %d: Score %s, want %s", s.Measurement.Key, b, want[i])
					}
				}
			})

			t.Run("order and members", func(t *testing.T) {
				got := summariesOf(t, st, callerA, `{"Measurements":[2,1]}`)
				var names []string
				for _, s := range got {
					names = append(names, fmt.Sprintf("%s/%d", deref(s.Learner.Name), s.Measurement.Key))
				}
				if names[0] != "Ava Chen/1" || names[1] != "Ava Chen/2" || names[len(names)-1] != "<null>/2" {
					t.Fatalf("order %v", names)
				}
				// Learner 0 (Quinn Baker) is in Finance and Operations: Finance first by name.
				i := slices.Index(names, "Quinn Baker/1")
				if got[i].Department.Name == nil || *got[i].Department.Name != "Finance" || *got[i+1].Department.Name != "Operations" {
					t.Fatalf("departments of Quinn Baker: %v, %v", got[i].Department, got[i+1].Department)
				}
				raw := post(t, st, callerA, `{"Learners":["`+learnerID(19)+`"],"Measurements":[1]}`).Body.String()
				for _, member := range []string{`"PrimaryProfile":null`, `"Name":null`, `"Slug":null`, `"Description":null`, `"Type":"Learner"`, `"Score":null`} {
					if !strings.Contains(raw, member) {
						t.Errorf("body %s lacks %s", raw, member)
					}
				}
			})
		})
	}
}

func cmpOr[T any](p, q *T) *T {
	if p != nil {
		return p
	}
	return q
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func firstDiff(got, want []Summary) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			return fmt.Sprintf("row %d\n got %s\nwant %s", i, g, w)
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}
