package legacy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func rid(n int) string { return fmt.Sprintf("0190a6f0-0000-7000-8000-%012x", 0x200000+n) }

// TestRegisterLax covers the event-reuse rule, Individual events, the form and time limit, and
// the registration's read shape.
func TestRegisterLax(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		first := e.ok("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, start(10, "09:00:00", "-06:00"), ""))
		if first["EventCreated"] != true || first["Registration"] != rid(1) {
			t.Fatalf("first: %v", first)
		}
		ev := first["Event"]
		for i, c := range []struct {
			name    string
			venue   string
			start   string
			created bool
		}{
			{name: "same instant, other offset", venue: venueA, start: start(10, "15:00:00", "Z"), created: false},
			{name: "same instant, third offset", venue: venueA, start: start(10, "16:30:00", "+01:30"), created: false},
			{name: "upper-case venue id", venue: strings.ToUpper(venueA), start: start(10, "15:00:00", "Z"), created: false},
			{name: "59 s later", venue: venueA, start: start(10, "15:00:59.9999999", "+00:00"), created: false},
			{name: "61 s later", venue: venueA, start: start(10, "15:01:01", "Z"), created: true},
			{name: "a second earlier", venue: venueA, start: start(10, "14:59:59", "Z"), created: true},
			{name: "same instant, other venue", venue: venueA2, start: start(10, "15:00:00", "Z"), created: true},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := e.with(t)
				id := rid(100 + i)
				got := e.ok("POST", regPath(id, "register-lax"), e.registerBody(c.venue, c.start, ""))
				if got["EventCreated"] != c.created || (got["Event"] == ev) == c.created {
					t.Fatalf("got %v; want created %v (first event %v)", got, c.created, ev)
				}
			})
		}

		t.Run("read shape", func(t *testing.T) {
			e := e.with(t)
			id := rid(2)
			e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(10, "15:00:00", "Z"),
				`"LearnerRegistrantType":"Candidate","Accommodations":[{"Type":"Reader","Name":"Human reader"},{"Type":"Extra time","TimeExtension":15},{"Type":"Reader","Name":"Screen reader","TimeExtension":5}]`))
			rec := e.do("GET", regPath(id, ""), "")
			keys := jsonKeys(t, rec.Body.Bytes())
			want := []string{"RegistrationIdentifier", "RegistrationAttendanceStatus", "LastChangeTime", "LastChangeType",
				"EventIdentifier", "EventNumber", "EventFormat", "EventStart", "EventVenue", "EventExamType",
				"LearnerIdentifier", "LearnerCode", "LearnerName", "LearnerEmail", "AssessmentFormIdentifier",
				"AssessmentFormCode", "AssessmentFormName", "AssessmentFormTitle", "Accommodations", "TimeLimit"}
			if fmt.Sprint(keys) != fmt.Sprint(want) {
				t.Fatalf("members %v\nwant    %v", keys, want)
			}
			got := e.ok("GET", regPath(id, ""), "")
			for k, v := range map[string]any{
				"RegistrationAttendanceStatus": "Registered", "LastChangeType": "Registered",
				"EventIdentifier": ev, "EventNumber": 1.0, "EventFormat": "Paper", "EventExamType": "Sitting",
				"EventStart": start(10, "09:00:00", "-06:00"), "EventVenue": venueA,
				"LearnerIdentifier": ada, "LearnerCode": "AL-1", "LearnerName": "Ada Lovelace", "LearnerEmail": "ada@example.org",
				"AssessmentFormIdentifier": formMath, "AssessmentFormCode": "MATH", "AssessmentFormTitle": "Mathematics",
				"AssessmentFormName": "MATH form",
				// 90 minutes, +15 for extra time, +5 for the reader (the later Reader element wins).
				"TimeLimit": 110.0,
			} {
				if got[k] != v {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
			accs, _ := json.Marshal(got["Accommodations"])
			if string(accs) != `[{"Name":null,"TimeExtension":15,"Type":"Extra time"},{"Name":"Screen reader","TimeExtension":5,"Type":"Reader"}]` {
				t.Errorf("Accommodations %s", accs)
			}
		})

		t.Run("individual events", func(t *testing.T) {
			e := e.with(t)
			at := start(11, "10:00:00", "Z")
			body := func(extra string) string {
				return `{"EventVenue":"` + venueA + `","EventStart":"` + at + `","EventExamType":"Individual","EventExamFormat":"Online","EventBillingCode":"` +
					billingA + `","Learner":"` + ada + `","Assessment":"ENG"` + extra + `}`
			}
			withAcc := e.ok("POST", regPath(rid(10), "register-lax"), body(`,"Accommodations":[{"Type":"Braille"}]`))
			without := e.ok("POST", regPath(rid(11), "register-lax"), body(""))
			again := e.ok("POST", regPath(rid(12), "register-lax"), body(""))
			if withAcc["EventCreated"] != true || without["EventCreated"] != true || again["EventCreated"] != true ||
				withAcc["Event"] == without["Event"] || without["Event"] == again["Event"] {
				t.Fatalf("individual registrations must each create an event: %v %v %v", withAcc, without, again)
			}
			if got := e.ok("GET", regPath(rid(10), ""), ""); got["EventExamType"] != "Individual (A)" || got["TimeLimit"] != nil {
				t.Fatalf("accommodated: %v %v", got["EventExamType"], got["TimeLimit"])
			}
			if got := e.ok("GET", regPath(rid(11), ""), ""); got["EventExamType"] != "Individual (N)" {
				t.Fatalf("not accommodated: %v", got["EventExamType"])
			}
			// An individual event is its learner's: a sitting at the same place and time gets its own.
			if got := e.ok("POST", regPath(rid(13), "register-lax"), e.registerBody(venueA, at, "")); got["EventCreated"] != true {
				t.Fatalf("a sitting matched an individual event: %v", got)
			}
		})

		t.Run("event numbers count up per organization", func(t *testing.T) {
			e := e.with(t)
			a := e.ok("GET", regPath(rid(10), ""), "")["EventNumber"].(float64)
			b := e.ok("GET", regPath(rid(11), ""), "")["EventNumber"].(float64)
			if b != a+1 {
				t.Fatalf("numbers %v then %v", a, b)
			}
		})
	})
}

// jsonKeys returns the member names of a JSON object in document order.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", data)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestRegisterLaxRefusesTheNilUUID: a registration under the nil UUID (a typed client's unset
// Guid) is a 400 "Invalid RegistrationIdentifier value." naming RegistrationIdentifier, with
// the body's other problems, and writes nothing: no registration, no event.
func TestRegisterLaxRefusesTheNilUUID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		at := start(6, "09:00:00", "Z")
		for _, tc := range []struct {
			name, body string
			members    []string
		}{
			{name: "a good body", body: e.registerBody(venueA, at, ""), members: []string{"RegistrationIdentifier"}},
			{name: "a bad EventStart too", body: e.registerBody(venueA, "2001-01-01T00:00:00Z", ""), members: []string{"RegistrationIdentifier", "EventStart"}},
		} {
			rec := e.do("POST", regPath(nilUUID, "register-lax"), tc.body)
			if status, detail := problemOf(t, rec); status != http.StatusBadRequest || !strings.Contains(detail, "Invalid RegistrationIdentifier value.") {
				t.Fatalf("%s: register-lax under the nil UUID: %d %q, want 400 Invalid RegistrationIdentifier value.", tc.name, status, detail)
			}
			var p struct{ Errors map[string][]string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.members {
				if len(p.Errors[m]) != 1 {
					t.Errorf("%s: Errors %v, want %s named", tc.name, p.Errors, m)
				}
			}
		}
		if n := e.count("Registration", "RegistrationIdentifier", nilUUID); n != 0 {
			t.Fatalf("the refused registration was stored (%d rows)", n)
		}
		if n := e.count("Event", "EventVenue", venueA); n != 0 {
			t.Errorf("a refused registration created %d event(s)", n)
		}
	})
}
