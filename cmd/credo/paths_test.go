package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"credo/handlers"
	"credo/internal/testenv"
)

// TestUncleanPathsAre404 sends paths with empty, "." and ".." segments (also percent-encoded)
// with every method over real HTTP, to the server as credo serve wires it (v2, its modules and
// the version-1 routes), with a client that does not follow redirects: each is a 404 problem
// document, never a redirect to the cleaned path, and never reaches the route it names.
func TestUncleanPathsAre404(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			cfg := testConfig(t, b.URL, p)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			reg, db, err := cfg.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			srv := &handlers.Server{Registry: reg, Database: db}
			if err := wire(ctx, cfg, srv); err != nil {
				t.Fatal(err)
			}
			h, err := srv.Handler()
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

			send := func(method, path string) *http.Response {
				t.Helper()
				req, err := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			// The clean forms answer (so the unclean ones would, if they were cleaned).
			for _, clean := range []string{"/v2/" + p + "/platform/health", "/api/events/scrap-paper?id=x", "/api/events/classes?organization=0190a6f0-0000-7000-8000-00000000000a"} {
				res := send("GET", clean)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d, want 200", clean, res.StatusCode)
				}
			}
			unclean := []string{
				"/v2//" + p + "/platform/health",
				"//v2/" + p + "/platform/health",
				"/v2/" + p + "//platform/health",
				"/v2/" + p + "/platform//health",
				"/v2/" + p + "/platform/health/.",
				"/v2/" + p + "/./platform/health",
				"/v2/" + p + "/security/../platform/health",
				"/v2/" + p + "/platform/version/../health",
				"/v2/" + p + "/security/%2e%2e/platform/health",
				"/v2/" + p + "/%2E/platform/health",
				"/v2/" + p + "%2F%2Fplatform/health",
				"/v2/" + p + "/platform%2Fhealth",
				"/v2/" + p + "%2Fplatform/health",
				"/v2/" + p + "/security%2fusers-comments/count",
				"/api%2Fevents/scrap-paper?id=x",
				"/api/events%2Fclasses?organization=0190a6f0-0000-7000-8000-00000000000a",
				"/v2/" + p + "/security//users",
				"/v2/" + p + "/security/users/..",
				"/v2/" + p + "/security/users-comments/0190a6f0-0000-7000-8000-000000000001/..",
				"/v2/x/../" + p + "/platform/health",
				"/api//events/scrap-paper?id=x",
				"/api/events//scrap-paper?id=x",
				"/api/./events/scrap-paper?id=x",
				"/api/registrations/../events/scrap-paper?id=x",
				"/api/events/%2e%2e/events/classes?organization=0190a6f0-0000-7000-8000-00000000000a",
			}
			for _, path := range unclean {
				for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
					res := send(method, path)
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusNotFound || res.Header.Get("Location") != "" {
						t.Errorf("%s %s: %d (Location %q), want 404 and no redirect: %s", method, path, res.StatusCode, res.Header.Get("Location"), body)
						continue
					}
					if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
						t.Errorf("%s %s: Content-Type %q, want a problem document", method, path, ct)
					}
					if method == "HEAD" {
						continue
					}
					var prob struct{ Status int }
					if err := json.Unmarshal(body, &prob); err != nil || prob.Status != 404 {
						t.Errorf("%s %s: problem %s (%v)", method, path, body, err)
					}
				}
			}
		})
	}
}
