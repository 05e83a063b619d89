package legacy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"credo/handlers/problem"
)

// TestErrors covers every message of api.md's version-1 Errors table (and decisions §12's
// "Event is full.") with its status, plus the authentication and routing statuses.
func TestErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const (
			regBase   = "0190a6f0-0000-7000-8000-0000000001a1"
			regNoForm = "0190a6f0-0000-7000-8000-0000000001a2"
			regFull   = "0190a6f0-0000-7000-8000-0000000001a3"
			fullEvent = "0190a6f0-0000-7000-8000-0000000001e1"
			fresh     = "0190a6f0-0000-7000-8000-0000000001ff"
			missing   = "0190a6f0-0000-7000-8000-0000000001fe"
		)
		baseStart := start(30, "09:00:00", "-06:00")
		base := e.ok("POST", regPath(regBase, "register-lax"), e.registerBody(venueA, baseStart, ""))
		e.insert("Registration", map[string]any{"RegistrationIdentifier": regNoForm, "OrganizationIdentifier": orgA,
			"EventIdentifier": base["Event"], "LearnerIdentifier": alan, "FormIdentifier": nil})
		fullStart := start(31, "10:00:00", "Z")
		e.ok("POST", "/api/events/"+fullEvent, `{"EventVenue":"`+venueA2+`","EventStart":"`+fullStart+
			`","EventExamType":"Sitting","EventExamFormat":"Online","EventBillingCode":"`+billingA+`","RegistrationLimit":1}`)
		e.ok("POST", regPath(regFull, "register-lax"), e.registerBody(venueA2, fullStart, ""))

		newEvent := func(members string) string {
			return `{"EventVenue":"` + venueA3 + `","EventStart":"` + start(40, "08:00:00", "Z") + `","Learner":"` + ada +
				`","Assessment":"MATH"` + members + `}`
		}
		cases := []struct {
			name         string
			method, path string
			body         string
			as           string
			status       int
			detail       string
		}{
			// register-lax
			{name: "accommodation type empty", method: "POST", path: regPath(fresh, "register-lax"),
				body:   e.registerBody(venueA, baseStart, `"Accommodations":[{"Type":"  ","TimeExtension":10}]`),
				status: 400, detail: msgAccommodationType},
			{name: "accommodation type missing", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, baseStart, `"Accommodations":[{"Name":"Reader"}]`), status: 400, detail: msgAccommodationType},
			{name: "learner of another organization", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + grace + `","Assessment":"MATH"}`,
				status: 400, detail: "Learner not found."},
			{name: "learner unknown", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + nobody + `","Assessment":"MATH"}`,
				status: 400, detail: "Learner not found."},
			{name: "learner missing", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Assessment":"MATH"}`,
				status: 400, detail: "Learner not found."},
			{name: "form unknown", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + ada + `","Assessment":"NOPE"}`,
				status: 400, detail: "Assessment form not found."},
			{name: "form unpublished", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + ada + `","Assessment":"DRAFT"}`,
				status: 400, detail: "Assessment form not found."},
			{name: "form only bilingual", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + ada + `","Assessment":"BIL"}`,
				status: 400, detail: "Assessment form not found."},
			{name: "form of another organization", method: "POST", path: regPath(fresh, "register-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + baseStart + `","Learner":"` + ada + `","Assessment":"OTHER"}`,
				status: 400, detail: "Assessment form not found."},
			{name: "duplicate registration", method: "POST", path: regPath(regBase, "register-lax"),
				body: e.registerBody(venueA, baseStart, ""), status: 400,
				detail: "Registration already exists. You cannot add a new registration with the same identifier."},
			{name: "duplicate registration of another organization", method: "POST", path: regPath(regBase, "register-lax"),
				body: `{"Learner":"` + grace + `"}`, as: orgB, status: 400,
				detail: "Registration already exists. You cannot add a new registration with the same identifier."},
			{name: "exam type missing", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamFormat":"Paper","EventBillingCode":"` + billingA + `"`), status: 400, detail: "EventExamType not specified."},
			{name: "exam type invalid", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"sitting","EventExamFormat":"Paper","EventBillingCode":"` + billingA + `"`), status: 400, detail: "Invalid EventExamType value."},
			{name: "billing code missing", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"Sitting","EventExamFormat":"Paper"`), status: 400, detail: "EventBillingCode not specified."},
			{name: "billing code of another organization", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"` + billingB + `"`), status: 400, detail: "Invalid EventBillingCode value."},
			{name: "format missing", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"Test","EventBillingCode":"` + billingA + `"`), status: 400, detail: "EventExamFormat not specified."},
			{name: "format invalid", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"Test","EventExamFormat":"Carrier pigeon","EventBillingCode":"` + billingA + `"`), status: 400, detail: "Invalid EventExamFormat value."},
			{name: "individual needs a format too", method: "POST", path: regPath(fresh, "register-lax"),
				body: newEvent(`,"EventExamType":"Individual","EventBillingCode":"` + billingA + `"`), status: 400, detail: "EventExamFormat not specified."},
			{name: "start in the past", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, "2020-01-01T09:00:00Z", ""), status: 400, detail: "Invalid EventStartTime value."},
			{name: "start without offset", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, "2031-01-01T09:00:00", ""), status: 400, detail: "Invalid EventStartTime value."},
			{name: "start missing", method: "POST", path: regPath(fresh, "register-lax"),
				body: `{"EventVenue":"` + venueA + `","Learner":"` + ada + `","Assessment":"MATH"}`, status: 400, detail: "Invalid EventStartTime value."},
			{name: "venue of another organization", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueB, baseStart, ""), status: 400, detail: "Venue not found."},
			{name: "venue not a uuid", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody("hall-1", baseStart, ""), status: 400, detail: "Venue not found."},
			{name: "event full", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA2, fullStart, ""), status: 400, detail: "Event is full."},
			// transfer-lax
			{name: "transfer missing registration", method: "POST", path: regPath(missing, "transfer-lax"),
				body: `{"Learner":"` + ada + `"}`, status: 404, detail: "Registration not found."},
			{name: "transfer registration of another organization", method: "POST", path: regPath(regBase, "transfer-lax"),
				body: `{"Learner":"` + ada + `"}`, as: orgB, status: 404, detail: "Registration not found."},
			{name: "transfer without form", method: "POST", path: regPath(regNoForm, "transfer-lax"),
				body:   `{"EventVenue":"` + venueA3 + `","EventStart":"` + baseStart + `","Learner":"` + alan + `"}`,
				status: 400, detail: "Registration has no assessment form."},
			{name: "transfer another learner", method: "POST", path: regPath(regBase, "transfer-lax"),
				body:   `{"EventVenue":"` + venueA3 + `","EventStart":"` + baseStart + `","Learner":"` + alan + `"}`,
				status: 400, detail: "Learner does not belong to registration."},
			{name: "transfer to its own event", method: "POST", path: regPath(regBase, "transfer-lax"),
				body:   `{"EventVenue":"` + venueA + `","EventStart":"` + start(30, "15:00:30", "Z") + `","Learner":"` + ada + `"}`,
				status: 400, detail: "Registration already assigned to event."},
			{name: "transfer unknown learner", method: "POST", path: regPath(regBase, "transfer-lax"),
				body:   `{"EventVenue":"` + venueA3 + `","EventStart":"` + baseStart + `","Learner":"` + grace + `"}`,
				status: 400, detail: "Learner not found."},
			// cancel
			{name: "cancel missing registration", method: "POST", path: regPath(missing, "cancel"),
				body: `{"Reason":"ill"}`, status: 404, detail: "Registration not found."},
			// change-assessment
			{name: "change-assessment missing registration", method: "POST", path: regPath(missing, "change-assessment"),
				body: `{"Assessment":"SCI"}`, status: 404, detail: "Registration not found."},
			{name: "change-assessment unpublished", method: "POST", path: regPath(regBase, "change-assessment"),
				body: `{"Assessment":"DRAFT"}`, status: 400, detail: "Assessment form not found."},
			{name: "change-assessment bilingual", method: "POST", path: regPath(regBase, "change-assessment"),
				body: `{"Assessment":"BIL"}`, status: 400, detail: "Assessment form not found."},
			{name: "change-assessment same form", method: "POST", path: regPath(regBase, "change-assessment"),
				body: `{"Assessment":"MATH"}`, status: 400, detail: "Assessment already assigned to registration."},
			// accommodations
			{name: "grant missing registration", method: "POST", path: regPath(missing, "grant-accommodation"),
				body: `{"Type":"Reader"}`, status: 404, detail: "Registration not found."},
			{name: "revoke missing registration", method: "POST", path: regPath(missing, "revoke-accommodation"),
				body: `{"Type":"Reader"}`, status: 404, detail: "Registration not found."},
			{name: "grant without type", method: "POST", path: regPath(regBase, "grant-accommodation"),
				body: `{"Name":"Reader"}`, status: 400, detail: msgAccommodationType},
			{name: "revoke without type", method: "POST", path: regPath(regBase, "revoke-accommodation"),
				body: `{}`, status: 400, detail: msgAccommodationType},
			// reads
			{name: "get missing registration", method: "GET", path: regPath(missing, ""), status: 404, detail: "Registration not found."},
			{name: "get registration of another organization", method: "GET", path: regPath(regBase, ""), as: orgB, status: 404, detail: "Registration not found."},
			{name: "delete missing registration", method: "DELETE", path: regPath(missing, ""), status: 404, detail: "Registration not found."},
			// events
			{name: "add event twice", method: "POST", path: "/api/events/" + fullEvent,
				body:   `{"EventVenue":"` + venueA2 + `","EventStart":"` + fullStart + `","EventExamType":"Sitting","EventExamFormat":"Online","EventBillingCode":"` + billingA + `"}`,
				status: 400, detail: msgEventExists},
			{name: "add event negative limit", method: "POST", path: "/api/events/" + fresh,
				body: `{"EventStart":"` + start(40, "08:00:00", "Z") + `","RegistrationLimit":-1}`, status: 400, detail: msgLimitInvalid},
			{name: "cancel missing event", method: "POST", path: "/api/events/" + missing + "/cancel", body: `{}`, status: 404, detail: msgEventNotFound},
			{name: "list events without date", method: "GET", path: "/api/events/list-events", status: 400},
			{name: "list events bad date", method: "GET", path: "/api/events/list-events?date=15/01/2030", status: 400},
			{name: "list events on the year 0", method: "GET", path: "/api/events/list-events?date=0000-12-31", status: 400},
			{name: "classes without organization", method: "GET", path: "/api/events/classes", as: "-", status: 400},
			// strict input, credentials, routing
			{name: "unknown body member", method: "POST", path: regPath(regBase, "cancel"), body: `{"reason":"x"}`, status: 400},
			{name: "wrong member type", method: "POST", path: regPath(regBase, "cancel"), body: `{"Reason":5}`, status: 400},
			{name: "body not an object", method: "POST", path: regPath(regBase, "cancel"), body: `[1]`, status: 400},
			{name: "body over 1 MiB", method: "POST", path: regPath(regBase, "cancel"),
				body: `{"Reason":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, status: 413},
			{name: "unknown accommodation member", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, baseStart, `"Accommodations":[{"Type":"Reader","Minutes":5}]`), status: 400},
			{name: "no credential", method: "GET", path: regPath(regBase, ""), as: "-", status: 401},
			{name: "invalid credential", method: "GET", path: regPath(regBase, ""), as: "invalid", status: 401},
			{name: "wrong method", method: "GET", path: "/api/registrations/count", status: 405},
			{name: "wrong method on item", method: "PUT", path: regPath(regBase, ""), status: 405},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rec := e.doAs(c.method, c.path, c.body, c.as)
				if rec.Code != c.status {
					t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
				}
				_, detail := problemOf(t, rec)
				if c.detail != "" && detail != c.detail {
					t.Fatalf("Detail %q, want %q", detail, c.detail)
				}
			})
		}
		t.Run("405 names the allowed methods", func(t *testing.T) {
			rec := e.do("PATCH", regPath(regBase, ""), "")
			if got := rec.Header().Get("Allow"); got != "DELETE, GET" {
				t.Fatalf("Allow %q", got)
			}
		})
		t.Run("nothing was written by refused requests", func(t *testing.T) {
			if n := e.count("Registration", "RegistrationIdentifier", fresh); n != 0 {
				t.Fatalf("%d registrations %s", n, fresh)
			}
			if n := e.count("Event", "EventVenue", venueA3); n != 0 {
				t.Fatalf("%d events at venue A3", n)
			}
		})
	})
}

// doAs is do with the case's caller: "" is orgA, "-" anonymous, "invalid" a bad credential.
func (e *env) doAs(method, path, body, as string) *httptest.ResponseRecorder {
	if as == "invalid" {
		return e.doWith(method, path, body, http.Header{"X-Test-Invalid": {"1"}})
	}
	if as == "" {
		return e.do(method, path, body)
	}
	return e.do(method, path, body, as)
}

// TestUnknownMembersNamed (both stores): a body with members the operation does not take is a
// 400 whose Detail names each of them, sorted by name as v2 names a body's unknown members, and
// whose Errors has each under its own name; nested ones (an Accommodation's) by their path.
// The Detail named none of them.
func TestUnknownMembersNamed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const fresh = "0190a6f0-0000-7000-8000-0000000002a1"
		for _, c := range []struct {
			name, path, body, detail string
			members                  []string
		}{
			{name: "two unknown members", path: regPath(fresh, "register-lax"),
				body:    e.registerBody(venueA, start(30, "09:00:00", "Z"), `"Zone":"B","Bogus":1`),
				detail:  "The body has members that the operation does not take: Bogus, Zone.",
				members: []string{"Bogus", "Zone"}},
			{name: "one on a command", path: regPath(fresh, "cancel"), body: `{"Reason":"ill","reason":"ill"}`,
				detail: "The body has members that the operation does not take: reason.", members: []string{"reason"}},
			{name: "in an accommodation", path: regPath(fresh, "register-lax"),
				body:    e.registerBody(venueA, start(30, "09:00:00", "Z"), `"Accommodations":[{"Type":"Reader","Minutes":5}]`),
				detail:  "The body has members that the operation does not take: Accommodations[0].Minutes.",
				members: []string{"Accommodations[0].Minutes"}},
		} {
			rec := e.do("POST", c.path, c.body)
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s: %d %s, want 400", c.name, rec.Code, rec.Body)
				continue
			}
			if _, detail := problemOf(t, rec); detail != c.detail {
				t.Errorf("%s: Detail %q, want %q", c.name, detail, c.detail)
			}
			var p struct{ Errors map[string][]string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			for _, m := range c.members {
				if len(p.Errors[m]) == 0 {
					t.Errorf("%s: Errors %v do not name %s", c.name, p.Errors, m)
				}
			}
			if len(p.Errors) != len(c.members) {
				t.Errorf("%s: Errors %v, want only %v", c.name, p.Errors, c.members)
			}
		}
		// Many: the Detail names as many as Errors holds (problem.MaxMembers) and counts the rest.
		var body, names []string
		for i := range problem.MaxMembers + 10 {
			body = append(body, fmt.Sprintf(`"M%03d":1`, i))
			if i < problem.MaxMembers {
				names = append(names, fmt.Sprintf("M%03d", i))
			}
		}
		rec := e.do("POST", regPath(fresh, "cancel"), "{"+strings.Join(body, ",")+"}")
		want := "The body has members that the operation does not take: " + strings.Join(names, ", ") + ".; and problems with 10 more members or parameters, not listed"
		if _, detail := problemOf(t, rec); detail != want {
			t.Errorf("%d unknown members: Detail %q, want %q", len(body), detail, want)
		}
	})
}
