package security_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"credo/handlers/observe"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestLogsHoldNoCredential exercises every security route, with good and bad credentials of
// every kind, and a user body with password members, then reads the whole log at debug level:
// no secret, token, cookie or password appears in it. Token issuance and refusals are counted
// by kind and reason.
func TestLogsHoldNoCredential(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, token := e.user(t, "", true)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			cookie := []string{"Cookie", security.CookieName + "=" + ck.Token}
			tampered := token[:len(token)-4] + "AAAA"
			const password = "Pa55word-never-logged"
			calls := []struct {
				method, path, body string
				header             []string
			}{
				{"POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q}`, res.Secret), nil},
				{"POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q}`, res.Secret+"x"), nil},
				{"POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q,"Lifetime":1}`, res.Secret), nil},
				{"GET", "security/tokens/introspect", "", bearer(token)},
				{"GET", "security/tokens/introspect", "", bearer(tampered)},
				{"GET", "security/tokens/introspect", "", cookie},
				{"GET", "security/tokens/introspect?token=" + token, "", nil},
				{"POST", "security/tokens/validate", token, nil},
				{"POST", "security/tokens/validate", "", bearer(token)},
				{"POST", "security/cookies/generate", "", cookie},
				{"POST", "security/cookies/decode", ck.Token, nil},
				{"POST", "security/cookies/decode", "", cookie},
				{"POST", "security/cookies/validate", ck.Token, nil},
				{"GET", "security/settings/endpoints", "", bearer(token)},
				{"GET", "security/settings/permissions", "", bearer(token)},
				{"GET", "security/settings/resources", "", bearer(token)},
				{"GET", "security/settings/roles", "", bearer(token)},
				{"POST", "security/users", fmt.Sprintf(`{"Email":"p@example.com","UserPasswordHash":%q,"DefaultPassword":%q}`, password, password), append(bearer(token), "Content-Type", "application/json")},
				{"GET", "directory/people", "", []string{"Authorization", "Basic " + res.Secret}},
				{"GET", "directory/people", "", bearer(res.Secret)},
			}
			for _, c := range calls {
				e.do(t, c.method, c.path, c.body, c.header...)
			}
			e.do(t, "DELETE", "security/tokens/"+jti(t, token), "", bearer(token)...)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "revoked", http.StatusUnauthorized)

			log := e.log.String()
			if n := strings.Count(log, `"msg":"request"`); n < len(calls)+2 {
				t.Fatalf("%d access lines for %d requests:\n%s", n, len(calls)+2, log)
			}
			for name, secret := range map[string]string{"secret": res.Secret, "token": token, "token signature": token[strings.LastIndex(token, ".")+1:],
				"tampered token": tampered, "cookie": ck.Token, "password": password} {
				if strings.Contains(log, secret) {
					t.Errorf("the log holds the %s", name)
				}
			}
			w := httptest.NewRecorder()
			observe.AdminHandler(e.metrics).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
			for _, want := range []string{`credo_tokens_issued_total{kind="token"}`, `credo_tokens_issued_total{kind="cookie"} 2`,
				`credo_auth_failures_total{credential="secret",reason="unknown"}`, `credo_auth_failures_total{credential="bearer",reason="signature"} 1`,
				`credo_auth_failures_total{credential="bearer",reason="revoked"} 1`, `credo_auth_failures_total{credential="none",reason="missing"}`} {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}
