package security_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// cookieFrom makes a session cookie with a credential header (a bearer token or a cookie)
// and returns its token and Identifier.
func (e *env) cookieFrom(t *testing.T, header []string) (string, string) {
	t.Helper()
	var out struct{ Token string }
	e.do(t, "POST", "security/cookies/generate", "", header...).expect(t, "cookies/generate", http.StatusOK).json(t, &out)
	var dec struct{ Cookie auth.CookiePayload }
	e.do(t, "POST", "security/cookies/decode?decrypt=true", out.Token).expect(t, "cookies/decode", http.StatusOK).json(t, &dec)
	return out.Token, dec.Cookie.Identifier
}

// withCookie is the Cookie header carrying a session cookie token under the name of the env's partition.
func (e *env) withCookie(token string) []string {
	return []string{"Cookie", security.CookieName(e.partition) + "=" + token}
}

// authenticates reports whether a credential header authenticates on a server.
func (e *env) authenticates(t *testing.T, ts *httptest.Server, header []string) bool {
	t.Helper()
	res := e.doAt(t, ts, e.partition, "GET", "security/tokens/introspect", "", header...)
	if res.status != http.StatusOK && res.status != http.StatusUnauthorized {
		t.Fatalf("introspect: %d %s", res.status, res.body)
	}
	return res.status == http.StatusOK
}

// TestRevocationReachesCookies (decisions §7): revoking a secret ends its tokens and every
// cookie derived from them, cookies made from cookies included, even those whose
// registration the revocation could not see (their lineage names the secret); revoking a
// token ends the cookies made from it; revoking a cookie ends the cookies made from it and
// from those. Another process refuses them within auth.MaxRevocationTTL.
func TestRevocationReachesCookies(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			_, _, other := e.serve(t) // a second process over the same database
			chain := func() (tok string, cookies []string, ids []string) {
				t.Helper()
				s := e.secret(t, security.SecretOptions{Email: "chain@example.com"})
				tok = e.token(t, s.Secret)
				c1, id1 := e.cookieFrom(t, bearer(tok))
				c2, id2 := e.cookieFrom(t, e.withCookie(c1))
				c3, id3 := e.cookieFrom(t, e.withCookie(c2))
				cookies, ids = []string{c1, c2, c3}, []string{id1, id2, id3}
				for _, ts := range []*httptest.Server{e.ts, other} {
					if !e.authenticates(t, ts, bearer(tok)) {
						t.Fatal("a fresh token is refused")
					}
					for _, c := range cookies {
						if !e.authenticates(t, ts, e.withCookie(c)) {
							t.Fatal("a fresh cookie is refused")
						}
					}
				}
				return tok, cookies, ids
			}
			refused := func(what string, headers ...[]string) {
				t.Helper()
				e.clock.Advance(auth.MaxRevocationTTL) // the other process's cache ages out
				for _, ts := range []*httptest.Server{e.ts, other} {
					for i, h := range headers {
						if e.authenticates(t, ts, h) {
							t.Errorf("%s: credential %d still authenticates", what, i)
						}
					}
				}
			}

			// 1. Revoking the secret; the registrations of the cookies made from cookies are
			// lost first (as if made while the revocation ran), so only their lineage can tell.
			tok, cookies, ids := chain()
			for _, id := range ids[1:] {
				if _, err := e.store.DeleteWhere(context.Background(), e.reg.MustByName("IssuedToken"), "TokenIdentifier", id); err != nil {
					t.Fatal(err)
				}
			}
			var secretID string
			{
				var in struct{ Jwt struct{ Identifier string } }
				e.do(t, "GET", "security/tokens/introspect", "", bearer(tok)...).expect(t, "introspect", http.StatusOK).json(t, &in)
				issued, err := e.store.Get(context.Background(), e.reg.MustByName("IssuedToken"), []any{in.Jwt.Identifier}, nil, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				secretID = issued.Get(e.reg.MustByName("IssuedToken"), "SecretIdentifier").(string)
			}
			if err := security.RevokeSecret(context.Background(), e.store, secretID); err != nil {
				t.Fatal(err)
			}
			refused("secret revoked", bearer(tok), e.withCookie(cookies[0]), e.withCookie(cookies[1]), e.withCookie(cookies[2]))

			// 2. Revoking the token ends the cookies made from it, directly or not.
			tok, cookies, _ = chain()
			var in struct{ Jwt struct{ Identifier string } }
			e.do(t, "GET", "security/tokens/introspect", "", bearer(tok)...).expect(t, "introspect", http.StatusOK).json(t, &in)
			e.do(t, "DELETE", "security/tokens/"+in.Jwt.Identifier, "", bearer(tok)...).expect(t, "revoke token", http.StatusOK)
			refused("token revoked", bearer(tok), e.withCookie(cookies[0]), e.withCookie(cookies[1]), e.withCookie(cookies[2]))

			// 3. Revoking the first cookie ends the second (its parent) and the third (made
			// from the second); the token lives on.
			tok, cookies, ids = chain()
			e.do(t, "DELETE", "security/tokens/"+ids[0], "", bearer(tok)...).expect(t, "revoke cookie", http.StatusOK)
			refused("first cookie revoked", e.withCookie(cookies[0]), e.withCookie(cookies[1]), e.withCookie(cookies[2]))
			if !e.authenticates(t, e.ts, bearer(tok)) {
				t.Error("revoking a cookie revoked the token it was made from")
			}
			// cookies/validate agrees, by the lineage too.
			for _, c := range cookies[1:] {
				var rep struct {
					Valid  bool
					Reason string
				}
				e.do(t, "POST", "security/cookies/validate", c).expect(t, "validate", http.StatusOK).json(t, &rep)
				if rep.Valid || rep.Reason == "" {
					t.Errorf("cookies/validate calls a cookie of a revoked cookie valid: %+v", rep)
				}
			}
		})
	}
}
