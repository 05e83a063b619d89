// Package dsn handles database URLs for messages and logs. It is apart from the engine so
// that the engine itself parses no URL: HTTP parameters are read at the edge (handlers/request).
package dsn

import "net/url"

// Redact hides the password of a database URL, for messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
