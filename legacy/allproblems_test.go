package legacy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestBodyProblemsTogether: a version-1 body's problems that need no database come in one 400
// naming them all, each with the message it has alone (so a single problem is worded as
// before), and a member of the wrong type is not also reported missing or blank.
func TestBodyProblemsTogether(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const fresh = "0190a6f0-0000-7000-8000-0000000003a1"
		future := start(20, "09:00:00", "Z")
		for _, c := range []struct {
			name, path, body string
			details          []string // each is in Detail, in this order
			members          []string // Errors names exactly these
		}{
			{name: "register-lax: wrong type and EventStart missing", path: regPath(fresh, "register-lax"),
				body:    `{"EventVenue":"` + venueA + `","Learner":5,"Assessment":"MATH"}`,
				details: []string{"Learner must be a string", msgStartInvalid}, members: []string{"EventStart", "Learner"}},
			{name: "register-lax: wrong types, Accommodations and a past EventStart", path: regPath(fresh, "register-lax"),
				body: `{"EventVenue":true,"EventStart":"2001-01-01T00:00:00Z","Learner":"` + ada + `","Assessment":[],` +
					`"Accommodations":[{"Type":"  ","TimeExtension":-1},{"Type":7},{"Name":"x"}]}`,
				details: []string{"EventVenue must be a string", "Assessment must be a string", msgAccommodationType,
					msgExtensionInvalid, "Accommodations[1].Type must be a string", msgAccommodationType, msgStartInvalid},
				members: []string{"Accommodations[0].TimeExtension", "Accommodations[0].Type", "Accommodations[1].Type",
					"Accommodations[2].Type", "Assessment", "EventStart", "EventVenue"}},
			{name: "register-lax: Accommodations and EventStart", path: regPath(fresh, "register-lax"),
				body:    e.registerBody(venueA, "2001-01-01T00:00:00Z", `"Accommodations":[{"TimeExtension":"ten"}]`),
				details: []string{"Accommodations[0].TimeExtension must be a 32-bit integer", msgAccommodationType, msgStartInvalid},
				members: []string{"Accommodations[0].TimeExtension", "Accommodations[0].Type", "EventStart"}},
			{name: "grant-accommodation: wrong type and negative extension", path: regPath(rid(1), "grant-accommodation"),
				body:    `{"Type":3,"TimeExtension":-5}`,
				details: []string{"Type must be a string", msgExtensionInvalid}, members: []string{"TimeExtension", "Type"}},
			{name: "add event: wrong type, negative limit, EventStart missing", path: "/api/events/" + fresh,
				body:    `{"EventVenue":"` + venueA + `","EventExamType":1,"RegistrationLimit":-1}`,
				details: []string{"EventExamType must be a string", msgLimitInvalid, msgStartInvalid},
				members: []string{"EventExamType", "EventStart", "RegistrationLimit"}},
			{name: "search: every criterion", path: "/api/registrations/search",
				body:    `{"Name":1,"Email":"` + strings.Repeat("x", 5000) + `","LastChangeTimeSince":"yesterday"}`,
				details: []string{"Name must be a string", "Email ", "LastChangeTimeSince: "},
				members: []string{"Email", "LastChangeTimeSince", "Name"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := e.with(t)
				if strings.Contains(c.path, "grant-accommodation") {
					e.ok("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, future, ""))
				}
				rec := e.do("POST", c.path, c.body)
				if rec.Code != 400 {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				var p struct {
					Detail string
					Errors map[string][]string
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
					t.Fatal(err)
				}
				rest := p.Detail
				for _, d := range c.details {
					i := strings.Index(rest, d)
					if i < 0 {
						t.Fatalf("Detail %q lacks %q (in order)", p.Detail, d)
					}
					rest = rest[i+len(d):]
				}
				var names []string
				for n := range p.Errors {
					names = append(names, n)
				}
				slices.Sort(names)
				if !slices.Equal(names, c.members) {
					t.Fatalf("Errors names %v, want %v: %s", names, c.members, rec.Body)
				}
			})
		}
		if n := e.count("Registration", "RegistrationIdentifier", fresh); n != 0 {
			t.Fatalf("%d registrations written", n)
		}
	})
}
