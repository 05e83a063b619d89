package request_test

import (
	"testing"

	"credo/handlers/request"
)

// TestIsJSON: JSON and every +json type are JSON, with or without parameters and in any case;
// nothing else is, nor a malformed type.
func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"Application/JSON":                  true,
		"application/merge-patch+json":      true,
		"application/problem+json; q=1":     true,
		"application/jsonx":                 false,
		"text/json":                         false,
		"text/plain":                        false,
		"application/json; charset":         false,
		"application/x-www-form-urlencoded": false,
	} {
		if got := request.IsJSON(ct); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}
