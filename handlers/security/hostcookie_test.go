package security_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestSessionCookieIsHostPrefixed (docs/security.md, "Cookies"): cookies/generate sets
// __Host-credo_session-<partition> with Path=/, Secure, HttpOnly, SameSite=Lax and no Domain,
// so that no page of a sibling subdomain can plant one (cookie tossing). A browser holding
// both partitions' cookies sends both with every request to the host, and each partition
// takes only its own; a cookie of one partition sent under the other's name is a 401 saying
// it is another partition's; the unprefixed name of earlier releases (credo_session), which
// any subdomain can set, is a 401 however genuine its value. Version 1 (/api) takes no cookie,
// as before.
func TestSessionCookieIsHostPrefixed(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			home, homeToken := e.user(t, "", false)
			away := secretIn(t, e.otherStore, security.SecretOptions{Email: uuid.NewString()[:8] + "@example.com"})
			awayToken := e.tokenAt(t, e.ts, e.other, away.Secret)
			users := map[string]string{e.partition: home.UserIdentifier, e.other: away.UserIdentifier}

			// The jar plays the browser: it keeps Secure cookies only for https, by host and path.
			jar, err := cookiejar.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			site := &url.URL{Scheme: "https", Host: strings.TrimPrefix(e.ts.URL, "http://"), Path: "/"}
			at := func(partition, path string) *url.URL { return site.JoinPath("v2", partition, path) }
			values := map[string]string{}
			for partition, token := range map[string]string{e.partition: homeToken, e.other: awayToken} {
				r := e.doAt(t, e.ts, partition, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "generate in "+partition, http.StatusOK)
				var body struct{ Token string }
				r.json(t, &body)
				set := (&http.Response{Header: r.header}).Cookies()
				if len(set) != 1 {
					t.Fatalf("%s: Set-Cookie %q, want one cookie", partition, r.header.Values("Set-Cookie"))
				}
				c, raw := set[0], r.header.Get("Set-Cookie")
				if c.Name != "__Host-credo_session-"+partition || c.Name != security.CookieName(partition) || c.Value != body.Token ||
					c.Path != "/" || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Domain != "" ||
					strings.Contains(strings.ToLower(raw), "domain=") {
					t.Errorf("%s: Set-Cookie %q is not a __Host- session cookie of the partition (Path=/, Secure, HttpOnly, SameSite=Lax, no Domain)", partition, raw)
				}
				values[partition] = c.Value
				jar.SetCookies(at(partition, "security/cookies/generate"), set)
			}

			// Both cookies go with every request to the host; each partition takes its own.
			for partition, user := range users {
				sent := jar.Cookies(at(partition, "security/tokens/introspect"))
				if len(sent) != 2 {
					t.Fatalf("the jar sends %d cookies to %s, want both partitions'", len(sent), partition)
				}
				var pairs []string
				for _, c := range sent {
					pairs = append(pairs, c.Name+"="+c.Value)
				}
				var in struct {
					Principal struct {
						User       struct{ Identifier string }
						Partition  string
						Credential string
					}
				}
				e.doAt(t, e.ts, partition, "GET", "security/tokens/introspect", "", "Cookie", strings.Join(pairs, "; ")).
					expect(t, "both cookies, in "+partition, http.StatusOK).json(t, &in)
				if in.Principal.User.Identifier != user || in.Principal.Partition != partition || in.Principal.Credential != "Cookie" {
					t.Errorf("%s authenticated %+v with both cookies, want its own user %s by cookie", partition, in.Principal, user)
				}
			}

			before := e.authFailures(t)
			for _, c := range []struct {
				name, partition, cookie, detail string
			}{
				{"the other partition's cookie under its own name", e.other, security.CookieName(e.partition) + "=" + values[e.partition],
					"no credential"},
				{"a cookie of another partition under this partition's name", e.other, security.CookieName(e.other) + "=" + values[e.partition],
					"the cookie signature is invalid in partition " + e.other + ": the cookie says it is of another partition"},
				{"a cookie of another partition under this partition's name (the other way)", e.partition, security.CookieName(e.partition) + "=" + values[e.other],
					"the cookie signature is invalid in partition " + e.partition + ": the cookie says it is of another partition"},
				{"the old name", e.partition, auth.DefaultCookieName + "=" + values[e.partition],
					"a session cookie named credo_session is no longer accepted"},
				{"the old name, as a browser upgraded from a release before sends it", e.partition,
					auth.DefaultCookieName + "=" + values[e.partition] + "; " + security.CookieName(e.other) + "=" + values[e.other],
					"a session cookie named credo_session is no longer accepted"},
			} {
				d := e.doAt(t, e.ts, c.partition, "GET", "security/tokens/introspect", "", "Cookie", c.cookie).expect(t, c.name, http.StatusUnauthorized).detail(t)
				if !strings.Contains(d, c.detail) {
					t.Errorf("%s: Detail %q, want it to say %q", c.name, d, c.detail)
				}
			}
			// Every refusal that carried a cookie of the partition's name or the old name is
			// counted as a cookie's; another partition's cookie is no credential there.
			if after := e.authFailures(t); after["cookie"]-before["cookie"] != 4 || after["none"]-before["none"] != 1 {
				t.Errorf("refusals counted as cookie %v and none %v, want 4 and 1", after["cookie"]-before["cookie"], after["none"]-before["none"])
			}

			// Version 1 takes no cookie (bearer tokens and client secrets only), though the
			// browser now sends the cookie there too (Path=/).
			e.do(t, "POST", "/api/registrations/count", "{}", "Cookie", security.CookieName(e.partition)+"="+values[e.partition]).
				expect(t, "version 1 with the session cookie", http.StatusUnauthorized)

			// The cookie operations read the partition's own cookie too.
			var rep struct {
				Valid  bool
				Reason string
			}
			e.doAt(t, e.ts, e.other, "POST", "security/cookies/validate", "", "Cookie", security.CookieName(e.other)+"="+values[e.partition]).
				expect(t, "validate another partition's cookie", http.StatusOK).json(t, &rep)
			if rep.Valid || !strings.Contains(rep.Reason, "the cookie says it is of another partition") {
				t.Errorf("cookies/validate of another partition's cookie: %+v", rep)
			}
			e.doAt(t, e.ts, e.other, "POST", "security/cookies/validate", "", "Cookie", auth.DefaultCookieName+"="+values[e.partition]).
				expect(t, "validate with only the old name", http.StatusBadRequest)
		})
	}
}
