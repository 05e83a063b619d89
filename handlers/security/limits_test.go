package security_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
	"credo/legacy"
)

// tooMany asserts a 429 problem document with a Retry-After of want seconds.
func (r response) tooMany(t *testing.T, what, want string) {
	t.Helper()
	r.expect(t, what, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != want {
		t.Errorf("%s: Retry-After %q, want %q", what, got, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" || !strings.Contains(r.detail(t), "Too many") {
		t.Errorf("%s: %s %s, want a problem document", what, ct, r.body)
	}
}

// TestAbuseLimits: tokens/generate is limited per client address (from X-Forwarded-For only
// behind a trusted proxy) and per secret, cookies/generate per address, version-1 secret
// authentication per address and secret, the partner callback per address (and its body to
// 64 KiB), gradebook exports per caller; past a limit: 429, Retry-After, a problem document;
// the bucket refills with time (injected clock). Failed attempts count like good ones.
func TestAbuseLimits(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b, withLimits("credentials=5/m,secret=3/m,v1secret=4/m,callback=2/m,export=2/m", "127.0.0.1"))
			from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
			gen := func(secret string, header ...string) response {
				body, _ := json.Marshal(map[string]any{"Secret": secret})
				return e.do(t, "POST", "security/tokens/generate", string(body), header...)
			}
			// Per address: five attempts, good or bad, then 429 for that address only.
			good := e.secret(t, security.SecretOptions{})
			readers := e.group(t, good.OrganizationIdentifier, "Registration readers")
			e.member(t, good.UserIdentifier, readers, good.OrganizationIdentifier)
			e.grant(t, readers, []string{legacy.RegistrationsObject}, auth.Read) // for version 1's count
			gen(good.Secret, from("198.51.100.1")...).expect(t, "generate", http.StatusOK)
			for i := 0; i < 4; i++ {
				gen("guess-"+uuid.NewString(), from("198.51.100.1")...).expect(t, "bad secret", http.StatusUnauthorized)
			}
			gen(good.Secret, from("198.51.100.1")...).tooMany(t, "6th attempt from one address", "12")
			gen("guess", from("198.51.100.2")...).expect(t, "another address", http.StatusUnauthorized)
			e.clock.Advance(12 * time.Second)
			gen(good.Secret, from("198.51.100.1")...).expect(t, "after Retry-After", http.StatusOK)

			// Per secret: three tokens, whatever the address, then 429.
			s := e.secret(t, security.SecretOptions{Email: "limited@example.com"})
			for i := 0; i < 3; i++ {
				gen(s.Secret, from("203.0.113."+string(rune('1'+i)))...).expect(t, "generate", http.StatusOK)
			}
			gen(s.Secret, from("203.0.113.9")...).tooMany(t, "4th token of one secret", "20")

			// cookies/generate shares the per-address limit.
			tok := e.token(t, good.Secret) // from 127.0.0.1 itself: not a forwarded address
			for i := 0; i < 5; i++ {
				e.do(t, "POST", "security/cookies/generate", "", append(bearer(tok), from("192.0.2.7")...)...).expect(t, "cookie", http.StatusOK)
			}
			e.do(t, "POST", "security/cookies/generate", "", append(bearer(tok), from("192.0.2.7")...)...).tooMany(t, "6th credential request", "12")

			// Version-1 secret authentication: per secret and per address.
			for i := 0; i < 4; i++ {
				e.do(t, "POST", "/api/registrations/count", "{}", append(bearer(good.Secret), from("192.0.2.50")...)...).expect(t, "v1", http.StatusOK)
			}
			e.do(t, "POST", "/api/registrations/count", "{}", append(bearer(good.Secret), from("192.0.2.51")...)...).tooMany(t, "v1 secret limit", "15")
			e.do(t, "POST", "/api/registrations/count", "{}", bearer(tok)...).expect(t, "v1 with a token is not limited", http.StatusOK)

			// The anonymous partner callback: per address, and 64 KiB at most.
			cb := "/api/integration/partner/callback/" + uuid.NewString() + "/" + uuid.NewString()
			e.do(t, "POST", cb, strings.Repeat("x", legacy.MaxCallbackBytes+1), append(from("192.0.2.90"), "Content-Type", "text/plain")...).
				expect(t, "callback over 64 KiB", http.StatusRequestEntityTooLarge)
			e.do(t, "POST", cb, `{"cmi.core.lesson_status":"incomplete"}`, append(from("192.0.2.90"), "Content-Type", "application/json")...).expect(t, "callback", http.StatusOK)
			e.do(t, "POST", cb, `{}`, append(from("192.0.2.90"), "Content-Type", "application/json")...).tooMany(t, "3rd callback", "30")

			// Gradebook exports per caller.
			_, opToken := e.user(t, "", true)
			for i := 0; i < 2; i++ {
				e.do(t, "GET", "progress/gradebooks/export", "", bearer(opToken)...).expect(t, "export", http.StatusOK)
			}
			e.do(t, "GET", "progress/gradebooks/export", "", bearer(opToken)...).tooMany(t, "3rd export", "30")
		})
	}
}
