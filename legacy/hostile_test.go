package legacy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHostileInput: version 1 reads its query strings and bodies through the same readers as
// version 2, so what the stores cannot keep or what a client cannot have meant is a 400 naming
// the parameter or member, on both stores, before anything is written.
func TestHostileInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const fresh = "0190a6f0-0000-7000-8000-0000000002ff"
		id := rid(4000)
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), ""))
		long := strings.Repeat("x", 4001)
		cases := []struct {
			name, method, path, body, member string
		}{
			// Query strings.
			{name: "invalid byte in date", method: "GET", path: "/api/events/list-events?date=%ff", member: "date"},
			{name: "malformed escape", method: "GET", path: "/api/events/list-events?date=%zz", member: "date"},
			{name: "semicolon", method: "GET", path: "/api/events/list-events?date=2030-01-20;x=1", member: "date"},
			{name: "NUL in organization", method: "GET", path: "/api/events/classes?organization=%00", member: "organization"},
			{name: "date out of range", method: "GET", path: "/api/events/list-events?date=9999-12-31T23:00:00-02:00", member: "date"},
			// Registration counts and searches.
			{name: "NUL in Name", method: "POST", path: "/api/registrations/count", body: `{"Name":"a\u0000"}`, member: "Name"},
			{name: "invalid byte in Email", method: "POST", path: "/api/registrations/search", body: "{\"Email\":\"\xc3\x28\"}", member: "Email"},
			{name: "lone surrogate in Code", method: "POST", path: "/api/registrations/count", body: `{"Code":"\udc00"}`, member: "Code"},
			{name: "Name longer than the member", method: "POST", path: "/api/registrations/count", body: `{"Name":"` + long + `"}`, member: "Name"},
			{name: "Code longer than the member", method: "POST", path: "/api/registrations/search", body: `{"Code":"` + long + `"}`, member: "Code"},
			{name: "since out of range", method: "POST", path: "/api/registrations/count", body: `{"LastChangeTimeSince":"9999-12-31T23:00:00-02:00"}`, member: "LastChangeTimeSince"},
			{name: "repeated criterion", method: "POST", path: "/api/registrations/count", body: `{"Name":"a","Name":"b"}`, member: "Name"},
			// Command and event bodies.
			{name: "quoted limit", method: "POST", path: "/api/events/" + fresh, body: `{"RegistrationLimit":"7"}`, member: "RegistrationLimit"},
			{name: "quoted negative zero", method: "POST", path: regPath(id, "grant-accommodation"), body: `{"Type":"Reader","TimeExtension":"-0"}`, member: "TimeExtension"},
			{name: "number for a string", method: "POST", path: regPath(id, "cancel"), body: `{"Reason":7}`, member: "Reason"},
			{name: "NUL in a reason", method: "POST", path: regPath(id, "cancel"), body: `{"Reason":"\u0000"}`, member: "Reason"},
			{name: "repeated nested member", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, start(12, "09:00:00", "Z"), `"Accommodations":[{"Type":"A","Type":"B"}]`), member: "Accommodations[0].Type"},
			{name: "start out of range", method: "POST", path: regPath(fresh, "register-lax"),
				body: e.registerBody(venueA, "9999-12-31T23:00:00-02:00", ""), member: "EventStart"},
			// The partner callback keeps its payload as text.
			{name: "NUL in the lesson status", method: "POST", path: "/api/integration/partner/callback/" + fresh + "/" + ada,
				body: `{"cmi.core.lesson_status":"completed\u0000"}`, member: "cmi.core.lesson_status"},
			{name: "invalid byte in the payload", method: "POST", path: "/api/integration/partner/callback/" + fresh + "/" + ada,
				body: "{\"x\":\"\xff\"}", member: "body"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rec := e.do(c.method, c.path, c.body)
				if rec.Code != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
				}
				var p struct{ Errors map[string][]string }
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
					t.Fatal(err)
				}
				if p.Errors[c.member] == nil {
					t.Fatalf("the problem %s does not name %s", rec.Body, c.member)
				}
			})
		}
		// A body that is no JSON object says what is wrong with it, as version 2 does.
		for body, detail := range map[string]string{
			`{"Name":"x"`: "The body is not valid JSON: it ends too early.",
			`[]`:          "The body must be a JSON object.",
			`{} {}`:       "The body is not valid JSON: more data after the JSON value at byte 3.",
			`{"Name":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 101): "The body is not valid JSON: objects and arrays nested more than 64 deep at byte 323.",
		} {
			rec := e.do("POST", "/api/registrations/search", body)
			var p struct{ Detail string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); rec.Code != http.StatusBadRequest || err != nil || p.Detail != detail {
				t.Errorf("body %.40q: %d %s, want 400 with Detail %q", body, rec.Code, rec.Body, detail)
			}
		}
		rec := e.doWith("POST", regPath(id, "cancel"), `{"Reason":"x"}`, http.Header{"X-Test-Organization": {orgA}, "Content-Type": {"text/plain"}})
		if rec.Code != http.StatusUnsupportedMediaType {
			t.Errorf("a text/plain body: %d, want 415: %s", rec.Code, rec.Body)
		}
		if n := e.count("Registration", "RegistrationIdentifier", fresh); n != 0 {
			t.Errorf("%d registrations %s after refused requests", n, fresh)
		}
		if n := e.count("CallbackEvent", "ActivityIdentifier", fresh); n != 0 {
			t.Errorf("%d callbacks stored after refused requests", n)
		}
		if got := e.ok("GET", regPath(id, ""), ""); got["RegistrationAttendanceStatus"] != "Registered" {
			t.Errorf("the registration changed after refused requests: %v", got)
		}
	})
}
