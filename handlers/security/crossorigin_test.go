package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"credo/auth"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestCookieWritesOnlyFromTheSameOrigin (docs/security.md, "Cookies"): a session cookie is
// sent by the browser with every request to the API's site, whichever page made it, so a
// write it authenticates is taken only when the browser says the request came from the API's
// own origin. A POST, PUT, PATCH or DELETE authenticated by a cookie and marked cross-origin
// (Sec-Fetch-Site other than same-origin or none, or without it an Origin of another host)
// is a 403 that says why, and writes nothing; a Blob body from another page carries no
// Content-Type, which the API takes as JSON, so the content type is no defence. Reads with a
// cookie, writes of the same origin or of a client that sends neither header (curl, a
// server), and writes with a bearer token from any origin go on as before. The refusals are
// counted in credo_auth_failures_total with reason cross_origin.
func TestCookieWritesOnlyFromTheSameOrigin(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, token := e.user(t, "", false)
			g := e.group(t, res.OrganizationIdentifier, "Commenters "+res.UserIdentifier[:8])
			e.member(t, res.UserIdentifier, g, res.OrganizationIdentifier)
			e.grant(t, g, []string{"security/users-comments"}, auth.Read, auth.Create, auth.Write, auth.Delete)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			cookie := []string{"Cookie", security.CookieName(e.partition) + "=" + ck.Token}
			comment := fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"forged?"}`,
				res.UserIdentifier, res.OrganizationIdentifier, res.UserIdentifier)
			count := func() int {
				var c struct{ Count int }
				e.do(t, "GET", "security/users-comments/count", "", bearer(token)...).expect(t, "count", http.StatusOK).json(t, &c)
				return c.Count
			}
			var made map[string]any
			e.do(t, "POST", "security/users-comments", comment, append(cookie, "Content-Type", "application/json")...).
				expect(t, "a cookie write from a client that sends no origin", http.StatusCreated).json(t, &made)
			item := "security/users-comments/" + made["CommentIdentifier"].(string)
			host := strings.TrimPrefix(e.ts.URL, "http://")

			// Refused: every unsafe method, whatever the browser's marks say of another origin.
			plain := e.unvalidated(t) // a Blob body sends no Content-Type, which no document client does
			before := count()
			var in struct {
				Jwt struct{ Identifier string }
			}
			e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "introspect", http.StatusOK).json(t, &in)
			for _, c := range []struct {
				name, method, path, body string
				header                   []string
			}{
				{"cross-site POST without a Content-Type", "POST", "security/users-comments", comment, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
				{"cross-site revocation of the cookie's token", "DELETE", "security/tokens/" + in.Jwt.Identifier, "", []string{"Sec-Fetch-Site", "cross-site"}},
				{"same-site POST (a sibling subdomain)", "POST", "security/users-comments", comment, []string{"Sec-Fetch-Site", "same-site", "Origin", "https://evil." + host}},
				{"POST with only an Origin of another host", "POST", "security/users-comments", comment, []string{"Origin", "https://evil.example"}},
				{"cross-site PATCH", "PATCH", item, `{"CommentText":"changed"}`, []string{"Sec-Fetch-Site", "cross-site"}},
				{"cross-site PUT", "PUT", item, comment, []string{"Sec-Fetch-Site", "cross-site"}},
				{"cross-site DELETE", "DELETE", item, "", []string{"Sec-Fetch-Site", "cross-site"}},
				{"cross-site cookies/generate", "POST", "security/cookies/generate", "", []string{"Sec-Fetch-Site", "cross-site"}},
			} {
				ts := e.ts // the OpenAPI document declares the 403
				if !strings.Contains(strings.Join(c.header, " "), "Content-Type") && c.body != "" && c.method == "POST" {
					ts = plain
				}
				r := e.doAt(t, ts, e.partition, c.method, c.path, c.body, append(cookie, c.header...)...).expect(t, c.name, http.StatusForbidden)
				var p struct {
					Detail string
					Status int
				}
				r.json(t, &p)
				if !strings.Contains(p.Detail, "session cookie") || !strings.Contains(p.Detail, "Authorization: Bearer") || p.Status != http.StatusForbidden {
					t.Errorf("%s: problem %s does not say why or what to do", c.name, r.body)
				}
			}
			if n := count(); n != before {
				t.Errorf("refused cookie writes changed the comments: %d, then %d", before, n)
			}
			// Each refusal is counted with the authentication failures, under a reason of its
			// own and the kind of credential that was refused (docs/operations.md, "Metrics").
			if n := e.authFailuresBy(t, "cross_origin", "cookie"); n != 8 {
				t.Errorf("credo_auth_failures_total{reason=cross_origin,credential=cookie} = %v after 8 cross-origin cookie writes", n)
			}
			var got map[string]any
			e.do(t, "GET", item, "", bearer(token)...).expect(t, "the comment is as it was", http.StatusOK).json(t, &got)
			if got["CommentText"] != "forged?" {
				t.Errorf("a refused cookie write changed the comment: %v", got["CommentText"])
			}

			// Taken: the same origin, reads, and bearer tokens from anywhere.
			e.do(t, "PATCH", item, `{"CommentText":"same origin"}`, append(cookie, "Sec-Fetch-Site", "same-origin", "Origin", e.ts.URL)...).
				expect(t, "a same-origin cookie write", http.StatusOK)
			e.do(t, "PATCH", item, `{"CommentText":"same host"}`, append(cookie, "Origin", e.ts.URL)...).
				expect(t, "a cookie write whose Origin is the API's host", http.StatusOK)
			e.do(t, "POST", "security/users-comments", comment, append(cookie, "Content-Type", "application/json", "Sec-Fetch-Site", "none")...).
				expect(t, "a cookie write the user made (Sec-Fetch-Site: none)", http.StatusCreated)
			e.do(t, "GET", item, "", append(cookie, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")...).
				expect(t, "a cross-site read with a cookie", http.StatusOK)
			e.do(t, "DELETE", item, "", append(bearer(token), "Sec-Fetch-Site", "cross-site", "Origin", "https://app.example")...).
				expect(t, "a cross-site write with a bearer token", http.StatusOK)
			e.do(t, "DELETE", item, "", append(cookie, "Sec-Fetch-Site", "same-origin")...).expect(t, "deleted", http.StatusNotFound)
			var still struct{ Principal struct{ Credential string } }
			e.do(t, "GET", "security/tokens/introspect", "", cookie...).expect(t, "the cookie still holds", http.StatusOK).json(t, &still)
			if still.Principal.Credential != "Cookie" {
				b, _ := json.Marshal(still)
				t.Errorf("introspect with the cookie: %s", b)
			}
		})
	}
}
