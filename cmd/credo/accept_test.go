package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"credo/internal/testenv"
)

// TestJSONRoutesAnswerAcceptWith406: every route that answers JSON honours Accept as the
// record groups do (decisions §3, route.Negotiated): the modules, version 1 and the document
// itself answer an Accept that JSON does not satisfy with a 406 problem before doing anything
// (a token request issues no token), and JSON, */* or no Accept as before. Health, a probe,
// answers whatever a monitor accepts.
func TestJSONRoutesAnswerAcceptWith406(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := startServer(t, b)
			code, out, stderr := cli(t, "secret", "create", "--database", b.URL, "--partition", s.partition, "--operator", "--email", "accept@example.com", "--json")
			if code != 0 {
				t.Fatalf("secret create: %d %s", code, stderr)
			}
			var secret struct{ Secret string }
			if err := json.Unmarshal([]byte(out), &secret); err != nil {
				t.Fatal(err)
			}
			v2 := s.url + "/v2/" + s.partition + "/"
			do := func(method, url, body, accept, token string) (int, string) {
				t.Helper()
				return exchange(t, method, url, body, token, "Accept", accept)
			}
			tokenBody := `{"Secret":"` + secret.Secret + `","Lifetime":3600}`
			if st, body := do("POST", v2+"security/tokens/generate", tokenBody, "application/xml", ""); st != http.StatusNotAcceptable || strings.Contains(body, "AccessToken") {
				t.Fatalf("tokens/generate, Accept application/xml: %d %s", st, body)
			}
			st, body := do("POST", v2+"security/tokens/generate", tokenBody, "application/json", "")
			var tok struct{ AccessToken string }
			if err := json.Unmarshal([]byte(body), &tok); st != http.StatusOK || err != nil {
				t.Fatalf("tokens/generate: %d %s", st, body)
			}
			cases := []struct {
				name, method, url, body string
				token                   bool
			}{
				{"platform/version", "GET", v2 + "platform/version", "", false},
				{"openapi.json", "GET", v2 + "openapi.json", "", false},
				{"tokens/introspect", "GET", v2 + "security/tokens/introspect", "", true},
				{"settings/resources", "GET", v2 + "security/settings/resources", "", true},
				{"compliance-summaries", "POST", v2 + "api/plugin/cmds/compliance-summaries", "{}", true},
				{"v1 list-events", "GET", s.url + "/api/events/list-events?date=2030-01-01", "", true},
				{"v1 registrations/count", "POST", s.url + "/api/registrations/count", "{}", true},
			}
			for _, c := range cases {
				token := ""
				if c.token {
					token = tok.AccessToken
				}
				for _, accept := range []string{"text/csv", "application/xml", "application/json;q=0"} {
					if st, body := do(c.method, c.url, c.body, accept, token); st != http.StatusNotAcceptable {
						t.Errorf("%s, Accept %s: %d %.200s", c.name, accept, st, body)
					}
				}
				for _, accept := range []string{"", "application/json", "*/*", "text/csv;q=0.5, application/*"} {
					if st, body := do(c.method, c.url, c.body, accept, token); st != http.StatusOK {
						t.Errorf("%s, Accept %q: %d %.200s", c.name, accept, st, body)
					}
				}
			}
			if st, body := do("GET", v2+"platform/health", "", "text/plain", ""); st != http.StatusOK {
				t.Errorf("health, Accept text/plain: %d %s", st, body)
			}
		})
	}
}

// exchange sends a request with a JSON body (when not empty), a bearer token (when not empty) and
// headers (name, value; an empty value is not sent), and answers the status and the body.
func exchange(t *testing.T, method, url, body, bearer string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
