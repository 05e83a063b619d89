package security_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestResponseHygieneAndQuietLogs runs every security operation, good and bad, and version-1
// secret authentication, with the process's log captured at debug level. No log line and no
// error response carries any secret, token or cookie issued; every response is nosniff; every
// response of a security operation is no-store; authentication failures are counted and
// logged.
func TestResponseHygieneAndQuietLogs(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			logs := &syncBuffer{}
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			defer slog.SetDefault(prev)

			e := newEnv(t, b)
			var credentials []string
			var responses []response
			call := func(method, path, body string, header ...string) response {
				t.Helper()
				r := e.do(t, method, path, body, header...)
				responses = append(responses, r)
				return r
			}
			owner, _ := e.user(t, "", false)
			op := e.secret(t, security.SecretOptions{Operator: true})
			credentials = append(credentials, owner.Secret, op.Secret)

			var tok struct{ AccessToken string }
			call("POST", "security/tokens/generate", `{"Secret":"`+owner.Secret+`","Debug":true}`).expect(t, "generate", http.StatusOK).json(t, &tok)
			var opTok struct{ AccessToken string }
			call("POST", "security/tokens/generate", `{"Secret":"`+op.Secret+`"}`).expect(t, "generate", http.StatusOK).json(t, &opTok)
			short := ""
			{
				var out struct{ AccessToken string }
				call("POST", "security/tokens/generate", `{"Secret":"`+owner.Secret+`","Lifetime":60}`).expect(t, "generate", http.StatusOK).json(t, &out)
				short = out.AccessToken
			}
			credentials = append(credentials, tok.AccessToken, opTok.AccessToken, short)
			h := bearer(tok.AccessToken)

			// Refusals that carry a credential in the request.
			call("POST", "security/tokens/generate", `{"Secret":"`+owner.Secret+`x"}`).expect(t, "unknown secret", http.StatusUnauthorized)
			call("POST", "security/tokens/generate", `{"Secret":"`+owner.Secret+`","Organization":"`+owner.Secret+`"}`).expect(t, "secret as a uuid", http.StatusBadRequest)
			call("POST", "security/tokens/generate", `{"Secret":"`+owner.Secret+`","Subject":"`+uuid.NewString()+`"}`).expect(t, "not operator", http.StatusForbidden)
			call("GET", "security/tokens/introspect", "", bearer(tok.AccessToken+"x")...).expect(t, "bad signature", http.StatusUnauthorized)
			call("GET", "security/tokens/introspect", "", bearer(owner.Secret)...).expect(t, "secret as a token", http.StatusUnauthorized)
			call("POST", "security/tokens/validate", owner.Secret).expect(t, "validate a secret", http.StatusBadRequest)
			call("GET", "security/users", "", h...).expect(t, "no permission", http.StatusForbidden)
			call("POST", "security/permissions", permissionBody(uuid.NewString(), "directory/people", auth.Administrate), h...).expect(t, "no permission", http.StatusForbidden)

			// Every security operation.
			call("GET", "security/tokens/introspect", "", h...).expect(t, "introspect", http.StatusOK)
			call("POST", "security/tokens/validate", tok.AccessToken).expect(t, "validate", http.StatusOK)
			call("POST", "security/tokens/validate", "", h...).expect(t, "validate header", http.StatusOK)
			var ck struct{ Token string }
			call("POST", "security/cookies/generate", "", h...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			var ck2 struct{ Token string }
			call("POST", "security/cookies/generate", "", e.withCookie(ck.Token)...).expect(t, "cookie from cookie", http.StatusOK).json(t, &ck2)
			credentials = append(credentials, ck.Token, ck2.Token)
			call("POST", "security/cookies/decode", ck.Token).expect(t, "decode", http.StatusOK)
			call("POST", "security/cookies/decode?decode=false", "", e.withCookie(ck.Token)...).expect(t, "decode cookie", http.StatusOK)
			call("POST", "security/cookies/validate", ck2.Token).expect(t, "validate cookie", http.StatusOK)
			call("POST", "security/cookies/decode", ck.Token[:len(ck.Token)-4]+"AAAA").expect(t, "decode tampered", http.StatusBadRequest)
			call("GET", "security/tokens/introspect", "", e.withCookie(ck.Token[:len(ck.Token)-4]+"AAAA")...).expect(t, "tampered cookie", http.StatusUnauthorized)
			for _, s := range []string{"endpoints", "permissions", "resources", "roles"} {
				call("GET", "security/settings/"+s, "", bearer(opTok.AccessToken)...).expect(t, "settings", http.StatusOK)
			}
			call("DELETE", "security/tokens/"+jti(t, short), "", bearer(short)...).expect(t, "revoke", http.StatusOK)
			call("GET", "security/tokens/introspect", "", bearer(short)...).expect(t, "revoked", http.StatusUnauthorized)
			call("DELETE", "security/tokens/"+uuid.NewString(), "", h...).expect(t, "revoke unknown", http.StatusNotFound)
			call("GET", "security/tokens/introspect", "", e.withCookie(ck2.Token)...).expect(t, "cookie", http.StatusOK)
			e.clock.Advance(25 * time.Hour)
			call("GET", "security/tokens/introspect", "", h...).expect(t, "expired", http.StatusUnauthorized)
			call("GET", "security/tokens/introspect", "", e.withCookie(ck.Token)...).expect(t, "expired cookie", http.StatusUnauthorized)
			call("GET", "security/tokens/introspect", "").expect(t, "no credential", http.StatusUnauthorized)

			// Version 1 with a secret, good and bad, and with a token.
			call("POST", "/api/registrations/count", "{}", bearer(op.Secret)...).expect(t, "v1 secret", http.StatusOK)
			call("POST", "/api/registrations/count", "{}", bearer(op.Secret+"x")...).expect(t, "v1 bad secret", http.StatusUnauthorized)
			call("POST", "/api/registrations/count", "{}", bearer(tok.AccessToken)...).expect(t, "v1 expired token", http.StatusUnauthorized)
			call("POST", "/api/registrations/count", "{}").expect(t, "v1 no credential", http.StatusUnauthorized)
			call("GET", "/api/nothing", "").expect(t, "v1 unknown route", http.StatusNotFound)
			call("GET", "nothing/here", "").expect(t, "v2 unknown route", http.StatusNotFound)

			log := logs.String()
			if !strings.Contains(log, "authentication failed") {
				t.Errorf("no authentication failure was logged:\n%s", log)
			}
			for _, c := range credentials {
				for _, part := range credentialParts(c) {
					if strings.Contains(log, part) {
						t.Errorf("the log carries a credential (%.12s…)", part)
					}
				}
			}
			for _, r := range responses {
				if r.header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("a response lacks nosniff: %d %s", r.status, r.body)
				}
				if r.status >= 400 {
					for _, c := range credentials {
						if strings.Contains(string(r.body), c) {
							t.Errorf("an error response echoes a credential: %s", r.body)
						}
					}
				}
			}
			for _, r := range responses[:3] {
				if r.header.Get("Cache-Control") != "no-store" {
					t.Errorf("tokens/generate lacks Cache-Control: no-store: %v", r.header)
				}
			}
			failures := e.authFailures(t)
			if failures["secret"] < 2 || failures["bearer"] < 3 || failures["cookie"] < 2 || failures["none"] < 2 || failures["unknown"] != 0 {
				t.Errorf("authentication failures counted by credential %v", failures)
			}
		})
	}
}

// credentialParts returns the pieces of a credential that must not appear in a log: the whole
// value and, for a JWT, its signature (the payload is public claims, the header constant).
func credentialParts(c string) []string {
	if parts := strings.Split(c, "."); len(parts) == 3 {
		return []string{c, parts[2]}
	}
	return []string{c}
}

// TestSecurityResponsesAreNoStore: every security operation's response, success or error,
// carries Cache-Control: no-store.
func TestSecurityResponsesAreNoStore(t *testing.T) {
	e := newEnv(t, testenv.Backends(t)[0])
	_, token := e.user(t, "", true)
	for _, ep := range e.srv.Endpoints() {
		if !strings.HasPrefix(ep.Path, "security/tokens") && !strings.HasPrefix(ep.Path, "security/cookies") && !strings.HasPrefix(ep.Path, "security/settings") {
			continue
		}
		for _, body := range []string{"", "{}"} {
			res := e.do(t, ep.Method, concrete(ep.Path), body, bearer(token)...)
			if res.header.Get("Cache-Control") != "no-store" && res.status != http.StatusUnauthorized {
				t.Errorf("%s: %d without no-store", epName(ep), res.status)
			}
		}
	}
	var cookie struct{ Token string }
	res := e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK)
	res.json(t, &cookie)
	if res.header.Get("Cache-Control") != "no-store" || !strings.Contains(res.header.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("cookies/generate headers %v", res.header)
	}
}
