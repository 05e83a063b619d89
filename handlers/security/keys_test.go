package security_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestStoredKeysAndRevocationAcrossProcesses runs two servers ("processes") over one
// database without a configured key: the partition key is created once and shared, so each
// accepts the other's tokens; partitions still refuse each other's; and a token revoked on
// one is refused by the other within auth.MaxRevocationTTL.
func TestStoredKeysAndRevocationAcrossProcesses(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b, withStoredKeys)
			_, _, ts2 := e.serve(t)
			res, token := e.user(t, "", false)
			token2 := e.tokenAt(t, ts2, e.partition, res.Secret)
			for _, c := range []struct {
				name  string
				token string
			}{{"first's token on the second", token}, {"second's token on the first", token2}} {
				e.doAt(t, ts2, e.partition, "GET", "security/tokens/introspect", "", bearer(c.token)...).expect(t, c.name, http.StatusOK)
				e.do(t, "GET", "security/tokens/introspect", "", bearer(c.token)...).expect(t, c.name, http.StatusOK)
			}
			other := secretIn(t, e.otherStore, security.SecretOptions{Email: "o@example.com"})
			otherToken := e.tokenAt(t, ts2, e.other, other.Secret)
			e.doAt(t, ts2, e.other, "GET", "security/tokens/introspect", "", bearer(otherToken)...).expect(t, "at home", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(otherToken)...).expect(t, "in another partition", http.StatusUnauthorized)

			// A third start reads the same key rather than making one.
			sec3, err := security.New(context.Background(), e.db, e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			if p, err := sec3.Authenticator().Authenticate(req, e.partition); err != nil || p.UserIdentifier != res.UserIdentifier {
				t.Errorf("a third process: %v, %v", p, err)
			}

			// The second process has seen the token (and cached "not revoked"); revoke on the first.
			e.doAt(t, ts2, e.partition, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "cached", http.StatusOK)
			e.do(t, "DELETE", "security/tokens/"+jti(t, token), "", bearer(token)...).expect(t, "revoke", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "revoking process, at once", http.StatusUnauthorized)
			e.clock.Advance(auth.MaxRevocationTTL)
			res2 := e.doAt(t, ts2, e.partition, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "other process, within 2 s", http.StatusUnauthorized)
			if d := res2.detail(t); d != "token revoked" {
				t.Errorf("Detail %q, want token revoked", d)
			}
			e.doAt(t, ts2, e.partition, "GET", "security/tokens/introspect", "", bearer(token2)...).expect(t, "the user's other token", http.StatusOK)
		})
	}
}

// TestRevokeOwnTokensOnly checks who may revoke what through DELETE security/tokens/{jti}.
func TestRevokeOwnTokensOnly(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			alice, aliceToken := e.user(t, "", false)
			_, bobToken := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			aliceSecond := e.token(t, alice.Secret)

			e.do(t, "DELETE", "security/tokens/"+jti(t, aliceToken), "", bearer(bobToken)...).expect(t, "another user's token", http.StatusNotFound)
			e.do(t, "DELETE", "security/tokens/not-an-id", "", bearer(bobToken)...).expect(t, "unknown id", http.StatusNotFound)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(aliceToken)...).expect(t, "still valid", http.StatusOK)
			e.do(t, "DELETE", "security/tokens/"+jti(t, aliceSecond), "", bearer(aliceToken)...).expect(t, "own other token", http.StatusOK)
			e.do(t, "DELETE", "security/tokens/"+jti(t, aliceSecond), "", bearer(aliceToken)...).expect(t, "again", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(aliceSecond)...).expect(t, "revoked", http.StatusUnauthorized)
			e.do(t, "DELETE", "security/tokens/"+jti(t, bobToken), "", bearer(opToken)...).expect(t, "operator", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(bobToken)...).expect(t, "revoked by operator", http.StatusUnauthorized)
		})
	}
}
