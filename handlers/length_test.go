package handlers_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestJSONAnswersDeclareTheirLength (both stores): a page of records larger than net/http's
// 2 KiB buffer and a get carry Content-Length, the length of the body as received, instead of
// arriving in chunks.
func TestJSONAnswersDeclareTheirLength(t *testing.T) {
	reg := registry(t)
	comments := reg.MustByName("UserComment")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			user := uuid.NewString()
			var item string
			for i := range 20 {
				got := put(t, ts, comments, map[string]any{"UserIdentifier": user, "OrganizationIdentifier": uuid.NewString(),
					"CommentCreatedBy": user, "CommentText": fmt.Sprintf("comment %d, long enough to fill a page", i)})
				item = itemPath(comments, got)
			}
			for _, c := range []struct{ what, path string }{
				{"list", "security/users-comments?Take=20&UserIdentifier=" + user},
				{"get", item},
			} {
				res := ts.do(t, "GET", c.path, "").expect(t, c.what, http.StatusOK)
				if c.what == "list" && len(res.body) <= 2048 {
					t.Fatalf("list: %d bytes, want more than net/http's 2 KiB buffer", len(res.body))
				}
				if got := res.header.Get("Content-Length"); got != strconv.Itoa(len(res.body)) {
					t.Errorf("%s: Content-Length %q for %d bytes", c.what, got, len(res.body))
				}
				if ct := res.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
					t.Errorf("%s: Content-Type %q", c.what, ct)
				}
			}
		})
	}
}
