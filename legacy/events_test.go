package legacy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// nilUUID is the UUID of all zeros, a typed client's unset identifier.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// TestEvents covers add, list by date, cancel (no longer matched), classes and scrap paper.
func TestEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const (
			late  = "0190a6f0-0000-7000-8000-0000000004e1"
			early = "0190a6f0-0000-7000-8000-0000000004e2"
			class = "0190a6f0-0000-7000-8000-0000000004e3"
			gone  = "0190a6f0-0000-7000-8000-0000000004e4"
			upper = "0190a6f0-0000-7000-8000-0000000004e5"
		)
		day := testBase.AddDate(0, 0, 5).Format("2006-01-02")
		add := func(id, at string) map[string]any {
			return e.ok("POST", "/api/events/"+id, `{"EventVenue":"`+venueA+`","EventStart":"`+at+`","EventExamType":"Test","EventExamFormat":"Online","EventBillingCode":"`+billingA+`","RegistrationLimit":30}`)
		}
		// 23:30 at -06:00 is the next UTC day.
		lateEv := add(late, day+"T23:30:00-06:00")
		if got := e.ok("POST", "/api/events/"+strings.ToUpper(upper), `{"EventVenue":"`+strings.ToUpper(venueA2)+`","EventStart":"`+day+`T07:00:00Z","EventExamType":"Test","EventExamFormat":"Online","EventBillingCode":"`+billingA+`"}`); got["EventIdentifier"] != upper || got["EventVenue"] != venueA2 {
			t.Fatalf("ids are stored lower-case: %v", got)
		}
		add(early, day+"T05:00:00Z")
		for k, v := range map[string]any{"EventIdentifier": late, "EventType": "Exam", "EventExamType": "Test",
			"EventStart": day + "T23:30:00-06:00", "RegistrationLimit": 30.0, "RegistrationCount": 0.0, "EventCancelled": nil} {
			if lateEv[k] != v {
				t.Errorf("%s = %#v, want %#v", k, lateEv[k], v)
			}
		}
		e.insert("Event", map[string]any{"EventIdentifier": class, "OrganizationIdentifier": orgA, "EventType": "Class",
			"EventTitle": "Welding 101", "EventStart": mustDateTime(t, day+"T09:00:00Z")})
		e.insert("Event", map[string]any{"EventIdentifier": gone, "OrganizationIdentifier": orgA, "EventType": "Class",
			"EventTitle": "Cancelled class", "EventStart": mustDateTime(t, day+"T10:00:00Z"), "EventCancelled": mustDateTime(t, day+"T00:00:00Z")})

		ids := func(path string, as ...string) []string {
			var evs []map[string]any
			decodeJSON(t, e.do("GET", path, "", as...), &evs)
			var out []string
			for _, ev := range evs {
				out = append(out, ev["EventIdentifier"].(string))
			}
			return out
		}
		for _, c := range []struct {
			name, path string
			want       []string
		}{
			{name: "UTC day", path: "/api/events/list-events?date=" + day, want: []string{early, upper, class, gone}},
			{name: "day at an offset", path: "/api/events/list-events?date=" + day + "T12:00:00-06:00", want: []string{upper, class, gone, late}},
			{name: "another day", path: "/api/events/list-events?date=2031-01-01", want: nil},
		} {
			if got := ids(c.path); !equalStrings(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		if got := ids("/api/events/list-events?date="+day, orgB); len(got) != 0 {
			t.Errorf("orgB sees %v", got)
		}
		// The last day credo keeps: its end (10000-01-01) is no instant credo keeps, and as a
		// bound it compared below every stored start, so that the day listed nothing.
		const last = "0190a6f0-0000-7000-8000-0000000004e6"
		e.insert("Event", map[string]any{"EventIdentifier": last, "OrganizationIdentifier": orgA, "EventType": "Exam",
			"EventTitle": "The last exam", "EventStart": mustDateTime(t, "9999-12-31T23:59:59.9999999Z")})
		for _, date := range []string{"9999-12-31", "9999-12-31T12:00:00-01:00"} {
			if got := ids("/api/events/list-events?date=" + date); !equalStrings(got, []string{last}) {
				t.Errorf("the last day (%s): %v, want %v", date, got, []string{last})
			}
		}

		t.Run("classes are anonymous and leave out cancelled ones", func(t *testing.T) {
			e := e.with(t)
			rec := e.do("GET", "/api/events/classes?organization="+orgA, "", "-")
			var got []map[string]any
			decodeJSON(t, rec, &got)
			if len(got) != 1 || got[0]["EventIdentifier"] != class || got[0]["EventTitle"] != "Welding 101" || got[0]["EventBillingCode"] != nil {
				t.Fatalf("classes %v", got)
			}
		})

		t.Run("cancelled events are not matched", func(t *testing.T) {
			e := e.with(t)
			got := e.ok("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, day+"T05:00:30Z", ""))
			if got["Event"] != early || got["EventCreated"] != false {
				t.Fatalf("before cancel: %v", got)
			}
			c := e.ok("POST", "/api/events/"+early+"/cancel", `{"Reason":"Storm"}`)
			if c["EventCancelled"] == nil || c["EventCancelReason"] != "Storm" || c["RegistrationCount"] != 1.0 {
				t.Fatalf("cancel: %v", c)
			}
			if rec := e.do("POST", "/api/events/"+early+"/cancel", `{}`); rec.Code != 400 {
				t.Fatalf("second cancel: %d", rec.Code)
			}
			got = e.ok("POST", regPath(rid(2), "register-lax"), e.registerBody(venueA, day+"T05:00:30Z", ""))
			if got["Event"] == early || got["EventCreated"] != true {
				t.Fatalf("after cancel: %v", got)
			}
		})

		t.Run("scrap paper", func(t *testing.T) {
			e := e.with(t)
			for _, id := range []string{rid(1), late} {
				rec := e.do("GET", "/api/events/scrap-paper?id="+id, "", "-")
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/pdf" {
					t.Fatalf("%s: %d %s", id, rec.Code, rec.Header().Get("Content-Type"))
				}
				body := rec.Body.Bytes()
				if !bytes.HasPrefix(body, []byte("%PDF-")) || !bytes.Contains(body[len(body)-16:], []byte("%%EOF")) {
					t.Fatalf("%s: not a PDF: %q", id, body[:16])
				}
				if n := bytes.Count(body, []byte("/Type /Page\n")); n != ScrapPaperPages {
					t.Errorf("%s: %d pages, want %d", id, n, ScrapPaperPages)
				}
			}
		})
	})
}

func mustDateTime(t *testing.T, s string) any {
	d, err := parseDateTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAddEventRefusesTheNilUUID: an event added under the nil UUID (a typed client's unset
// Guid) is a 400 naming EventIdentifier and writes nothing. Stored, it was an event that no
// registration could join: register-lax at its venue and start found it and then refused
// "EventIdentifier is required and cannot be the nil UUID", a member the client never sent,
// for every registration of that slot, until an operator removed the event.
func TestAddEventRefusesTheNilUUID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		at := start(6, "09:00:00", "Z")
		rec := e.do("POST", "/api/events/"+nilUUID, `{"EventVenue":"`+venueA+`","EventStart":"`+at+`","EventExamType":"Test","EventExamFormat":"Online","EventBillingCode":"`+billingA+`"}`)
		if status, detail := problemOf(t, rec); status != http.StatusBadRequest || !strings.Contains(detail, "EventIdentifier") {
			t.Fatalf("add event under the nil UUID: %d %q, want 400 naming EventIdentifier", status, detail)
		}
		var p struct{ Errors map[string][]string }
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || len(p.Errors["EventIdentifier"]) != 1 {
			t.Errorf("Errors %v (%v), want EventIdentifier named", p.Errors, err)
		}
		if n := e.count("Event", "EventIdentifier", nilUUID); n != 0 {
			t.Fatalf("the refused event was stored (%d rows)", n)
		}
		if got := e.ok("POST", regPath(rid(1), "register-lax"), e.registerBody(venueA, at, "")); got["EventCreated"] != true || got["Event"] == nilUUID {
			t.Errorf("register-lax at the slot: %v, want an event of its own", got)
		}
	})
}
