package dsn_test

import (
	"testing"

	"credo/internal/dsn"
)

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://credo:secret@127.0.0.1:5432/credo?sslmode=disable": "postgres://credo:xxxxx@127.0.0.1:5432/credo?sslmode=disable",
		"postgres://127.0.0.1/credo":                                   "postgres://127.0.0.1/credo",
		"file:data/credo.db":                                           "file:data/credo.db",
		"::not a url":                                                  "::not a url",
	} {
		if got := dsn.Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
