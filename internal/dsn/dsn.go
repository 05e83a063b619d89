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
// not a URL, such as a keyword/value connection string. The user information ends at the @
// that userInfoEnd finds: a password holding ?, @, / or # (unescaped) is hidden whole, not cut
// where a URL parser would. Nothing else of raw changes, but where a URL whose authority has no
// @ has one further on (in its query, say): there what lies between its first : and that @ is
// hidden too, since it cannot be told from a password holding / or #.
func Redact(raw string) string {
	out := raw
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		if at := userInfoEnd(rest); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				out = scheme + "://" + user + ":" + hidden + rest[at:]
			}
		}
	}
	return keywordPassword.ReplaceAllString(out, "${1}"+hidden)
}

// userInfoEnd returns the index of the @ that ends the user information of rest, a URL after
// its "://", or -1: the last @ of the authority (up to the first / or #), else the last @ of
// all, for a password holding / or #. Such a URL parses nowhere (pgx refuses it), and the
// message that says so must not show its password.
func userInfoEnd(rest string) int {
	end := strings.IndexAny(rest, "/#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return at
	}
	return strings.LastIndexByte(rest, '@')
}
