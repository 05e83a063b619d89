package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"credo/engine"
	"credo/internal/groupsuite"
	"credo/internal/testenv"
)

// etagOf asserts that an answer carries a strong, quoted ETag and returns it.
func etagOf(t *testing.T, what string, r response) string {
	t.Helper()
	return groupsuite.ETagOf(t, what, r.suite())
}

// expectPrecondition asserts a 412 problem document.
func expectPrecondition(t *testing.T, what string, r response) {
	t.Helper()
	r.expect(t, what, http.StatusPreconditionFailed)
	var p struct{ Status int }
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" || json.Unmarshal(r.body, &p) != nil || p.Status != 412 {
		t.Errorf("%s: %s %s, want a 412 problem document", what, ct, r.body)
	}
}

// TestConditionalRequests (both stores): get, HEAD, create, PUT and PATCH carry the record's
// ETag, the one a later get answers; If-None-Match naming it (or "*", or it among others, or
// weakly) is a 304 with the ETag and no body, another tag a 200; a stale If-Match refuses PUT,
// PATCH and DELETE with a 412 problem and leaves the record as it was; a matching one writes; a
// malformed header is a 400 naming it; a missing record is a 404 whatever If-Match says.
func TestConditionalRequests(t *testing.T) {
	reg := registry(t)
	fields := reg.MustByName("PersonField")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			got := put(t, ts, fields, map[string]any{"UserIdentifier": uuid.NewString(), "OrganizationIdentifier": uuid.NewString(),
				"FieldName": "Shoe size", "FieldValue": "42", "FieldSequence": 0})
			item := itemPath(fields, got)
			missing := "directory/people-fields/" + uuid.NewString()

			res := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)
			first, body := etagOf(t, "get", res), string(res.body)
			stored, err := ts.store.Get(t.Context(), fields, []any{got["FieldIdentifier"]}, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			if first != fields.ETag(stored) {
				t.Errorf("get's ETag %s, the engine's %s", first, fields.ETag(stored))
			}
			if tag := etagOf(t, "HEAD", ts.do(t, "HEAD", item, "").expect(t, "HEAD", http.StatusOK)); tag != first {
				t.Errorf("HEAD's ETag %s, get's %s", tag, first)
			}
			if tag := etagOf(t, "get Includes", ts.do(t, "GET", item+"?Includes=FieldValue", "").expect(t, "get Includes", http.StatusOK)); tag != first {
				t.Errorf("a projected get's ETag %s, the full record's %s", tag, first)
			}

			for _, inm := range []string{first, "W/" + first, `"other", ` + first, "*"} {
				for _, method := range []string{"GET", "HEAD"} {
					res := ts.do(t, method, item, "", "If-None-Match", inm).expect(t, method+" If-None-Match "+inm, http.StatusNotModified)
					if len(res.body) != 0 || res.header.Get("ETag") != first {
						t.Errorf("%s If-None-Match %s: ETag %q, body %q; want %s and none", method, inm, res.header.Get("ETag"), res.body, first)
					}
				}
			}
			res = ts.do(t, "GET", item, "", "If-None-Match", `"other"`).expect(t, "get If-None-Match other", http.StatusOK)
			if string(res.body) != body || res.header.Get("ETag") != first {
				t.Errorf("get with a non-matching If-None-Match: %s %s", res.header.Get("ETag"), res.body)
			}
			ts.do(t, "HEAD", item, "", "If-None-Match", `"other"`).expect(t, "HEAD If-None-Match other", http.StatusOK)
			ts.do(t, "GET", item, "", "If-None-Match", "other").expect(t, "get If-None-Match malformed", http.StatusBadRequest).
				problemNames(t, "If-None-Match malformed", "If-None-Match")
			ts.do(t, "GET", missing, "", "If-None-Match", "*").expect(t, "get missing If-None-Match *", http.StatusNotFound)

			res = ts.do(t, "PATCH", item, `{"FieldSequence":1}`, "If-Match", first).expect(t, "patch If-Match current", http.StatusOK)
			second := etagOf(t, "patch", res)
			res = ts.do(t, "GET", item, "").expect(t, "get after patch", http.StatusOK)
			if second == first || etagOf(t, "get after patch", res) != second {
				t.Errorf("patch's ETag %s, get's then %s, before %s", second, res.header.Get("ETag"), first)
			}
			body = string(res.body)

			unchanged := func(what string) {
				t.Helper()
				res := ts.do(t, "GET", item, "").expect(t, "get after "+what, http.StatusOK)
				if string(res.body) != body || res.header.Get("ETag") != second {
					t.Errorf("%s changed the record: %s %s, want %s %s", what, res.header.Get("ETag"), res.body, second, body)
				}
			}
			writes := []struct{ method, body string }{
				{"PUT", `{"FieldValue":"stale"}`}, {"PATCH", `{"FieldSequence":99}`}, {"DELETE", ""},
			}
			for _, w := range writes {
				for _, im := range []string{first, `"other", ` + first, "W/" + second} {
					expectPrecondition(t, w.method+" If-Match "+im, ts.do(t, w.method, item, w.body, "If-Match", im))
					unchanged(w.method + " with a stale If-Match")
				}
				for _, bad := range []string{second[1:], "", `*, ` + second} {
					ts.do(t, w.method, item, w.body, "If-Match", bad).expect(t, w.method+" If-Match malformed", http.StatusBadRequest).
						problemNames(t, w.method+" If-Match "+bad, "If-Match")
					unchanged(w.method + " with a malformed If-Match")
				}
				for _, im := range []string{"*", second} {
					ts.do(t, w.method, missing, w.body, "If-Match", im).expect(t, w.method+" missing If-Match "+im, http.StatusNotFound)
				}
			}
			// Preconditions come before the content (RFC 9110 §13.2.2): with an invalid body, a
			// stale If-Match is a 412, a matching one the 400, a missing record the 404.
			for _, method := range []string{"PUT", "PATCH"} {
				const invalid = `{"FieldSequence":"not a number"}`
				expectPrecondition(t, method+" stale If-Match, invalid body", ts.do(t, method, item, invalid, "If-Match", first))
				unchanged(method + " with a stale If-Match and an invalid body")
				for _, im := range []string{second, "*"} {
					ts.do(t, method, item, invalid, "If-Match", im).expect(t, method+" If-Match "+im+", invalid body", http.StatusBadRequest).
						problemNames(t, method+" invalid body", "FieldSequence")
				}
				ts.do(t, method, missing, invalid, "If-Match", first).expect(t, method+" missing, invalid body", http.StatusNotFound)
			}

			res = ts.do(t, "PUT", item, `{"FieldValue":"43"}`, "If-Match", `"other", `+second).expect(t, "PUT If-Match current", http.StatusOK)
			third := etagOf(t, "PUT", res)
			res = ts.do(t, "PUT", item, `{"FieldValue":"44"}`).expect(t, "unconditional PUT", http.StatusOK)
			fourth := etagOf(t, "unconditional PUT", res)
			res = ts.do(t, "PATCH", item, `{"FieldValue":"45"}`, "If-Match", "*").expect(t, "PATCH If-Match *", http.StatusOK)
			fifth := etagOf(t, "PATCH If-Match *", res)
			if third == second || fourth == third || fifth == fourth ||
				etagOf(t, "get", ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)) != fifth {
				t.Errorf("ETags along the writes: %s %s %s %s", second, third, fourth, fifth)
			}
			expectPrecondition(t, "DELETE If-Match stale", ts.do(t, "DELETE", item, "", "If-Match", fourth))
			ts.do(t, "DELETE", item, "", "If-Match", fifth).expect(t, "DELETE If-Match current", http.StatusOK)
			ts.do(t, "GET", item, "").expect(t, "get after delete", http.StatusNotFound)
		})
	}
}

// TestCreateETag (both stores): a create answers the ETag that a get of the new record then
// answers, and a replayed create (Idempotency-Key) the same one.
func TestCreateETag(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			body := fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"etag"}`,
				uuid.NewString(), uuid.NewString(), uuid.NewString())
			key := uuid.NewString()
			res := ts.do(t, "POST", "security/users-comments", body, "Idempotency-Key", key).expect(t, "create", http.StatusCreated)
			tag := etagOf(t, "create", res)
			loc := strings.TrimPrefix(res.header.Get("Location"), "/v2/"+ts.partition+"/")
			if got := etagOf(t, "get", ts.do(t, "GET", loc, "").expect(t, "get", http.StatusOK)); got != tag {
				t.Errorf("create's ETag %s, get's %s", tag, got)
			}
			res = ts.do(t, "POST", "security/users-comments", body, "Idempotency-Key", key).expect(t, "replayed create", http.StatusCreated)
			if res.header.Get("Idempotent-Replayed") != "true" || res.header.Get("ETag") != tag {
				t.Errorf("replayed create: Idempotent-Replayed %q, ETag %q; want true and %s",
					res.header.Get("Idempotent-Replayed"), res.header.Get("ETag"), tag)
			}
		})
	}
}

// TestConcurrentConditionalPatchesOverHTTP (both stores): 50 clients PATCH one record's counter
// at once over real HTTP, each with If-Match carrying the ETag it read. First all with the one
// ETag read before: exactly one succeeds and 49 get 412. Then each adds its own amount, reading
// again after a 412 and retrying: every client succeeds once, no two successes wrote over the
// same version (each success's If-Match is distinct), and the final counter is the start plus
// the sum of the successful increments: no update is lost.
func TestConcurrentConditionalPatchesOverHTTP(t *testing.T) {
	const clients = 50
	reg := registry(t)
	fields := reg.MustByName("PersonField")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			got := put(t, ts, fields, map[string]any{"UserIdentifier": uuid.NewString(), "OrganizationIdentifier": uuid.NewString(),
				"FieldName": "counter", "FieldSequence": 0})
			url := ts.URL + "/v2/" + ts.partition + "/" + itemPath(fields, got)
			send := func(method, body, ifMatch string) (int, http.Header, []byte, error) {
				req, err := http.NewRequest(method, url, strings.NewReader(body))
				if err != nil {
					return 0, nil, nil, err
				}
				if body != "" {
					req.Header.Set("Content-Type", "application/merge-patch+json")
				}
				if ifMatch != "" {
					req.Header.Set("If-Match", ifMatch)
				}
				res, err := ts.Client().Do(req)
				if err != nil {
					return 0, nil, nil, err
				}
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				return res.StatusCode, res.Header, b, err
			}
			read := func() (int, string, error) {
				status, h, b, err := send("GET", "", "")
				if err != nil || status != http.StatusOK {
					return 0, "", fmt.Errorf("get: %d %s %v", status, b, err)
				}
				var rec struct{ FieldSequence int }
				if err := json.Unmarshal(b, &rec); err != nil {
					return 0, "", err
				}
				return rec.FieldSequence, h.Get("ETag"), nil
			}
			patch := func(value int, tag string) (int, string, error) {
				status, h, b, err := send("PATCH", fmt.Sprintf(`{"FieldSequence":%d}`, value), tag)
				if err == nil && status != http.StatusOK && status != http.StatusPreconditionFailed {
					err = fmt.Errorf("patch: %d %s", status, b)
				}
				return status, h.Get("ETag"), err
			}

			start, tag, err := read()
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			won, refused, sum := 0, 0, 0
			for i := range clients {
				wg.Go(func() {
					status, _, err := patch(start+i+1, tag)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Error(err)
					case status == http.StatusOK:
						won++
						sum += i + 1
					default:
						refused++
					}
				})
			}
			wg.Wait()
			final, _, err := read()
			if err != nil {
				t.Fatal(err)
			}
			if won != 1 || refused != clients-1 || final != start+sum {
				t.Fatalf("%d patches carrying one ETag: %d succeeded, %d got 412, final %d; want 1, %d and %d",
					clients, won, refused, final, clients-1, start+sum)
			}

			start = final
			won, refused, sum = 0, 0, 0
			over := map[string]bool{}    // the If-Match of each success: the version it replaced
			written := map[string]bool{} // the ETag each success answered
			for i := range clients {
				wg.Go(func() {
					for range 10 * clients * clients { // a bound, never reached: each round someone wins
						v, tag, err := read()
						if err == nil {
							var status int
							var etag string
							status, etag, err = patch(v+i+1, tag)
							mu.Lock()
							if err == nil && status == http.StatusOK {
								won++
								sum += i + 1
								if over[tag] || written[etag] {
									t.Errorf("two successes over the version %s or to %s", tag, etag)
								}
								over[tag], written[etag] = true, true
								mu.Unlock()
								return
							}
							if err == nil {
								refused++
							}
							mu.Unlock()
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
					t.Errorf("client %d never succeeded", i)
				})
			}
			wg.Wait()
			final, _, err = read()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d clients with retries: %d successes, %d answers 412", clients, won, refused)
			if won != clients || final != start+sum || sum != clients*(clients+1)/2 {
				t.Fatalf("%d clients with retries: %d succeeded, final %d, want %d and %d", clients, won, final, clients, start+sum)
			}
		})
	}
}
