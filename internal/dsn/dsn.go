// Package dsn handles database URLs for messages and logs. It parses no URL with net/url,
// which the engine, its user, does not import (internal/layers).
package dsn

import (
	"regexp"
	"strings"
)

// hidden replaces a password in a redacted database URL.
const hidden = "xxxxx"

// keywordPassword is a password=value (or sslpassword=value) pair of a query or of a
// keyword/value connection string, quoted or not.
var keywordPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)`)

// Redact hides the password of a database URL, for messages and logs: the user information's
// and a password query parameter's (PostgreSQL drivers read both), also in a value that is
// not a URL, such as a keyword/value connection string. The user information is what comes
// before the last @ of the authority (up to the first / or #): a password holding ? or @ is
// hidden whole, not cut where a URL parser would. Nothing else of raw changes.
func Redact(raw string) string {
	out := raw
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		end := strings.IndexAny(rest, "/#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				out = scheme + "://" + user + ":" + hidden + rest[at:]
			}
		}
	}
	return keywordPassword.ReplaceAllString(out, "${1}"+hidden)
}
