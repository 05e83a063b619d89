// Package dsn handles database URLs for messages and logs. It is apart from the engine so
// that the engine itself parses no URL: HTTP parameters are read at the edge (handlers/request).
package dsn

import (
	"net/url"
	"regexp"
)

// hidden replaces a password in a redacted database URL.
const hidden = "xxxxx"

var (
	// userPassword is the password of a URL's user information (://user:password@), for a
	// URL that does not parse.
	userPassword = regexp.MustCompile(`(://[^/@:]*:)[^/@]*@`)
	// keywordPassword is a password=value (or sslpassword=value) pair of a query or of a
	// keyword/value connection string, quoted or not.
	keywordPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)`)
)

// Redact hides the password of a database URL, for messages and logs: the user information's
// and a password query parameter's (PostgreSQL drivers read both), also in a value that does
// not parse as a URL, such as a keyword/value connection string.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return keywordPassword.ReplaceAllString(userPassword.ReplaceAllString(raw, "${1}"+hidden+"@"), "${1}"+hidden)
	}
	if keywordPassword.MatchString(u.RawQuery) {
		u.RawQuery = keywordPassword.ReplaceAllString(u.RawQuery, "${1}"+hidden)
	} else if u.User == nil {
		return raw
	}
	return u.Redacted()
}
