package security_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestModulesHostileInput: the security, compliance and gradebook-export modules read query
// strings, path segments and bodies through the same readers as the generated routes, so
// what the stores cannot keep or compare, or what a client cannot have meant, is a 400
// naming the parameter or member on both stores (PostgreSQL answered 500 to invalid UTF-8 in
// a token identifier or an export filter).
func TestModulesHostileInput(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			_, token := e.user(t, uuid.NewString(), true)
			cases := []struct {
				name, method, path, body, member string
			}{
				{name: "invalid byte in a token identifier", method: "DELETE", path: "security/tokens/%ff", member: "jti"},
				{name: "surrogate in a token identifier", method: "DELETE", path: "security/tokens/%ed%a0%80", member: "jti"},
				{name: "NUL in a token identifier", method: "DELETE", path: "security/tokens/a%00b", member: "jti"},
				{name: "malformed cookie flag", method: "POST", path: "security/cookies/decode?decode=%zz", body: "x", member: "decode"},
				{name: "semicolon in cookie flags", method: "POST", path: "security/cookies/validate?decode=true;x=1", body: "x", member: "decode"},
				{name: "repeated token member", method: "POST", path: "security/tokens/generate", body: `{"Secret":"a","Secret":"b"}`, member: "Secret"},
				{name: "quoted lifetime", method: "POST", path: "security/tokens/generate", body: `{"Lifetime":"3600"}`, member: "Lifetime"},
				{name: "NUL in a secret", method: "POST", path: "security/tokens/generate", body: `{"Secret":"\u0000"}`, member: "Secret"},
				{name: "invalid byte in an export filter", method: "GET", path: "progress/gradebooks/export?GradebookTitle=%ff", member: "GradebookTitle"},
				{name: "NUL in an export filter", method: "GET", path: "progress/gradebooks/export?GradebookTitle=%00", member: "GradebookTitle"},
				{name: "malformed export query", method: "GET", path: "progress/gradebooks/export?Take=%zz", member: "Take"},
				{name: "export projecting nothing", method: "GET", path: "progress/gradebooks/export?Includes=,", member: "Includes"},
				{name: "export filter too long", method: "GET", path: "progress/gradebooks/export?GradebookTitle=" + strings.Repeat("x", 4001), member: "GradebookTitle"},
				{name: "export sort too long", method: "GET", path: "progress/gradebooks/export?Sort=" + strings.Repeat("GradebookTitle,", 500), member: "Sort"},
				{name: "invalid byte in a download key", method: "GET", path: "progress/gradebooks/download/%ff", member: "ExportKey"},
				{name: "repeated compliance member", method: "POST", path: "api/plugin/cmds/compliance-summaries", body: `{"ProfileCondition":1,"ProfileCondition":2}`, member: "ProfileCondition"},
				{name: "quoted compliance int", method: "POST", path: "api/plugin/cmds/compliance-summaries", body: `{"ProfileCondition":"1"}`, member: "ProfileCondition"},
				{name: "NUL in a compliance list", method: "POST", path: "api/plugin/cmds/compliance-summaries", body: `{"Departments":["\u0000"]}`, member: "Departments[0]"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					header := bearer(token)
					if c.body != "" && !strings.HasPrefix(c.path, "security/cookies") {
						header = append(header, "Content-Type", "application/json")
					}
					res := e.do(t, c.method, c.path, c.body, header...).expect(t, c.name, http.StatusBadRequest)
					var p struct{ Errors map[string][]string }
					if err := json.Unmarshal(res.body, &p); err != nil {
						t.Fatal(err)
					}
					if p.Errors[c.member] == nil {
						t.Fatalf("the problem %s does not name %s", res.body, c.member)
					}
				})
			}
			e.do(t, "POST", "security/tokens/generate", `{"Secret":"x"}`, "Content-Type", "text/plain").
				expect(t, "a text/plain token request", http.StatusUnsupportedMediaType)
			e.do(t, "POST", "api/plugin/cmds/compliance-summaries", `{}`, append(bearer(token), "Content-Type", "application/xml")...).
				expect(t, "an XML compliance request", http.StatusUnsupportedMediaType)
		})
	}
}
