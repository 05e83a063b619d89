package handlers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// prefixed finds a package's or an operation's prefix in a client's message ("engine: ",
// "request: ", "handlers: ", "update Widget [..]: "): contexts are for the log.
var prefixed = regexp.MustCompile(`\b(engine|request|handlers|problem): |\b(get|exists|update|patch|delete|create|count|list) [A-Z]\w* (\[[^\]]*\])?:`)

// TestClientMessagesCarryNoPrefixes: the problem documents of common failures read as their
// cause: the engine wraps its errors with the operation once, for the log, and the client
// sees neither that context nor a package's prefix, let alone twice.
func TestClientMessagesCarryNoPrefixes(t *testing.T) {
	reg := registry(t)
	fields, comments := reg.MustByName("PersonField"), reg.MustByName("UserComment")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			got := put(t, ts, fields, map[string]any{"UserIdentifier": uuid.NewString(), "OrganizationIdentifier": uuid.NewString(),
				"FieldName": "Shoe size", "FieldValue": "42"})
			item := itemPath(fields, got)
			missing := fields.Path + "/" + uuid.NewString()
			comment := map[string]any{"CommentIdentifier": uuid.NewString(), "CommentCreatedBy": uuid.NewString(),
				"OrganizationIdentifier": uuid.NewString(), "UserIdentifier": uuid.NewString()}
			dup, _ := json.Marshal(comment)
			ts.do(t, "POST", comments.Path, string(dup)).expect(t, "create a comment", http.StatusCreated)
			cases := []struct {
				name, method, path, body string
				status                   int
			}{
				{name: "get missing", method: "GET", path: missing, status: http.StatusNotFound},
				{name: "put missing", method: "PUT", path: missing, body: `{"FieldValue":"1"}`, status: http.StatusNotFound},
				{name: "patch missing", method: "PATCH", path: missing, body: `{"FieldValue":"1"}`, status: http.StatusNotFound},
				{name: "delete missing", method: "DELETE", path: missing, status: http.StatusNotFound},
				{name: "unknown member", method: "POST", path: comments.Path, body: `{"Bogus":1}`, status: http.StatusBadRequest},
				{name: "ill-typed member", method: "PATCH", path: item, body: `{"FieldSequence":"x"}`, status: http.StatusBadRequest},
				{name: "broken JSON", method: "POST", path: comments.Path, body: `{"FieldValue":`, status: http.StatusBadRequest},
				{name: "taken key", method: "POST", path: comments.Path, body: string(dup), status: http.StatusBadRequest},
				{name: "key differs from the path", method: "PUT", path: item, body: `{"FieldIdentifier":"` + uuid.NewString() + `"}`, status: http.StatusBadRequest},
				{name: "unknown parameter", method: "GET", path: comments.Path + "?Bogus=1", status: http.StatusBadRequest},
				{name: "bad Take", method: "GET", path: comments.Path + "?Take=-1", status: http.StatusBadRequest},
				{name: "bad sort", method: "GET", path: comments.Path + "?Sort=Bogus", status: http.StatusBadRequest},
			}
			for _, tc := range cases {
				res := ts.do(t, tc.method, tc.path, tc.body).expect(t, tc.name, tc.status)
				var p struct {
					Detail string
					Errors map[string][]string
				}
				if err := json.Unmarshal(res.body, &p); err != nil {
					t.Fatalf("%s: %v: %s", tc.name, err, res.body)
				}
				msgs := []string{p.Detail}
				for _, m := range p.Errors {
					msgs = append(msgs, m...)
				}
				for _, m := range msgs {
					if prefixed.MatchString(m) || strings.TrimSpace(m) == "" && m == p.Detail {
						t.Errorf("%s: a client reads %q", tc.name, m)
					}
				}
			}
		})
	}
}
