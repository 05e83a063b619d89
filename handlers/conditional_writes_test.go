package handlers_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestIfNoneMatchOnWrites (both stores): If-None-Match on PUT, PATCH and DELETE is a
// precondition (RFC 9110 §13.1.2: the server "MUST NOT perform the requested method if the
// condition evaluates to false" and answers 412): `*` on an existing record, or a list naming
// its ETag (weakly), is a 412 problem that writes nothing, also before a body that would be a
// 400 is judged; a tag the record does not have lets the write through; a missing record is a
// 404 whatever the header says. It was ignored on writes, so that a PUT with
// `If-None-Match: *`, a client's "never overwrite" safeguard, replaced the existing record.
func TestIfNoneMatchOnWrites(t *testing.T) {
	reg := registry(t)
	fields := reg.MustByName("PersonField")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			user := uuid.NewString()
			got := put(t, ts, fields, map[string]any{"UserIdentifier": user, "FieldName": "Shoe size", "FieldValue": "42", "FieldSequence": 0})
			item := itemPath(fields, got)
			res := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)
			tag, body := etagOf(t, "get", res), string(res.body)
			for _, inm := range []string{"*", tag, "W/" + tag, `"other", ` + tag} {
				for _, w := range []struct{ method, body, contentType string }{
					{"PUT", `{"UserIdentifier":"` + user + `","FieldValue":"overwritten"}`, "application/json"},
					{"PATCH", `{"FieldValue":"overwritten"}`, "application/merge-patch+json"},
					{"DELETE", "", ""},
				} {
					header := []string{"If-None-Match", inm}
					if w.contentType != "" {
						header = append(header, "Content-Type", w.contentType)
					}
					expectPrecondition(t, w.method+" If-None-Match "+inm, ts.do(t, w.method, item, w.body, header...))
					if now := ts.do(t, "GET", item, "").expect(t, "get after", http.StatusOK); string(now.body) != body {
						t.Fatalf("%s If-None-Match %s wrote: %s, want %s", w.method, inm, now.body, body)
					}
				}
			}
			expectPrecondition(t, "PUT If-None-Match * with a bad body",
				ts.do(t, "PUT", item, `{"FieldSequence":"x"}`, "If-None-Match", "*", "Content-Type", "application/json"))
			ts.do(t, "PUT", "directory/people-fields/"+uuid.NewString(), `{"UserIdentifier":"`+user+`"}`, "If-None-Match", "*", "Content-Type", "application/json").
				expect(t, "PUT If-None-Match * on a missing record", http.StatusNotFound)
			ts.do(t, "DELETE", item, "", "If-None-Match", "nope").expect(t, "DELETE with a malformed If-None-Match", http.StatusBadRequest)
			// A tag the record does not have lets the write through.
			ts.do(t, "PATCH", item, `{"FieldValue":"43"}`, "If-None-Match", `"other"`, "Content-Type", "application/merge-patch+json").
				expect(t, "PATCH If-None-Match other", http.StatusOK)
		})
	}
}
