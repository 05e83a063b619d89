package handlers

import "testing"

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
