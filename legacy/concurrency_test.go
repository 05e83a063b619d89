package legacy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentRegisterLax: 50 simultaneous register-lax calls for one new venue and start
// create exactly one event and 50 registrations on it, and 50 onto an event limited to 20 let
// exactly 20 in (SQLite serializes writers; PostgreSQL takes the venue-minute advisory locks).
func TestConcurrentRegisterLax(t *testing.T) {
	const n = 50
	forEachBackend(t, func(t *testing.T, e *env) {
		// One instant written in two offsets.
		starts := []string{start(15, "09:00:00", "Z"), start(15, "03:00:00", "-06:00")}
		type result struct {
			code int
			body placed
			raw  string
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := e.doWith("POST", regPath(rid(1000+i), "register-lax"), e.registerBody(venueA3, starts[i%2], ""), http.Header{
					"X-Test-Organization": {orgA}, "Content-Type": {"application/json"},
				})
				results[i] = result{code: rec.Code, raw: rec.Body.String()}
				_ = json.Unmarshal(rec.Body.Bytes(), &results[i].body)
			}()
		}
		wg.Wait()
		created := 0
		for i, r := range results {
			if r.code != http.StatusOK {
				t.Fatalf("call %d: %d %s", i, r.code, r.raw)
			}
			if r.body.EventCreated {
				created++
			}
			if r.body.Event != results[0].body.Event {
				t.Fatalf("call %d went to event %s, call 0 to %s", i, r.body.Event, results[0].body.Event)
			}
		}
		if created != 1 {
			t.Fatalf("%d calls created an event, want 1", created)
		}
		if got := e.count("Event", "EventVenue", venueA3); got != 1 {
			t.Fatalf("%d events at the venue, want 1", got)
		}
		if got := e.count("Registration", "EventIdentifier", results[0].body.Event); got != n {
			t.Fatalf("%d registrations on the event, want %d", got, n)
		}

		// Onto an existing event with a limit, from starts in two different minutes: exactly
		// the limit gets in.
		const event, limit = "0190a6f0-0000-7000-8000-0000000006e1", 20
		e.ok("POST", "/api/events/"+event, `{"EventVenue":"`+venueA2+`","EventStart":"`+start(16, "09:00:30", "Z")+
			`","EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"`+billingA+`","RegistrationLimit":20}`)
		codes := make([]int, n)
		details := make([]string, n)
		var wg2 sync.WaitGroup
		for i := range n {
			wg2.Add(1)
			go func() {
				defer wg2.Done()
				at := start(16, "09:00:45", "Z")
				if i%2 == 1 {
					at = start(16, "03:01:15", "-06:00")
				}
				rec := e.doWith("POST", regPath(rid(2000+i), "register-lax"), e.registerBody(venueA2, at, ""), http.Header{
					"X-Test-Organization": {orgA}, "Content-Type": {"application/json"},
				})
				codes[i] = rec.Code
				var p struct{ Detail string }
				_ = json.Unmarshal(rec.Body.Bytes(), &p)
				details[i] = p.Detail
			}()
		}
		wg2.Wait()
		okCount := 0
		for i, c := range codes {
			switch {
			case c == http.StatusOK:
				okCount++
			case c != http.StatusBadRequest || details[i] != msgEventFull:
				t.Fatalf("call %d: %d %s", i, c, details[i])
			}
		}
		if okCount != limit {
			t.Fatalf("%d registrations accepted onto an event limited to %d", okCount, limit)
		}
		if got := e.count("Registration", "EventIdentifier", event); got != limit {
			t.Fatalf("%d registrations on the event, want %d", got, limit)
		}
	})
}

// TestConcurrentRegistrationCommands: 30 grant-accommodation calls of different Types and 10
// change-assessment calls on one registration, all at once, keep every accommodation, and the
// time limit that the last change wrote is the final form's limit plus every extension. Each
// command reads the registration, its accommodations and its form and then writes: without the
// registration's lock (PostgreSQL) or BEGIN IMMEDIATE (SQLite) they would compute the limit from
// what another command had not yet committed.
func TestConcurrentRegistrationCommands(t *testing.T) {
	const grants, changes = 30, 10
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(3000)
		e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), ""))
		header := http.Header{"X-Test-Organization": {orgA}, "Content-Type": {"application/json"}}
		codes := make([]int, grants+changes)
		bodies := make([]string, grants+changes)
		var wg sync.WaitGroup
		for i := range grants + changes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				command, body := "grant-accommodation", fmt.Sprintf(`{"Type":"T%02d","TimeExtension":%d}`, i, i+1)
				if i >= grants {
					command, body = "change-assessment", []string{`{"Assessment":"SCI"}`, `{"Assessment":"MATH"}`}[i%2]
				}
				rec := e.doWith("POST", regPath(id, command), body, header)
				codes[i], bodies[i] = rec.Code, rec.Body.String()
			}()
		}
		wg.Wait()
		for i, c := range codes {
			// Changing to the form already assigned is refused (api.md); nothing else may fail.
			if c != http.StatusOK && !(i >= grants && c == http.StatusBadRequest && strings.Contains(bodies[i], msgFormAssigned)) {
				t.Fatalf("call %d: %d %s", i, c, bodies[i])
			}
		}
		got := e.ok("GET", regPath(id, ""), "")
		accs, _ := got["Accommodations"].([]any)
		if len(accs) != grants {
			t.Fatalf("%d accommodations after %d concurrent grants of different types", len(accs), grants)
		}
		formLimit := map[any]float64{"MATH": 90, "SCI": 60}[got["AssessmentFormCode"]]
		want := formLimit + float64(grants*(grants+1)/2)
		if got["TimeLimit"] != want {
			t.Fatalf("TimeLimit %v with form %v, want %v", got["TimeLimit"], got["AssessmentFormCode"], want)
		}
	})
}
