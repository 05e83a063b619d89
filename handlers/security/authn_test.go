package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/route"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestPublicRoutesAnswerWithoutToken sends every public route a valid request without a
// credential. The cases are keyed by path and every public route must have one, so a new
// public route cannot go untested.
func TestPublicRoutesAnswerWithoutToken(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, token := e.user(t, "", false)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			bodies := map[string]string{
				"security/tokens/generate":  fmt.Sprintf(`{"Secret":%q}`, res.Secret),
				"security/tokens/validate":  token,
				"security/cookies/decode":   ck.Token,
				"security/cookies/validate": ck.Token,
				"platform/health":           "",
				"platform/version":          "",
				"platform/formats/time":     "",
				"/api/events/classes":       "",
				"/api/events/scrap-paper":   "",
				"/api/integration/partner/callback/{activityId}/{learnerId}": `{"cmi.core.lesson_status":"incomplete"}`,
			}
			queries := map[string]string{"platform/formats/time": "?value=2024-03-10T14:30:00-05:00",
				"/api/events/classes": "?organization=" + res.OrganizationIdentifier, "/api/events/scrap-paper": "?id=x"}
			public := 0
			for _, ep := range e.srv.Endpoints() {
				if ep.Access != route.Public {
					continue
				}
				public++
				body, ok := bodies[ep.Path]
				if !ok {
					t.Errorf("%s is public but has no case here", epName(ep))
					continue
				}
				e.do(t, ep.Method, concrete(ep.Path)+queries[ep.Path], body).expect(t, epName(ep), http.StatusOK)
			}
			if public != len(bodies) {
				t.Errorf("%d public routes, want %d", public, len(bodies))
			}
		})
	}
}

// TestRoutesRefuseMissingAndBadTokens sends every non-public route (generated from the
// descriptors, plus the modules and version 1) no token, a tampered one, an expired one,
// another partition's and a revoked one: each is a 401 with WWW-Authenticate. A generated
// token works on every route until it expires.
func TestRoutesRefuseMissingAndBadTokens(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			op, good := e.user(t, "", true)

			parts := strings.Split(good, ".")
			sig := []byte(parts[2])
			sig[len(sig)/2] ^= 1 // one character: still base64url, no longer the signature
			tampered := parts[0] + "." + parts[1] + "." + string(sig)

			old := func() time.Time { return e.clock.Now().Add(-48 * time.Hour) }
			forger, err := auth.NewTokens(security.DeriveKey(testKey, e.partition), old, security.DefaultAudience, security.DefaultIssuer)
			if err != nil {
				t.Fatal(err)
			}
			expired, _, err := forger.Issue(auth.Claims{Subject: op.UserIdentifier, Organization: op.OrganizationIdentifier, Partition: e.partition}, 3600)
			if err != nil {
				t.Fatal(err)
			}
			other := secretIn(t, e.otherStore, security.SecretOptions{Email: "other@example.com", Operator: true})
			otherToken := e.tokenAt(t, e.ts, e.other, other.Secret)
			e.doAt(t, e.ts, e.other, "GET", "security/tokens/introspect", "", bearer(otherToken)...).expect(t, "other partition's token at home", http.StatusOK)
			// A token forged with the other partition's key but claiming this partition.
			otherForger, _ := auth.NewTokens(security.DeriveKey(testKey, e.other), nil, security.DefaultAudience, security.DefaultIssuer)
			crossKey, _, _ := otherForger.Issue(auth.Claims{Subject: op.UserIdentifier, Organization: op.OrganizationIdentifier, Partition: e.partition}, 3600)

			revoked := e.token(t, op.Secret)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(revoked)...).expect(t, "before revocation", http.StatusOK)
			e.do(t, "DELETE", "security/tokens/"+jti(t, revoked), "", bearer(revoked)...).expect(t, "revoke", http.StatusOK)

			creds := []struct {
				name   string
				header []string
			}{
				{name: "none"},
				{name: "not bearer", header: []string{"Authorization", "Basic " + good}},
				{name: "tampered", header: bearer(tampered)},
				{name: "expired", header: bearer(expired)},
				{name: "other partition", header: bearer(otherToken)},
				{name: "other partition's key", header: bearer(crossKey)},
				{name: "revoked", header: bearer(revoked)},
				{name: "bad cookie", header: []string{"Cookie", security.CookieName(e.partition) + "=AQID"}},
			}
			n := 0
			for _, ep := range e.srv.Endpoints() {
				if ep.Access == route.Public {
					continue
				}
				n++
				path := concrete(ep.Path)
				for _, c := range creds {
					res := e.do(t, ep.Method, path, "", c.header...).expect(t, epName(ep)+" with "+c.name, http.StatusUnauthorized)
					if !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("%s with %s: WWW-Authenticate %q", epName(ep), c.name, res.header.Get("WWW-Authenticate"))
					}
				}
				if res := e.do(t, ep.Method, path, "", bearer(good)...); res.status == http.StatusUnauthorized || res.status == http.StatusForbidden {
					t.Errorf("%s with a generated operator token: %d %s", epName(ep), res.status, res.body)
				}
			}
			if n < 60 {
				t.Errorf("only %d non-public routes; the descriptors alone give more", n)
			}

			// A token works until its expiry (plus the verifier's leeway), then is refused.
			short := generate(t, e, fmt.Sprintf(`{"Secret":%q,"Lifetime":60}`, op.Secret)).expect(t, "short", http.StatusOK)
			var tok struct{ AccessToken string }
			short.json(t, &tok)
			e.clock.Advance(59 * time.Second)
			e.do(t, "GET", "security/users/count", "", bearer(tok.AccessToken)...).expect(t, "before expiry", http.StatusOK)
			e.clock.Advance(time.Second + auth.TokenLeeway + time.Second)
			res := e.do(t, "GET", "security/users/count", "", bearer(tok.AccessToken)...).expect(t, "after expiry", http.StatusUnauthorized)
			if !strings.Contains(res.detail(t), "expired") {
				t.Errorf("expired token: Detail %q does not say so", res.detail(t))
			}
		})
	}
}

func generate(t *testing.T, e *env, body string) response {
	t.Helper()
	return e.do(t, "POST", "security/tokens/generate", body)
}

// jti returns a token's jti, read from its payload.
func jti(t *testing.T, token string) string {
	t.Helper()
	payload := strings.Split(token, ".")[1]
	var c struct{ Jti string }
	b, err := decodeSegment(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Jti == "" {
		t.Fatalf("token payload %s: %v", b, err)
	}
	return c.Jti
}

// TestLifetime checks the bounds of Lifetime and the answer's ExpiresIn and Lifetime text.
func TestLifetime(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, _ := e.user(t, "", false)
			cases := []struct {
				lifetime string
				status   int
				text     string
			}{
				{lifetime: "59", status: http.StatusBadRequest},
				{lifetime: "31536001", status: http.StatusBadRequest},
				{lifetime: "0", status: http.StatusBadRequest},
				{lifetime: "-60", status: http.StatusBadRequest},
				{lifetime: "60", status: http.StatusOK, text: "60 seconds (~1 minute)"},
				{lifetime: "3600", status: http.StatusOK, text: "3,600 seconds (~1 hour)"},
				{lifetime: "2592000", status: http.StatusOK, text: "2,592,000 seconds (~4 weeks)"},
				{lifetime: "31536000", status: http.StatusOK, text: "31,536,000 seconds (~52 weeks)"},
				{lifetime: "null", status: http.StatusOK, text: "86,400 seconds (~1 day)"},
			}
			for _, c := range cases {
				r := generate(t, e, fmt.Sprintf(`{"Secret":%q,"Lifetime":%s}`, res.Secret, c.lifetime)).expect(t, "Lifetime "+c.lifetime, c.status)
				if c.status != http.StatusOK {
					var p struct{ Errors map[string][]string }
					r.json(t, &p)
					if len(p.Errors["Lifetime"]) == 0 {
						t.Errorf("Lifetime %s: problem does not name Lifetime: %s", c.lifetime, r.body)
					}
					continue
				}
				var out struct {
					AccessToken, TokenType, Lifetime string
					ExpiresIn                        int
				}
				r.json(t, &out)
				want := 86400
				if c.lifetime != "null" {
					fmt.Sscan(c.lifetime, &want)
				}
				if out.ExpiresIn != want || out.Lifetime != c.text || out.TokenType != "Bearer" || out.AccessToken == "" {
					t.Errorf("Lifetime %s: %s", c.lifetime, r.body)
				}
				var claims struct{ Exp, Iat, Nbf int64 }
				b, _ := decodeSegment(strings.Split(out.AccessToken, ".")[1])
				_ = json.Unmarshal(b, &claims)
				if claims.Exp-claims.Iat != int64(want)+60 || claims.Nbf != claims.Iat {
					t.Errorf("Lifetime %s: exp-iat %d, want the lifetime plus 60 s of clock skew", c.lifetime, claims.Exp-claims.Iat)
				}
			}
		})
	}
}

// TestGenerateBodyProblemsTogether: a tokens/generate body's problems come in one 400 naming
// them all (unknown members, wrong types, text problems, then the checks of the members that
// decoded), each worded as alone, and a member that did not decode is not checked again.
func TestGenerateBodyProblemsTogether(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			r := generate(t, e, `{"Bogus":1,"secret":"x","Lifetime":"1h","Debug":"yes","Agent":"x","Subject":5,"Organization":"a\u0000"}`).
				expect(t, "problems", http.StatusBadRequest)
			var p struct{ Errors map[string][]string }
			r.json(t, &p)
			members := "Debug, Secret, Lifetime, Organization, Agent, Subject"
			want := map[string][]string{
				"Agent":        {"Agent must be a UUID"},
				"Bogus":        {"Bogus is not a member; the members are " + members},
				"Debug":        {"Debug must be a JSON boolean"},
				"Lifetime":     {"Lifetime must be a JSON integer"},
				"Organization": {"Organization contains U+0000 (NUL), which cannot be stored"},
				"Subject":      {"Subject must be a JSON string"},
				"secret":       {"secret is not a member; the members are " + members},
			}
			if fmt.Sprint(p.Errors) != fmt.Sprint(want) {
				t.Errorf("Errors\n got %v\nwant %v", p.Errors, want)
			}
			// Lifetime out of range and both Agent and Subject: the member checks come together.
			r = generate(t, e, fmt.Sprintf(`{"Lifetime":1,"Agent":%q,"Subject":%q}`, uuid.NewString(), uuid.NewString())).
				expect(t, "checks", http.StatusBadRequest)
			var q struct{ Errors map[string][]string }
			r.json(t, &q)
			if len(q.Errors) != 2 || len(q.Errors["Lifetime"]) != 1 || len(q.Errors["Subject"]) != 1 {
				t.Errorf("Errors %v, want one problem for Lifetime and one for Subject", q.Errors)
			}
		})
	}
}

// TestGenerateRefusals covers the body, secret and operator checks of tokens/generate.
func TestGenerateRefusals(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			plain, _ := e.user(t, "", false)
			op, _ := e.user(t, "", true)
			revokedSecret, _ := e.user(t, "", false)
			if err := security.RevokeSecret(t.Context(), e.store, revokedSecret.Secret); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name, body string
				status     int
				detail     string
				member     string
			}{
				{name: "no body", body: "", status: http.StatusUnauthorized, detail: "no secret"},
				{name: "unknown secret", body: `{"Secret":"nope"}`, status: http.StatusUnauthorized, detail: "unknown secret"},
				{name: "revoked secret", body: fmt.Sprintf(`{"Secret":%q}`, revokedSecret.Secret), status: http.StatusUnauthorized, detail: "revoked"},
				{name: "unknown member", body: fmt.Sprintf(`{"Secret":%q,"Bogus":1}`, plain.Secret), status: http.StatusBadRequest, member: "Bogus"},
				{name: "wrong case", body: fmt.Sprintf(`{"secret":%q}`, plain.Secret), status: http.StatusBadRequest, member: "secret"},
				{name: "wrong type", body: fmt.Sprintf(`{"Secret":%q,"Lifetime":"1h"}`, plain.Secret), status: http.StatusBadRequest, member: "Lifetime"},
				{name: "bad uuid", body: fmt.Sprintf(`{"Secret":%q,"Subject":"x"}`, op.Secret), status: http.StatusBadRequest, member: "Subject"},
				{name: "agent and subject", body: fmt.Sprintf(`{"Secret":%q,"Agent":%q,"Subject":%q}`, op.Secret, plain.UserIdentifier, plain.UserIdentifier), status: http.StatusBadRequest, member: "Subject"},
				{name: "non-operator organization", body: fmt.Sprintf(`{"Secret":%q,"Organization":%q}`, plain.Secret, plain.OrganizationIdentifier), status: http.StatusForbidden},
				{name: "non-operator subject", body: fmt.Sprintf(`{"Secret":%q,"Subject":%q}`, plain.Secret, op.UserIdentifier), status: http.StatusForbidden},
				{name: "non-operator agent", body: fmt.Sprintf(`{"Secret":%q,"Agent":%q}`, plain.Secret, op.UserIdentifier), status: http.StatusForbidden},
				{name: "unknown organization", body: fmt.Sprintf(`{"Secret":%q,"Organization":%q}`, op.Secret, uuid.NewString()), status: http.StatusBadRequest, member: "Organization"},
				{name: "unknown subject", body: fmt.Sprintf(`{"Secret":%q,"Subject":%q}`, op.Secret, uuid.NewString()), status: http.StatusBadRequest, member: "Subject"},
			}
			for _, c := range cases {
				r := generate(t, e, c.body).expect(t, c.name, c.status)
				if c.detail != "" && !strings.Contains(r.detail(t), c.detail) {
					t.Errorf("%s: Detail %q does not contain %q", c.name, r.detail(t), c.detail)
				}
				if c.member != "" {
					var p struct{ Errors map[string][]string }
					r.json(t, &p)
					if len(p.Errors[c.member]) == 0 {
						t.Errorf("%s: problem does not name %s: %s", c.name, c.member, r.body)
					}
				}
			}

			// An operator's token for a subject acts as that user, with its rights.
			var out struct{ AccessToken string }
			generate(t, e, fmt.Sprintf(`{"Secret":%q,"Subject":%q,"Debug":true}`, op.Secret, plain.UserIdentifier)).expect(t, "subject", http.StatusOK).json(t, &out)
			var in struct {
				Jwt       struct{ Subject string }
				Principal struct {
					Operator     bool
					Organization struct{ Identifier string }
				}
			}
			e.do(t, "GET", "security/tokens/introspect", "", bearer(out.AccessToken)...).expect(t, "introspect subject", http.StatusOK).json(t, &in)
			if in.Jwt.Subject != plain.UserIdentifier || in.Principal.Operator || in.Principal.Organization.Identifier != plain.OrganizationIdentifier {
				t.Errorf("subject token: %+v", in)
			}
			e.do(t, "GET", "security/users/count", "", bearer(out.AccessToken)...).expect(t, "subject's rights", http.StatusForbidden)

			// An operator acting for another organization stays an operator there.
			other := newOrg(t, e)
			generate(t, e, fmt.Sprintf(`{"Secret":%q,"Organization":%q}`, op.Secret, other)).expect(t, "organization", http.StatusOK).json(t, &out)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(out.AccessToken)...).expect(t, "introspect organization", http.StatusOK).json(t, &in)
			if in.Principal.Organization.Identifier != other || !in.Principal.Operator {
				t.Errorf("organization token: %+v", in)
			}

			// A secret expires 90 days after its creation; its tokens live their lifetime.
			long := e.token(t, plain.Secret)
			e.clock.Advance(security.DefaultSecretDays*24*time.Hour + time.Minute) // CreateSecret stamps real time, a little after the clock
			r := generate(t, e, fmt.Sprintf(`{"Secret":%q}`, plain.Secret)).expect(t, "expired secret", http.StatusUnauthorized)
			if !strings.Contains(r.detail(t), "expired") {
				t.Errorf("expired secret: Detail %q", r.detail(t))
			}
			var yearLong struct{ AccessToken string }
			e.clock.Advance(-security.DefaultSecretDays * 24 * time.Hour)
			generate(t, e, fmt.Sprintf(`{"Secret":%q,"Lifetime":31536000}`, plain.Secret)).expect(t, "year", http.StatusOK).json(t, &yearLong)
			e.clock.Advance(security.DefaultSecretDays * 24 * time.Hour)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(yearLong.AccessToken)...).expect(t, "token outlives its secret", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(long)...).expect(t, "day token after 90 days", http.StatusUnauthorized)
		})
	}
}

// TestCredentialsOfUnknownSecretsAreRefused: a token or cookie signed with the partition's
// key (another environment sharing it, say) whose secret_id is missing, names no stored
// secret, or names another partition's secret is refused with 401, as a revoked secret's
// credentials are, counted and logged as every refusal: every credential credo issues names
// the stored secret it descends from, and secrets are never deleted.
func TestCredentialsOfUnknownSecretsAreRefused(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			op, good := e.user(t, "", true)
			other := secretIn(t, e.otherStore, security.SecretOptions{Email: "other@example.com", Operator: true})
			key := security.DeriveKey(testKey, e.partition)
			forger, err := auth.NewTokens(key, e.clock.Now, security.DefaultAudience, security.DefaultIssuer)
			if err != nil {
				t.Fatal(err)
			}
			cookies, err := auth.NewCookies(key, nil, e.clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			e.do(t, "GET", "security/tokens/introspect", "", bearer(good)...).expect(t, "a generated token", http.StatusOK)
			for _, tc := range []struct{ name, secret, detail string }{
				{name: "no secret", detail: "names no client secret"},
				{name: "an unknown secret", secret: uuid.NewString(), detail: "is unknown"},
				{name: "another partition's secret", secret: other.Identifier, detail: "is unknown"},
			} {
				tok, _, err := forger.Issue(auth.Claims{Subject: op.UserIdentifier, Organization: op.OrganizationIdentifier,
					Partition: e.partition, Secret: tc.secret}, 3600)
				if err != nil {
					t.Fatal(err)
				}
				ck, _, err := cookies.Encode(auth.CookiePayload{User: op.UserIdentifier, Organization: op.OrganizationIdentifier,
					Partition: e.partition, Secret: tc.secret, Expiry: e.clock.Now().Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				before := e.authFailures(t)
				for _, use := range []struct {
					what   string
					header []string
				}{{"token", bearer(tok)}, {"cookie", []string{"Cookie", security.CookieName(e.partition) + "=" + ck}}} {
					res := e.do(t, "GET", "security/users/count", "", use.header...).expect(t, tc.name+": "+use.what, http.StatusUnauthorized)
					if d := res.detail(t); !strings.Contains(d, tc.detail) {
						t.Errorf("%s: %s: Detail %q, want it to say %q", tc.name, use.what, d, tc.detail)
					}
				}
				after := e.authFailures(t)
				if after["bearer"]-before["bearer"] != 1 || after["cookie"]-before["cookie"] != 1 {
					t.Errorf("%s: failures counted %v, then %v: want one more bearer and one more cookie", tc.name, before, after)
				}
			}
		})
	}
}
