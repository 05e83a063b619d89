package security_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestSecretNeverStoredOrLogged uses a secret every way a client might, rightly and wrongly,
// with debug logging on, then looks for it in every column of every table of both
// partitions (and, on SQLite, in the database files' bytes) and in the log.
func TestSecretNeverStoredOrLogged(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			defer slog.SetDefault(prev)

			e := newEnv(t, b)
			res := e.secret(t, security.SecretOptions{Email: "leak@example.com", Operator: true})
			s := res.Secret
			var responses []string
			send := func(method, path, body string, header ...string) {
				responses = append(responses, string(e.do(t, method, path, body, header...).body))
			}
			token := e.token(t, s)
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q,"Debug":true,"Lifetime":3600}`, s))
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q,"Lifetime":59}`, s))
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q}`, s+"x"))
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"secret":%q}`, s))
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q,"Agent":%q}`, s, s))
			send("POST", "security/tokens/validate", s)
			send("POST", "security/cookies/decode", s)
			send("POST", "security/cookies/validate", s)
			send("GET", "security/users", "", bearer(s)...)
			send("GET", "security/users?Email="+s, "", bearer(token)...)
			send("POST", "security/cookies/generate", "", bearer(token)...)
			if err := security.RevokeSecret(context.Background(), e.store, s); err != nil {
				t.Fatal(err)
			}
			send("POST", "security/tokens/generate", fmt.Sprintf(`{"Secret":%q}`, s))

			for i, r := range responses {
				if strings.Contains(r, s) {
					t.Errorf("response %d holds the secret: %s", i, r)
				}
			}
			if strings.Contains(logs.String(), s) {
				t.Errorf("the log holds the secret:\n%s", logs.String())
			}
			hash := auth.HashSecret(s)
			dump := dumpText(t, e.reg, e.store) + dumpText(t, e.reg, e.otherStore)
			if strings.Contains(dump, s) {
				t.Error("the database holds the secret in clear text")
			}
			if !strings.Contains(dump, hash) {
				t.Error("the dump does not hold the secret's hash: it does not read what it should")
			}
			if dir, ok := strings.CutPrefix(b.URL, "sqlite:"); ok {
				files, _ := filepath.Glob(filepath.Join(dir, "*"))
				found := 0
				for _, f := range files {
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Contains(data, []byte(s)) {
						t.Errorf("%s holds the secret", f)
					}
					if bytes.Contains(data, []byte(hash)) {
						found++
					}
				}
				if found == 0 {
					t.Errorf("no file of %v holds the secret's hash: the files read are not the database", files)
				}
			}
		})
	}
}

// dumpText returns the text of every stored member of every record of every table.
func dumpText(t *testing.T, reg *engine.Registry, st *engine.Store) string {
	t.Helper()
	var b strings.Builder
	for _, r := range reg.Resources() {
		err := st.Stream(context.Background(), r, engine.Query{Fields: r.Fields, Format: engine.FormatJSON}, engine.AllOrganizations(), func(rec engine.Record) error {
			for _, v := range rec {
				fmt.Fprintf(&b, "%v\n", v)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("dump %s: %v", r.Name, err)
		}
	}
	return b.String()
}

// TestCreateAndRevokeSecret checks CreateSecret's reuse of users and organizations, the
// operator flag, and that revoking a secret ends it and the tokens generated with it.
func TestCreateAndRevokeSecret(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			ctx := context.Background()
			first := e.secret(t, security.SecretOptions{Email: "same@example.com"})
			again := e.secret(t, security.SecretOptions{Email: "same@example.com", Operator: true, Days: 1})
			if again.UserIdentifier != first.UserIdentifier || again.OrganizationIdentifier != first.OrganizationIdentifier || again.Secret == first.Secret {
				t.Errorf("a second secret for the same email: %+v, then %+v", first, again)
			}
			if d := again.Expires.Sub(e.clock.Now()); d < 23*3600e9 || d > 25*3600e9 {
				t.Errorf("Days 1: expires in %s", d)
			}
			// The Email finds the user in any case (the users' unique constraint ignores ASCII
			// case), and the user keeps the Email it has.
			cased := e.secret(t, security.SecretOptions{Email: "SAME@Example.com", Days: 1})
			if cased.UserIdentifier != first.UserIdentifier {
				t.Errorf("a secret for SAME@Example.com has user %s, want same@example.com's %s", cased.UserIdentifier, first.UserIdentifier)
			}
			st, _ := e.db.Store(e.partition)
			users := e.reg.MustByName("User")
			if u, err := st.Get(ctx, users, []any{first.UserIdentifier}, nil, engine.AllOrganizations()); err != nil || u.Get(users, "Email") != "same@example.com" {
				t.Errorf("the user after a secret for another case: %v, %v", u, err)
			}
			// The person became an operator; every secret of the user acts as one.
			token := e.token(t, first.Secret)
			var in struct{ Principal struct{ Operator bool } }
			e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "introspect", http.StatusOK).json(t, &in)
			if !in.Principal.Operator {
				t.Error("--operator on an existing person did not make it an operator")
			}
			def := e.secret(t, security.SecretOptions{})
			def2 := e.secret(t, security.SecretOptions{Email: "new@example.com"})
			if def.OrganizationIdentifier != def2.OrganizationIdentifier {
				t.Errorf("secrets without an organization use different ones: %s, %s", def.OrganizationIdentifier, def2.OrganizationIdentifier)
			}
			named := e.secret(t, security.SecretOptions{Email: "named@example.com", Organization: "0195A0C4-0000-7000-8000-000000000001"})
			if named.OrganizationIdentifier != "0195a0c4-0000-7000-8000-000000000001" {
				t.Errorf("named organization: %s", named.OrganizationIdentifier)
			}
			if _, err := security.CreateSecret(ctx, e.store, security.SecretOptions{Organization: "nope"}); err == nil {
				t.Error("an organization that is not a UUID was accepted")
			}

			// Revoking ends the secret and its tokens, at once on this process.
			e.do(t, "GET", "security/users/count", "", bearer(token)...).expect(t, "before", http.StatusOK)
			if err := security.RevokeSecret(ctx, e.store, first.Secret); err != nil {
				t.Fatal(err)
			}
			if err := security.RevokeSecret(ctx, e.store, first.Identifier); err != nil {
				t.Errorf("revoking again, by identifier: %v", err)
			}
			if err := security.RevokeSecret(ctx, e.store, "unknown"); !engine.IsNotFound(err) {
				t.Errorf("revoking an unknown secret: %v", err)
			}
			generate(t, e, fmt.Sprintf(`{"Secret":%q}`, first.Secret)).expect(t, "revoked secret", http.StatusUnauthorized)
			generate(t, e, fmt.Sprintf(`{"Secret":%q}`, again.Secret)).expect(t, "the user's other secret", http.StatusOK)
			e.clock.Advance(auth.MaxRevocationTTL)
			e.do(t, "GET", "security/users/count", "", bearer(token)...).expect(t, "token of a revoked secret", http.StatusUnauthorized)
		})
	}
}
