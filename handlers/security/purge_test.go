package security_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers/housekeeping"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// tokenRows counts the issued and revoked token records of the env's partition.
func (e *env) tokenRows(t *testing.T) (issued, revoked int64) {
	t.Helper()
	n := func(name string) int64 {
		c, err := e.store.Count(context.Background(), e.reg.MustByName(name), engine.Query{}, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return n("IssuedToken"), n("RevokedToken")
}

// TestPurgeExpiredTokenRecords: issued and revoked token records stay while their token could
// be used, and go once it expired more than PurgeGrace ago (injected clock); under a loop
// that issues and revokes tokens while time passes, the tables stay bounded; the housekeeping loop purges
// by itself.
func TestPurgeExpiredTokenRecords(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			s := e.secret(t, security.SecretOptions{})
			generate := func(lifetime int) string {
				body, _ := json.Marshal(map[string]any{"Secret": s.Secret, "Lifetime": lifetime})
				var out struct{ AccessToken string }
				e.do(t, "POST", "security/tokens/generate", string(body)).expect(t, "generate", http.StatusOK).json(t, &out)
				return out.AccessToken
			}
			short, long := generate(60), generate(3600)
			e.cookieFrom(t, bearer(short))
			e.do(t, "DELETE", "security/tokens/"+jti(t, short), "", bearer(short)...).expect(t, "revoke", http.StatusOK)
			if i, r := e.tokenRows(t); i != 3 || r != 2 { // the cookie is revoked with its token
				t.Fatalf("before: %d issued, %d revoked; want 3 and 2", i, r)
			}
			if n, err := e.sec.Purge(ctx); err != nil || n != 0 {
				t.Fatalf("purge of live records: %d, %v", n, err)
			}
			e.clock.Advance(60*time.Second + security.PurgeGrace - time.Second)
			if n, _ := e.sec.Purge(ctx); n != 0 {
				t.Fatalf("purged %d records within the grace after expiry", n)
			}
			e.clock.Advance(2 * time.Second)
			if n, err := e.sec.Purge(ctx); err != nil || n != 4 {
				t.Fatalf("purge after expiry: %d, %v; want 4", n, err)
			}
			if i, r := e.tokenRows(t); i != 1 || r != 0 {
				t.Errorf("after: %d issued, %d revoked; want the long token only", i, r)
			}
			if e.do(t, "GET", "security/tokens/introspect", "", bearer(long)...).status != http.StatusOK {
				t.Error("the purge broke a live token")
			}

			// A loop issuing a token every 20 s (half of them revoked), purging every 10
			// tokens: the tables hold what the last few minutes issued, not everything.
			var maxIssued, maxRevoked int64
			for k := 0; k < 150; k++ {
				tok := generate(60)
				if k%2 == 0 {
					e.do(t, "DELETE", "security/tokens/"+jti(t, tok), "", bearer(tok)...).expect(t, "revoke", http.StatusOK)
				}
				e.clock.Advance(20 * time.Second)
				if k%10 == 9 {
					if _, err := e.sec.Purge(ctx); err != nil {
						t.Fatal(err)
					}
				}
				i, r := e.tokenRows(t)
				maxIssued, maxRevoked = max(maxIssued, i), max(maxRevoked, r)
			}
			// Live or in grace: (60 s + PurgeGrace) / 20 s + 1 = 7, plus 10 since the last purge.
			if maxIssued > 18 || maxRevoked > 10 {
				t.Errorf("under the loop the tables reached %d issued, %d revoked records; want them bounded (<= 18, 10)", maxIssued, maxRevoked)
			}

			// Run by the housekeeping loop, as credo serve does, the purge needs no call.
			e.clock.Advance(time.Hour)
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { housekeeping.Every(runCtx, 10*time.Millisecond, "token records", e.sec.Purge); close(done) }()
			deadline := time.Now().Add(10 * time.Second)
			for {
				i, r := e.tokenRows(t)
				if i == 0 && r == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the housekeeping loop left %d issued, %d revoked records", i, r)
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			<-done
		})
	}
}
