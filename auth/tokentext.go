package auth

import (
	"encoding/base64"
	"errors"
	"strings"
)

// One text per token. encoding/base64 skips CR and LF wherever they are, even when strict, and
// its lax mode also accepts a last character whose unused bits are set: without these checks a
// token would have other texts that read as it (a Continue token, a cookie, a JWT's signature)
// while the server sees, logs and caches them as different ones.

// errLineBreak is the refusal of a token text holding CR or LF.
var errLineBreak = errors.New("a line break in a token")

// hasLineBreak reports whether s holds CR or LF, which no token of this server does.
func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\r\n") }

// DecodeToken decodes the unpadded base64url text of a token strictly: no padding, no set
// unused bits, no line breaks.
func DecodeToken(s string) ([]byte, error) {
	if hasLineBreak(s) {
		return nil, errLineBreak
	}
	return base64.RawURLEncoding.Strict().DecodeString(s)
}
