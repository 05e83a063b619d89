package handlers_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"credo/internal/testenv"
)

// BenchmarkConditionalWrite measures PUT and PATCH of a comment through the router, without
// If-Match and with one naming the record's current ETag (from the previous write's answer),
// so that the cost of the precondition (one more read of the locked row, hashed) shows. Both
// kinds answer the written record's ETag. Run with
//
//	go test -run '^$' -bench ConditionalWrite -benchmem ./handlers/
func BenchmarkConditionalWrite(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			e := newBenchEnv(b, be)
			base := "/v2/" + e.partition + "/security/users-comments/"
			pair := e.pairs[0]
			put := fmt.Appendf(nil, `{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"bench put"}`,
				pair[1], pair[0], pair[1])
			patch := []byte(`{"CommentText":"bench patch"}`)
			// tags holds each record's current ETag once a conditional write has written it.
			tags := map[string]string{}
			write := func(b *testing.B, method string, body []byte, conditional bool) {
				rng := rand.New(rand.NewPCG(5, 6))
				b.ReportAllocs()
				for b.Loop() {
					id := e.ids[rng.IntN(len(e.ids))]
					if conditional && tags[id] == "" {
						tags[id] = e.serveWith(b, "GET", base+id, nil, http.StatusOK).Header().Get("ETag")
					}
					header := []string{}
					if conditional {
						header = []string{"If-Match", tags[id]}
					}
					w := e.serveWith(b, method, base+id, body, http.StatusOK, header...)
					tags[id] = w.Header().Get("ETag")
				}
			}
			for _, tc := range []struct {
				name        string
				method      string
				body        []byte
				conditional bool
			}{
				{"PUT", "PUT", put, false},
				{"PUT-If-Match", "PUT", put, true},
				{"PATCH", "PATCH", patch, false},
				{"PATCH-If-Match", "PATCH", patch, true},
			} {
				b.Run(tc.name, func(b *testing.B) { write(b, tc.method, tc.body, tc.conditional) })
			}
		})
	}
}

// serveWith runs one request with the header pairs given through the handler, checks its
// status and returns the answer.
func (e *benchEnv) serveWith(b *testing.B, method, target string, body []byte, want int, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("%s %s: %d, want %d: %s", method, target, w.Code, want, w.Body)
	}
	return w
}
