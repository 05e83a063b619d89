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
		// PostgreSQL drivers take the password from the query too.
		"postgres://credo@127.0.0.1/credo?sslmode=disable&password=secret": "postgres://credo@127.0.0.1/credo?sslmode=disable&password=xxxxx",
		"postgres://127.0.0.1/credo?PASSWORD=secret&sslmode=disable":       "postgres://127.0.0.1/credo?PASSWORD=xxxxx&sslmode=disable",
		// A URL that does not parse (a bad escape) and a keyword/value string hide it as well.
		"postgres://credo:se%zzcret@127.0.0.1/credo":           "postgres://credo:xxxxx@127.0.0.1/credo",
		"host=db user=credo password=secret dbname=credo":      "host=db user=credo password=xxxxx dbname=credo",
		"host=db user=credo password = 'se cret' dbname=credo": "host=db user=credo password = xxxxx dbname=credo",
		"mysql://credo:secret@db/credo":                        "mysql://credo:xxxxx@db/credo",
		// A password holding ? or @ (unescaped) is hidden whole.
		"postgres://credo:se?cret@127.0.0.1/credo": "postgres://credo:xxxxx@127.0.0.1/credo",
		"postgres://credo:se@cret@127.0.0.1/credo": "postgres://credo:xxxxx@127.0.0.1/credo",
		"postgres://credo:@127.0.0.1/credo":        "postgres://credo:xxxxx@127.0.0.1/credo",
		// So is one holding / or # (a generated password often has /): no parser reads such a
		// URL, and the message that says so must not show it.
		"postgres://credo:se/cret@127.0.0.1:5432/credo":                 "postgres://credo:xxxxx@127.0.0.1:5432/credo",
		"postgres://credo:se#cret@127.0.0.1/credo":                      "postgres://credo:xxxxx@127.0.0.1/credo",
		"postgress://credo:a/b#c?d@e@127.0.0.1/credo?sslmode=disable":   "postgress://credo:xxxxx@127.0.0.1/credo?sslmode=disable",
		"postgres://127.0.0.1:5432/credo?application_name=a":            "postgres://127.0.0.1:5432/credo?application_name=a",
		"postgres:///credo?host=/tmp&application_name=a@b&password=s/x": "postgres:///credo?host=/tmp&application_name=a@b&password=xxxxx",
	} {
		if got := dsn.Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
