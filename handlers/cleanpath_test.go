package handlers

import (
	"net/url"
	"testing"
)

func TestIsCleanPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/v2/e01/security/users": true, "/v2/e01/security/users/": true, "/api/events/scrap-paper": true,
		"/v2/e01/a.b/..c/...": true, "/.well-known": true,
		"": false, "*": false, "v2/e01": false, "//": false, "//v2/e01": false, "/v2//e01": false, "/v2/e01//security": false,
		"/v2/./e01": false, "/v2/e01/..": false, "/v2/e01/../e02/x": false, "/.": false, "/..": false, "/v2/e01/.": false,
		"/v2/e01/./": false, "/v2/e01/../": false,
	} {
		if got := isCleanPath(p); got != want {
			t.Errorf("isCleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestHasEncodedSlash(t *testing.T) {
	for raw, want := range map[string]bool{
		"/v2/e01/security/users": false, "/v2/e01/security/users%2D1": false, "/api/events/scrap-paper?id=a%2Fb": false,
		"/v2/e01/security%2Fusers": true, "/v2/e01/security%2fusers": true, "/v2%2Fe01/platform/health": true,
		"/v2/e01/security/users-comments/x%2F..": true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := hasEncodedSlash(u); got != want {
			t.Errorf("hasEncodedSlash(%q) = %v, want %v", raw, got, want)
		}
	}
}
