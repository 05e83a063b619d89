package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestCreateAnswersOnlyAnAcceptItOffers: a create answers its record in JSON, so an Accept
// without JSON (text/csv, application/xml) is a 406 problem, as on get and count (decisions §3),
// and nothing is created; JSON, */* and no Accept are answered. A retry with an
// Idempotency-Key and such an Accept is a 406 too, not the kept answer replayed.
func TestCreateAnswersOnlyAnAcceptItOffers(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			org, user := uuid.NewString(), uuid.NewString()
			comment := fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`, user, org, user)
			for _, accept := range []string{"text/csv", "application/xml", "application/json;q=0"} {
				ts.do(t, "POST", "security/users-comments", comment, "Accept", accept).expect(t, "create, Accept "+accept, http.StatusNotAcceptable)
			}
			if res := ts.do(t, "GET", "security/users-comments/count", "").expect(t, "count", http.StatusOK); string(res.body) != "{\"Count\":0}\n" && string(res.body) != `{"Count":0}` {
				t.Errorf("count after refused creates: %s, want 0", res.body)
			}
			for _, accept := range []string{"application/json", "*/*", "text/csv;q=0.5, application/json"} {
				ts.do(t, "POST", "security/users-comments", comment, "Accept", accept).expect(t, "create, Accept "+accept, http.StatusCreated)
			}
			// A retry with its Idempotency-Key is refused too, rather than replayed in JSON.
			const key = "accept-retry"
			ts.do(t, "POST", "security/users-comments", comment, "Idempotency-Key", key).expect(t, "create with a key", http.StatusCreated)
			ts.do(t, "POST", "security/users-comments", comment, "Idempotency-Key", key, "Accept", "text/csv").
				expect(t, "retry, Accept text/csv", http.StatusNotAcceptable)
			if res := ts.do(t, "POST", "security/users-comments", comment, "Idempotency-Key", key); res.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry, Accept none: not replayed: %d %s", res.status, res.body)
			}
		})
	}
}

// TestExistsAnswersAcceptAsGet: HEAD answers what GET would, without the body (RFC 9110
// §9.3.2): an Accept that get refuses with a 406 is a 406 on HEAD too, and one it answers is
// the 200 (or 404) of exists.
func TestExistsAnswersAcceptAsGet(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			item := newComment(t, ts, "")
			for _, accept := range []string{"text/csv", "application/xml"} {
				ts.do(t, "GET", item, "", "Accept", accept).expect(t, "GET, Accept "+accept, http.StatusNotAcceptable)
				ts.do(t, "HEAD", item, "", "Accept", accept).expect(t, "HEAD, Accept "+accept, http.StatusNotAcceptable)
			}
			ts.do(t, "HEAD", item, "", "Accept", "application/json").expect(t, "HEAD, Accept application/json", http.StatusOK)
			ts.do(t, "HEAD", "security/users-comments/"+uuid.NewString(), "", "Accept", "*/*").expect(t, "HEAD of no record", http.StatusNotFound)
		})
	}
}

// TestPatchRefusesOtherPatchFormats: PATCH takes a JSON merge patch (application/merge-patch+json,
// or application/json). Another patch format — a JSON Patch array sent as
// application/json-patch+json — is a 415 whose Accept-Patch names the two (RFC 5789 §2.2),
// not a 400 about a body that is not an object; the record is left as it was.
func TestPatchRefusesOtherPatchFormats(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			item := newComment(t, ts, `,"CommentText":"kept"`)
			for _, ct := range []string{"application/json-patch+json", "application/vnd.api+json", "text/plain"} {
				res := ts.do(t, "PATCH", item, `[{"op":"replace","path":"/CommentText","value":"changed"}]`, "Content-Type", ct).
					expect(t, "PATCH as "+ct, http.StatusUnsupportedMediaType)
				if got := res.header.Get("Accept-Patch"); got != "application/merge-patch+json, application/json" {
					t.Errorf("PATCH as %s: Accept-Patch %q", ct, got)
				}
			}
			for _, ct := range []string{"application/merge-patch+json", "application/merge-patch+json; charset=utf-8", "application/json", ""} {
				h := []string{}
				if ct != "" {
					h = append(h, "Content-Type", ct)
				}
				ts.do(t, "PATCH", item, `{"CommentText":"patched"}`, h...).expect(t, "PATCH as "+ct, http.StatusOK)
			}
			got := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)
			var after map[string]any
			if err := json.Unmarshal(got.body, &after); err != nil {
				t.Fatal(err)
			}
			if after["CommentText"] != "patched" {
				t.Errorf("CommentText = %v, want patched", after["CommentText"])
			}
		})
	}
}

// newComment creates a user comment with the members extra adds and answers its item path.
func newComment(t *testing.T, ts *testServer, extra string) string {
	t.Helper()
	org, user := uuid.NewString(), uuid.NewString()
	res := ts.do(t, "POST", "security/users-comments",
		fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q%s}`, user, org, user, extra)).
		expect(t, "create", http.StatusCreated)
	var stored map[string]any
	if err := json.Unmarshal(res.body, &stored); err != nil {
		t.Fatal(err)
	}
	return "security/users-comments/" + stored["CommentIdentifier"].(string)
}
