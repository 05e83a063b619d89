package legacy

import (
	"fmt"
	"testing"
)

// TestRegistrationSearch covers count and search criteria and the newest-first order.
func TestRegistrationSearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		at := start(12, "09:00:00", "Z")
		for i := 1; i <= 3; i++ {
			e.ok("POST", regPath(rid(i), "register-lax"), e.registerBody(venueA, at, ""))
		}
		alanBody := fmt.Sprintf(`{"EventVenue":%q,"EventStart":%q,"Learner":%q,"Assessment":"SCI"}`, venueA, at, alan)
		e.ok("POST", regPath(rid(4), "register-lax"), alanBody)
		e.ok("POST", regPath(rid(1), "cancel"), `{}`) // rid(1) is now the latest change
		mid := e.ok("GET", regPath(rid(3), ""), "")["LastChangeTime"].(string)

		for _, c := range []struct {
			name     string
			criteria string
			ids      []string
		}{
			{name: "everything, newest change first", criteria: `{}`, ids: []string{rid(1), rid(4), rid(3), rid(2)}},
			{name: "empty body", criteria: ``, ids: []string{rid(1), rid(4), rid(3), rid(2)}},
			{name: "name, any case", criteria: `{"Name":"lOvElAcE"}`, ids: []string{rid(1), rid(3), rid(2)}},
			{name: "email substring", criteria: `{"Email":"ALAN@"}`, ids: []string{rid(4)}},
			{name: "code substring", criteria: `{"Code":"t-2"}`, ids: []string{rid(4)}},
			{name: "like wildcards are literal", criteria: `{"Name":"%"}`, ids: []string{}},
			{name: "since is inclusive", criteria: `{"LastChangeTimeSince":"` + mid + `"}`, ids: []string{rid(1), rid(4), rid(3)}},
			{name: "before is exclusive", criteria: `{"LastChangeTimeBefore":"` + mid + `"}`, ids: []string{rid(2)}},
			{name: "both", criteria: `{"Name":"Ada","LastChangeTimeSince":"` + mid + `","LastChangeTimeBefore":"2099-01-01T00:00:00-08:00"}`, ids: []string{rid(1), rid(3)}},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := e.with(t)
				count := e.ok("POST", "/api/registrations/count", c.criteria)
				if count["Count"] != float64(len(c.ids)) || len(count) != 1 {
					t.Fatalf("count %v, want {Count: %d}", count, len(c.ids))
				}
				rec := e.do("POST", "/api/registrations/search", c.criteria)
				var items []map[string]any
				decodeJSON(t, rec, &items)
				var got []string
				for _, it := range items {
					got = append(got, it["RegistrationIdentifier"].(string))
				}
				if fmt.Sprint(got) != fmt.Sprint(c.ids) {
					t.Fatalf("search %v, want %v", got, c.ids)
				}
			})
		}

		t.Run("item shape", func(t *testing.T) {
			e := e.with(t)
			rec := e.do("POST", "/api/registrations/search", `{"Email":"alan"}`)
			body := rec.Body.Bytes()
			keys := jsonKeys(t, body[1:len(body)-2])
			want := []string{"RegistrationIdentifier", "AttendanceStatus", "LastChangeTime", "LastChangeType",
				"EventIdentifier", "EventNumber", "EventFormat", "EventStart", "EventVenue", "EventExamType",
				"LearnerIdentifier", "LearnerCode", "LearnerName", "LearnerEmail", "AssessmentFormIdentifier",
				"AssessmentFormCode", "AssessmentFormName", "AssessmentFormTitle"}
			if fmt.Sprint(keys) != fmt.Sprint(want) {
				t.Fatalf("members %v\nwant    %v", keys, want)
			}
		})

		t.Run("another organization sees none", func(t *testing.T) {
			e := e.with(t)
			if got := e.ok("POST", "/api/registrations/count", `{}`, orgB); got["Count"] != 0.0 {
				t.Fatalf("orgB count %v", got)
			}
		})

		t.Run("bad datetime names the member", func(t *testing.T) {
			e := e.with(t)
			rec := e.do("POST", "/api/registrations/count", `{"LastChangeTimeSince":"2030-01-01 10:00"}`)
			if rec.Code != 400 || !containsStr(rec.Body.String(), "LastChangeTimeSince") {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
		})
	})
}

// TestRegistrationSearchFoldsCase pins that Name, Email and Code match as a contains filter
// does: under simple case folding beyond ASCII, accents kept, LIKE's wildcards literal.
func TestRegistrationSearchFoldsCase(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const emilie = "0190a6f0-0000-7000-8000-0000000000c4"
		e.insert("User", map[string]any{"UserIdentifier": emilie, "Email": "Émilie.Ørsted@example.org", "FullName": "Émilie Ørsted"})
		e.insert("Person", map[string]any{"UserIdentifier": emilie, "OrganizationIdentifier": orgA,
			"FullName": "Émilie Ørsted", "PersonCode": `ÉØ_5%\x`})
		at := start(12, "09:00:00", "Z")
		e.ok("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, at, ""))
		e.ok("POST", regPath(rid(2), "register-lax"), fmt.Sprintf(`{"EventVenue":%q,"EventStart":%q,"Learner":%q,"Assessment":"SCI"}`, venueA, at, emilie))
		for _, c := range []struct {
			criteria string
			ids      []string
		}{
			{criteria: `{"Name":"émilie"}`, ids: []string{rid(2)}},
			{criteria: `{"Name":"ÉMILIE"}`, ids: []string{rid(2)}},
			{criteria: `{"Name":"ørsted"}`, ids: []string{rid(2)}},
			{criteria: `{"Name":"MILIE Ø"}`, ids: []string{rid(2)}},
			{criteria: `{"Name":"emilie"}`, ids: []string{}},
			{criteria: `{"Name":"LOVELACE"}`, ids: []string{rid(1)}},
			{criteria: `{"Email":"ÉMILIE.ø"}`, ids: []string{rid(2)}},
			{criteria: `{"Email":"EXAMPLE.ORG"}`, ids: []string{rid(2), rid(1)}},
			{criteria: `{"Code":"éø_5%\\x"}`, ids: []string{rid(2)}},
			{criteria: `{"Code":"ø_"}`, ids: []string{rid(2)}},
			{criteria: `{"Code":"ø%5"}`, ids: []string{}},
			{criteria: `{"Code":"%\\"}`, ids: []string{rid(2)}},
			{criteria: `{"Code":"_"}`, ids: []string{rid(2)}},
			{criteria: `{"Code":"L_1"}`, ids: []string{}},
		} {
			t.Run(c.criteria, func(t *testing.T) {
				e := e.with(t)
				if count := e.ok("POST", "/api/registrations/count", c.criteria); count["Count"] != float64(len(c.ids)) {
					t.Fatalf("count %v, want %d", count, len(c.ids))
				}
				var items []map[string]any
				decodeJSON(t, e.do("POST", "/api/registrations/search", c.criteria), &items)
				got := []string{}
				for _, it := range items {
					got = append(got, it["RegistrationIdentifier"].(string))
				}
				if fmt.Sprint(got) != fmt.Sprint(c.ids) {
					t.Fatalf("search %v, want %v", got, c.ids)
				}
			})
		}
	})
}
