package legacy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestTransferLax: a transfer keeps the form, creates or reuses the target event, grants the
// given accommodations and recomputes the time limit.
func TestTransferLax(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(1)
		from := e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), ""))
		moved := e.ok("POST", regPath(id, "transfer-lax"), `{"EventVenue":"`+venueA3+`","EventStart":"`+start(13, "11:00:00", "-05:00")+
			`","EventExamType":"Test","Learner":"`+ada+`","Reason":"Venue closed","Accommodations":[{"Type":"Extra time","TimeExtension":20}]}`)
		if moved["EventCreated"] != true || moved["Event"] == from["Event"] || moved["Registration"] != id {
			t.Fatalf("transfer: %v (from %v)", moved, from)
		}
		got := e.ok("GET", regPath(id, ""), "")
		for k, v := range map[string]any{
			"EventIdentifier": moved["Event"], "EventVenue": venueA3, "EventExamType": "Test",
			"EventFormat": "Paper", "EventStart": start(13, "11:00:00", "-05:00"),
			"AssessmentFormIdentifier": formMath, "TimeLimit": 110.0, "LastChangeType": "Transferred",
		} {
			if got[k] != v {
				t.Errorf("%s = %#v, want %#v", k, got[k], v)
			}
		}
		back := e.ok("POST", regPath(id, "transfer-lax"), `{"EventVenue":"`+venueA+`","EventStart":"`+start(12, "09:00:45", "Z")+`","Learner":"`+ada+`"}`)
		if back["EventCreated"] != false || back["Event"] != from["Event"] {
			t.Fatalf("transfer back: %v, want event %v", back, from["Event"])
		}
		ind := e.ok("POST", regPath(id, "transfer-lax"), `{"EventVenue":"`+venueA+`","EventStart":"`+start(12, "09:00:45", "Z")+`","EventExamType":"Individual","Learner":"`+ada+`"}`)
		if ind["EventCreated"] != true {
			t.Fatalf("individual transfer: %v", ind)
		}
		if got := e.ok("GET", regPath(id, ""), ""); got["EventExamType"] != "Individual (A)" || got["AssessmentFormCode"] != "MATH" {
			t.Fatalf("individual transfer of an accommodated registration: %v, form %v", got["EventExamType"], got["AssessmentFormCode"])
		}
	})
}

// TestRegistrationCommands covers change-assessment, grant/revoke-accommodation with the time
// limit, cancel (which frees a seat), and delete.
func TestRegistrationCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(1)
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), `"Accommodations":[{"Type":"Reader","TimeExtension":5}]`))
		steps := []struct {
			name, command, body string
			timeLimit           any
			change              string
		}{
			{name: "change to a timed form", command: "change-assessment", body: `{"Assessment":"SCI"}`, timeLimit: 65.0, change: "Assessment Changed"},
			{name: "grant", command: "grant-accommodation", body: `{"Type":"Extra time","Name":"Half time","TimeExtension":30}`, timeLimit: 95.0, change: "Accommodation Granted"},
			{name: "grant again replaces", command: "grant-accommodation", body: `{"Type":"Extra time","TimeExtension":10}`, timeLimit: 75.0, change: "Accommodation Granted"},
			{name: "revoke", command: "revoke-accommodation", body: `{"Type":"Reader"}`, timeLimit: 70.0, change: "Accommodation Revoked"},
			{name: "revoke absent type is a no-op", command: "revoke-accommodation", body: `{"Type":"Reader"}`, timeLimit: 70.0, change: "Accommodation Revoked"},
			{name: "change to an untimed form", command: "change-assessment", body: `{"Assessment":"ENG"}`, timeLimit: nil, change: "Assessment Changed"},
			{name: "grant on an untimed form", command: "grant-accommodation", body: `{"Type":"Reader","TimeExtension":5}`, timeLimit: nil, change: "Accommodation Granted"},
			{name: "back to a timed form keeps the extensions", command: "change-assessment", body: `{"Assessment":"MATH"}`, timeLimit: 105.0, change: "Assessment Changed"},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				e := e.with(t)
				got := e.ok("POST", regPath(id, s.command), s.body)
				if got["TimeLimit"] != s.timeLimit || got["LastChangeType"] != s.change || got["RegistrationIdentifier"] != id {
					t.Fatalf("TimeLimit %v, LastChangeType %v; want %v, %v", got["TimeLimit"], got["LastChangeType"], s.timeLimit, s.change)
				}
			})
		}
		if got := e.ok("GET", regPath(id, ""), "")["Accommodations"].([]any); len(got) != 2 {
			t.Fatalf("accommodations: %v", got)
		}

		t.Run("cancel frees the seat of a full event", func(t *testing.T) {
			e := e.with(t)
			const event = "0190a6f0-0000-7000-8000-0000000003e1"
			at := start(20, "13:00:00", "Z")
			e.ok("POST", "/api/events/"+event, `{"EventVenue":"`+venueA2+`","EventStart":"`+at+`","EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"`+billingA+`","RegistrationLimit":1}`)
			e.ok("POST", regPath(rid(2), "register-lax"), e.registerBody(venueA2, at, ""))
			if rec := e.do("POST", regPath(rid(3), "register-lax"), e.registerBody(venueA2, at, "")); rec.Code != 400 {
				t.Fatalf("second registration on a full event: %d %s", rec.Code, rec.Body)
			}
			got := e.ok("POST", regPath(rid(2), "cancel"), `{"Reason":"Ill"}`)
			if got["RegistrationAttendanceStatus"] != "Cancelled" || got["LastChangeType"] != "Cancelled" {
				t.Fatalf("cancel: %v", got)
			}
			changed := got["LastChangeTime"]
			if again := e.ok("POST", regPath(rid(2), "cancel"), `{}`); again["LastChangeTime"] != changed {
				t.Fatalf("cancelling twice changed the registration: %v", again)
			}
			if got := e.ok("POST", regPath(rid(3), "register-lax"), e.registerBody(venueA2, at, "")); got["Event"] != event {
				t.Fatalf("after the cancel: %v", got)
			}
		})

		t.Run("delete", func(t *testing.T) {
			e := e.with(t)
			if got := e.ok("DELETE", regPath(id, ""), ""); got["Registration"] != id {
				t.Fatalf("delete: %v", got)
			}
			if rec := e.do("GET", regPath(id, ""), ""); rec.Code != 404 {
				t.Fatalf("get after delete: %d", rec.Code)
			}
			if n := e.count("Accommodation", "RegistrationIdentifier", id); n != 0 {
				t.Fatalf("%d accommodations left", n)
			}
		})
	})
}

// TestTimeLimitStaysA32BitInteger: TimeLimit, like every int of api.md, is a 32-bit integer
// (the column is one on PostgreSQL, and the document says int32). Extensions that would carry
// a registration's time limit past 2,147,483,647 minutes are a 400 naming TimeExtension — on
// register-lax with two large accommodations, and on grant-accommodation — and nothing
// changes; the largest limit that fits is kept.
func TestTimeLimitStaysA32BitInteger(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const maxInt32 = 2147483647
		tooMuch := `"Accommodations":[{"Type":"Reader","TimeExtension":` + fmt.Sprint(maxInt32) + `},{"Type":"Scribe","TimeExtension":1}]`
		rec := e.do("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), tooMuch))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"TimeExtension"`) {
			t.Fatalf("register-lax past the 32-bit limit: %d %s", rec.Code, rec.Body)
		}
		if rec := e.do("GET", regPath(rid(1), ""), ""); rec.Code != http.StatusNotFound {
			t.Fatalf("the refused registration was stored: %d %s", rec.Code, rec.Body)
		}
		id := rid(2)
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "10:00:00", "Z"), `"Accommodations":[{"Type":"Reader","TimeExtension":5}]`))
		before := e.ok("GET", regPath(id, ""), "")
		rec = e.do("POST", regPath(id, "grant-accommodation"), `{"Type":"Extra time","TimeExtension":`+fmt.Sprint(maxInt32)+`}`)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"TimeExtension"`) {
			t.Fatalf("grant past the 32-bit limit: %d %s", rec.Code, rec.Body)
		}
		if after := e.ok("GET", regPath(id, ""), ""); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused grant changed the registration:\n%v\n%v", before, after)
		}
		// MATH's limit is 90: the extension that makes the limit exactly 2,147,483,647 is kept.
		fits := maxInt32 - 90 - 5
		if got := e.ok("POST", regPath(id, "grant-accommodation"), `{"Type":"Extra time","TimeExtension":`+fmt.Sprint(fits)+`}`); got["TimeLimit"] != float64(maxInt32) {
			t.Fatalf("TimeLimit %v, want %d", got["TimeLimit"], maxInt32)
		}
	})
}
