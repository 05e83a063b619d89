package engine

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxShown bounds the bytes of a client's text — a member or parameter name, a value, a path —
// that an error message or a problem's Errors key shows: a 1 MiB member name or an 8 KiB query
// parameter is named by its first MaxShown bytes and its length, so that a problem's size does
// not grow with what a client sent, and the client can still tell what it was.
const MaxShown = 64

// ShownName returns a name a client sent (a member, a parameter, a CSV header's column) as a
// message or an Errors key names it: as it is when it reads unambiguously — valid UTF-8, every
// character printable, no white space at an end, not empty, at most MaxShown bytes — else
// quoted, escapes and all (a control character, an ANSI escape, U+202E, invalid UTF-8 are
// shown as Go escapes, never as themselves); a longer one is cut (see Quoted). A well-formed
// name is thus shown exactly as before, and the result is always printable, valid UTF-8 and
// bounded, whatever the client sent.
func ShownName(name string) string {
	if len(name) > MaxShown {
		return Quoted(name)
	}
	if name == "" || strings.TrimSpace(name) != name || !utf8.ValidString(name) {
		return strconv.Quote(name)
	}
	for _, c := range name {
		if !unicode.IsPrint(c) {
			return strconv.Quote(name)
		}
	}
	return name
}

// Quoted returns a value a client sent as a message quotes it: as %q quotes it (printable
// ASCII and printable UTF-8; the rest escaped), and one longer than MaxShown bytes cut there,
// between characters, its length given: `"nnnn…"… (8192 bytes)`.
func Quoted(s string) string {
	if len(s) > MaxShown {
		return fmt.Sprintf("%q… (%d bytes)", s[:cut(s, MaxShown)], len(s))
	}
	return strconv.Quote(s)
}

// cut returns where to cut s, longer than n bytes, to at most n: n, or the start of the
// character that n falls inside, so that a valid name is not shown with the escapes of part
// of a character, as though the client had sent invalid UTF-8.
func cut(s string, n int) int {
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// MaxShownPath bounds the bytes of a request path that a problem shows (its Instance, a 404's
// detail): longer than any path credo routes, a UUID key or two included.
const MaxShownPath = 256

// ShownPath returns a request's escaped path (url.URL.EscapedPath: printable ASCII, a control
// character or U+202E percent-encoded as the client could have sent it) as a problem shows
// it: whole when at most MaxShownPath bytes, else cut there, before a %-escape the limit
// falls inside, and marked with "…".
func ShownPath(escaped string) string {
	if len(escaped) > MaxShownPath {
		n := MaxShownPath
		if i := strings.LastIndexByte(escaped[n-2:n], '%'); i >= 0 {
			n -= 2 - i
		}
		return escaped[:n] + "…"
	}
	return escaped
}
