package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"credo/handlers/security"
	"credo/internal/testenv"
)

// cookieReport is the answer of cookies/validate.
type cookieReport struct {
	Valid                                     bool
	Reason                                    string
	SignatureVerification, ExpiryVerification string
	Cookie                                    *struct{ Identifier, User, Partition, Created, Expiry string }
}

// apiInstant is the API's datetime form for an instant in UTC (decisions §3): at most 7
// fraction digits and the offset +00:00.
var apiInstant = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?\+00:00$`)

func TestCookies(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, _ := e.user(t, "", false)
			var tok struct{ AccessToken string }
			generate(t, e, fmt.Sprintf(`{"Secret":%q,"Lifetime":600}`, res.Secret)).expect(t, "token", http.StatusOK).json(t, &tok)
			token := tok.AccessToken

			r := e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "generate", http.StatusOK)
			var ck struct{ Token string }
			r.json(t, &ck)
			set := r.header.Get("Set-Cookie")
			for _, want := range []string{security.CookieName(e.partition) + "=" + ck.Token, "Path=/;", "HttpOnly", "Secure", "SameSite=Lax", "Expires="} {
				if !strings.Contains(set, want) {
					t.Errorf("Set-Cookie %q lacks %q", set, want)
				}
			}
			cookie := []string{"Cookie", security.CookieName(e.partition) + "=" + ck.Token}

			// The cookie authenticates, as a cookie, and lives no longer than the token.
			var in struct {
				Jwt       *struct{}
				Principal struct{ Credential string }
			}
			e.do(t, "GET", "security/tokens/introspect", "", cookie...).expect(t, "cookie credential", http.StatusOK).json(t, &in)
			if in.Jwt != nil || in.Principal.Credential != "Cookie" {
				t.Errorf("introspect with a cookie: %+v", in)
			}
			var rep cookieReport
			e.do(t, "POST", "security/cookies/validate", ck.Token).expect(t, "validate", http.StatusOK).json(t, &rep)
			if !rep.Valid || rep.SignatureVerification != "Passed" || rep.ExpiryVerification != "Not Expired (9 minutes remaining)" || rep.Cookie == nil || rep.Cookie.User != res.UserIdentifier {
				t.Errorf("validate: %+v", rep)
			}
			if rep.Cookie != nil && (!apiInstant.MatchString(rep.Cookie.Created) || !apiInstant.MatchString(rep.Cookie.Expiry)) {
				t.Errorf("validate answers the cookie's instants as %q and %q, not in the API's datetime form", rep.Cookie.Created, rep.Cookie.Expiry)
			}
			rep = cookieReport{}
			e.do(t, "POST", "security/cookies/validate?decode=false", "", cookie...).expect(t, "validate the request's cookie", http.StatusOK).json(t, &rep)
			if !rep.Valid || rep.Cookie != nil {
				t.Errorf("validate decode=false: %+v", rep)
			}

			// decode: an object by default, the JSON text with decode=false.
			var dec struct{ Cookie json.RawMessage }
			e.do(t, "POST", "security/cookies/decode", ck.Token).expect(t, "decode", http.StatusOK).json(t, &dec)
			if !strings.HasPrefix(string(dec.Cookie), `{"Identifier":`) {
				t.Errorf("decode: %s", dec.Cookie)
			}
			var decoded struct{ Created, Expiry string }
			if err := json.Unmarshal(dec.Cookie, &decoded); err != nil || !apiInstant.MatchString(decoded.Created) || !apiInstant.MatchString(decoded.Expiry) {
				t.Errorf("decode answers the cookie's instants as %q and %q (%v), not in the API's datetime form", decoded.Created, decoded.Expiry, err)
			}
			e.do(t, "POST", "security/cookies/decode?decode=false&decrypt=true", fmt.Sprintf("%q", ck.Token)).expect(t, "decode=false", http.StatusOK).json(t, &dec)
			if !strings.HasPrefix(string(dec.Cookie), `"{\"Identifier\":`) {
				t.Errorf("decode=false: %s", dec.Cookie)
			}
			for _, q := range []string{"?decode=maybe", "?bogus=1", "?decode=true&decode=false"} {
				e.do(t, "POST", "security/cookies/decode"+q, ck.Token).expect(t, "decode"+q, http.StatusBadRequest)
			}
			e.do(t, "POST", "security/cookies/decode", "").expect(t, "no cookie", http.StatusBadRequest)
			e.do(t, "POST", "security/cookies/decode", "not base64!").expect(t, "not a cookie", http.StatusBadRequest)

			// An altered cookie is refused everywhere.
			alt := []byte(ck.Token)
			alt[len(alt)/2] ^= 1
			altered := string(alt)
			e.do(t, "POST", "security/cookies/decode", altered).expect(t, "decode altered", http.StatusBadRequest)
			rep = cookieReport{}
			e.do(t, "POST", "security/cookies/validate", altered).expect(t, "validate altered", http.StatusOK).json(t, &rep)
			if rep.Valid || rep.SignatureVerification != "Failed" {
				t.Errorf("validate altered: %+v", rep)
			}
			e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+altered).expect(t, "altered credential", http.StatusUnauthorized)

			// Another partition's cookie is not valid here.
			e.doAt(t, e.ts, e.other, "POST", "security/cookies/validate", ck.Token).expect(t, "other partition", http.StatusOK).json(t, &rep)
			if rep.Valid {
				t.Errorf("another partition validated the cookie: %+v", rep)
			}

			// Revoking the cookie by its Identifier ends it.
			r = e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "second cookie", http.StatusOK)
			r.json(t, &ck)
			rep = cookieReport{}
			e.do(t, "POST", "security/cookies/decode", ck.Token).expect(t, "decode", http.StatusOK)
			e.do(t, "POST", "security/cookies/validate", ck.Token).json(t, &rep)
			e.do(t, "DELETE", "security/tokens/"+rep.Cookie.Identifier, "", bearer(token)...).expect(t, "revoke cookie", http.StatusOK)
			e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+ck.Token).expect(t, "revoked cookie", http.StatusUnauthorized)
			e.do(t, "POST", "security/cookies/validate", ck.Token).json(t, &rep)
			if rep.Valid || rep.Reason != "cookie revoked" {
				t.Errorf("validate revoked: %+v", rep)
			}

			// The first cookie expires with its token.
			e.clock.Advance(10*time.Minute + time.Second)
			rep = cookieReport{}
			e.do(t, "POST", "security/cookies/validate", "", cookie...).json(t, &rep)
			if rep.Valid || rep.ExpiryVerification != "Expired" {
				t.Errorf("validate expired: %+v", rep)
			}
			e.do(t, "GET", "security/tokens/introspect", "", cookie...).expect(t, "expired cookie", http.StatusUnauthorized)
		})
	}
}

func TestEncryptedCookies(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b, withEncryptedCookies)
			_, token := e.user(t, "", false)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "generate", http.StatusOK).json(t, &ck)
			r := e.do(t, "POST", "security/cookies/decode", ck.Token).expect(t, "decode without decrypt", http.StatusBadRequest)
			if !strings.Contains(r.detail(t), "encrypted") {
				t.Errorf("decode without decrypt: %s", r.body)
			}
			e.do(t, "POST", "security/cookies/decode?decrypt=true", ck.Token).expect(t, "decode with decrypt", http.StatusOK)
			var rep cookieReport
			e.do(t, "POST", "security/cookies/validate", ck.Token).expect(t, "validate", http.StatusOK).json(t, &rep)
			if !rep.Valid {
				t.Errorf("validate: %+v", rep)
			}
			e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+ck.Token).expect(t, "credential", http.StatusOK)
		})
	}
}
