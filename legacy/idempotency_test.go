package legacy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"credo/handlers/idempotency"
)

// doKey sends a command as orgA's staff with an Idempotency-Key.
func (e *env) doKey(path, body, key string) *httptest.ResponseRecorder {
	e.t.Helper()
	h := http.Header{}
	h.Set("X-Test-Organization", orgA)
	h.Set("X-Test-User", staff)
	h.Set("Content-Type", "application/json")
	h.Set(idempotency.KeyHeader, key)
	return e.doWith(http.MethodPost, path, body, h)
}

// retried sends a command twice with one key and checks that the second answer is the first,
// replayed; it returns the first answer's members.
func (e *env) retried(what, path, body, key string) map[string]any {
	e.t.Helper()
	first := e.doKey(path, body, key)
	again := e.doKey(path, body, key)
	if first.Code != http.StatusOK || first.Header().Get(idempotency.ReplayedHeader) != "" {
		e.t.Fatalf("%s: %d %v %s", what, first.Code, first.Header(), first.Body)
	}
	if again.Code != first.Code || again.Body.String() != first.Body.String() || again.Header().Get(idempotency.ReplayedHeader) != "true" ||
		again.Header().Get("Content-Type") != first.Header().Get("Content-Type") {
		e.t.Fatalf("%s retried: %d %v %s; first %s", what, again.Code, again.Header(), again.Body, first.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(first.Body.Bytes(), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestIdempotentCommands: each registration command retried with its Idempotency-Key gets its
// first answer again and is done once: register-lax stores one registration, transfer-lax to an
// Individual event (which makes a new event each time it runs) makes one event, and the
// commands that stamp the registration's last change leave the first stamp. The key with
// another body is a 422, unless its first answer was a refusal (4xx), which is not kept.
func TestIdempotentCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(40)
		// A refused command changed nothing and keeps nothing: its key serves the mended body.
		if rec := e.doKey(regPath(id, "register-lax"), `{"EventStart":"not a time"}`, "reg"); rec.Code != http.StatusBadRequest {
			t.Fatalf("register-lax with a bad body: %d %s", rec.Code, rec.Body)
		}
		e.retried("register-lax", regPath(id, "register-lax"), e.registerBody(venueA, start(12, "09:00:00", "Z"), ""), "reg")
		if n := e.count("Registration", "RegistrationIdentifier", id); n != 1 {
			t.Fatalf("%d registrations, want 1", n)
		}

		events := e.count("Event", "OrganizationIdentifier", orgA)
		moved := e.retried("transfer-lax", regPath(id, "transfer-lax"), `{"EventVenue":"`+venueA+`","EventStart":"`+start(12, "09:00:45", "Z")+
			`","EventExamType":"Individual","Learner":"`+ada+`"}`, "move")
		if moved["EventCreated"] != true {
			t.Fatalf("transfer-lax: %v", moved)
		}
		if n := e.count("Event", "OrganizationIdentifier", orgA); n != events+1 {
			t.Fatalf("%d events after a transfer to a new Individual event and its retry, want %d", n, events+1)
		}

		for _, c := range []struct{ command, body string }{
			{"change-assessment", `{"Assessment":"SCI"}`},
			{"grant-accommodation", `{"Type":"Reader","TimeExtension":5}`},
			{"revoke-accommodation", `{"Type":"Reader"}`},
			{"cancel", `{"Reason":"Ill"}`},
		} {
			t.Run(c.command, func(t *testing.T) {
				e := e.with(t)
				got := e.retried(c.command, regPath(id, c.command), c.body, c.command)
				if now := e.ok("GET", regPath(id, ""), ""); now["LastChangeTime"] != got["LastChangeTime"] {
					t.Fatalf("the retry ran the command again: last change %v, the first answer's %v", now["LastChangeTime"], got["LastChangeTime"])
				}
				rec := e.doKey(regPath(id, c.command), `{}`, c.command)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("the key with another body: %d %s", rec.Code, rec.Body)
				}
			})
		}
		// The key belongs to its caller: another organization's "reg" is its own key (and
		// here a 404: the registration is orgA's).
		h := http.Header{"X-Test-Organization": {orgB}, "X-Test-User": {staff}, "Content-Type": {"application/json"}, idempotency.KeyHeader: {"cancel"}}
		if rec := e.doWith(http.MethodPost, regPath(id, "cancel"), `{"Reason":"Ill"}`, h); rec.Code != http.StatusNotFound || rec.Header().Get(idempotency.ReplayedHeader) != "" {
			t.Fatalf("another organization's key: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
	})
}

// TestCrashAfterCommand: a command whose process stopped after its work committed and before
// its answer was kept (idempotency.Config.Stop) is never done again. Its work's transaction
// marked the key done: a retry within the lease is a 409 with Retry-After, as for a command
// being answered; after the lease, the retry is a 409 without Retry-After saying that the
// command was done and its answer lost, and nothing is done again: one registration, and the
// cancellation's change stamp stays the first's.
func TestCrashAfterCommand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(41)
		for _, c := range []struct{ command, body, key string }{
			{"register-lax", e.registerBody(venueA, start(12, "10:00:00", "Z"), ""), "crash-reg"},
			{"cancel", `{"Reason":"Ill"}`, "crash-cancel"},
		} {
			e.stop.Store(true)
			if rec := e.doKey(regPath(id, c.command), c.body, c.key); rec.Code != http.StatusInternalServerError {
				t.Fatalf("%s, stopped: %d %s", c.command, rec.Code, rec.Body)
			}
			e.stop.Store(false)
			stamp := e.ok("GET", regPath(id, ""), "")["LastChangeTime"]
			if rec := e.doKey(regPath(id, c.command), c.body, c.key); rec.Code != http.StatusConflict ||
				rec.Header().Get("Retry-After") != idempotency.InFlightRetryAfter {
				t.Fatalf("%s retried within the lease: %d %v %s", c.command, rec.Code, rec.Header(), rec.Body)
			}
			e.ticks.Add(int64(idempotency.Lease / time.Second))
			rec := e.doKey(regPath(id, c.command), c.body, c.key)
			if status, detail := problemOf(t, rec); status != http.StatusConflict || rec.Code != http.StatusConflict ||
				rec.Header().Get("Retry-After") != "" || !strings.Contains(detail, "was done") {
				t.Fatalf("%s retried after the lease: %d %v %s", c.command, rec.Code, rec.Header(), rec.Body)
			}
			if n := e.count("Registration", "RegistrationIdentifier", id); n != 1 {
				t.Fatalf("%s: %d registrations, want 1", c.command, n)
			}
			if now := e.ok("GET", regPath(id, ""), "")["LastChangeTime"]; now != stamp {
				t.Fatalf("%s: the retry did the command again: last change %v, then %v", c.command, stamp, now)
			}
		}
		if got := e.ok("GET", regPath(id, ""), "")["RegistrationAttendanceStatus"]; got != "Cancelled" {
			t.Fatalf("RegistrationAttendanceStatus %v, want Cancelled", got)
		}
	})
}

// TestRefusedCommandKeepsNoKey: each command refused inside its work's transaction (after the
// registration's lock and load: an unknown form, learner or registration, a blank Type) marks
// nothing, so that no transaction before the work marked the key done: the mended request
// sent with the same key is done (200), not told that the key was done (409) or used with
// another request (422).
func TestRefusedCommandKeepsNoKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		id := rid(42)
		unknown := "0190a6f0-0000-7000-8000-0000000000ee"
		for _, c := range []struct{ command, path, refused, mended string }{
			{"register-lax", regPath(id, "register-lax"),
				e.registerBody(venueA, start(12, "11:00:00", "Z"), ""), e.registerBody(venueA, start(12, "11:00:00", "Z"), "")},
			{"transfer-lax", regPath(id, "transfer-lax"),
				`{"EventVenue":"` + venueA + `","EventStart":"` + start(12, "11:00:45", "Z") + `","EventExamType":"Individual","Learner":"` + unknown + `"}`,
				`{"EventVenue":"` + venueA + `","EventStart":"` + start(12, "11:00:45", "Z") + `","EventExamType":"Individual","Learner":"` + ada + `"}`},
			{"change-assessment", regPath(id, "change-assessment"), `{"Assessment":"NOPE"}`, `{"Assessment":"SCI"}`},
			{"grant-accommodation", regPath(id, "grant-accommodation"), `{"Type":" ","TimeExtension":5}`, `{"Type":"Reader","TimeExtension":5}`},
			{"revoke-accommodation", regPath(id, "revoke-accommodation"), `{"Type":" "}`, `{"Type":"Reader"}`},
			{"cancel", regPath(unknown, "cancel"), `{"Reason":"Ill"}`, ""},
		} {
			refused := c.refused
			if c.command == "register-lax" {
				refused = strings.Replace(refused, `"Assessment":"MATH"`, `"Assessment":"NOPE"`, 1)
			}
			rec := e.doKey(c.path, refused, "refused-"+c.command)
			if rec.Code < 400 || rec.Code >= 500 || rec.Code == http.StatusConflict && rec.Header().Get("Retry-After") != "" {
				t.Fatalf("%s refused: %d %v %s", c.command, rec.Code, rec.Header(), rec.Body)
			}
			path, mended := c.path, c.mended
			if c.command == "cancel" {
				path, mended = regPath(id, "cancel"), c.refused
			}
			if rec := e.doKey(path, mended, "refused-"+c.command); rec.Code != http.StatusOK || rec.Header().Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("%s mended with the refused request's key: %d %v %s", c.command, rec.Code, rec.Header(), rec.Body)
			}
		}
	})
}
