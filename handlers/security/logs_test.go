package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
			cookie := []string{"Cookie", security.CookieName(e.partition) + "=" + ck.Token}
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
				`credo_auth_failures_total{credential="bearer",reason="revoked"} 1`, `credo_auth_failures_total{credential="none",reason="missing"}`,
				`credo_auth_failures_total{credential="other",reason="malformed"} 1`} {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}

// TestRefusalLinesAreBounded: a client spraying bad tokens gets every 401, counted in the
// metrics, but at most observe.RefusalLinesPerSecond warning lines a second; the lines left
// out are counted in the next line's lines_left_out, so that lines and left-out counts add up
// to the refusals.
func TestRefusalLinesAreBounded(t *testing.T) {
	e := newEnv(t, testenv.Backends(t)[0])
	_, token := e.user(t, "", false)
	tampered := token[:len(token)-4] + "AAAA"
	const sprayed = 60
	start := time.Now()
	for range sprayed {
		e.do(t, "GET", "security/tokens/introspect", "", bearer(tampered)...).expect(t, "tampered", http.StatusUnauthorized)
	}
	elapsed := time.Since(start)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond))) // the next second
	e.do(t, "GET", "security/tokens/introspect", "", bearer(tampered)...).expect(t, "tampered, a second later", http.StatusUnauthorized)

	lines, left := 0, 0
	for _, l := range strings.Split(e.log.String(), "\n") {
		var m struct {
			Msg  string
			Left int `json:"lines_left_out"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Msg == "authentication failed" {
			lines++
			left += m.Left
		}
	}
	if lines+left != sprayed+1 {
		t.Errorf("%d lines and %d left out for %d refusals", lines, left, sprayed+1)
	}
	if max := observe.RefusalLinesPerSecond * (int(elapsed/time.Second) + 3); lines > max {
		t.Errorf("%d lines for %d refusals in %s, want at most %d", lines, sprayed+1, elapsed, max)
	}
	w := httptest.NewRecorder()
	observe.AdminHandler(e.metrics).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if want := fmt.Sprintf(`credo_auth_failures_total{credential="bearer",reason="signature"} %d`, sprayed+1); !strings.Contains(w.Body.String(), want) {
		t.Errorf("metrics lack %s", want)
	}
}

// TestVersion1CountsOtherSchemes: version 1, like version 2, refuses an Authorization header
// of another scheme than Bearer (Basic carrying a client secret, say) as malformed, counted
// and logged as credential "other" (docs/operations.md), not as a request that sent no
// credential, which is counted as "none" and logged at debug level only.
func TestVersion1CountsOtherSchemes(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, _ := e.user(t, "", true)
			before := e.authFailures(t)
			r := e.do(t, "POST", "/api/registrations/count", "{}", "Authorization", "Basic "+res.Secret).expect(t, "Basic", http.StatusUnauthorized)
			if d := r.detail(t); !strings.Contains(d, `must be "Bearer <token>"`) {
				t.Errorf("Detail %q, want it to say the header must be Bearer", d)
			}
			after := e.authFailures(t)
			if got := after["other"] - before["other"]; got != 1 || after["none"] != before["none"] {
				t.Errorf("Basic on version 1 counted as %v, want one more \"other\" (before %v)", after, before)
			}
			if !strings.Contains(e.log.String(), `"credential":"other"`) {
				t.Errorf("the refusal was not logged as credential other:\n%s", e.log.String())
			}
			if strings.Contains(e.log.String(), res.Secret) {
				t.Error("the log carries the secret")
			}
		})
	}
}
