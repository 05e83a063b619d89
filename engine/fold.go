package engine

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"credo/engine/backend"
)

// Case folding of contains filters. A contains filter matches a record whose value has a
// substring equal to the filter's value under Go's simple case folding (strings.EqualFold):
// two characters match when unicode.SimpleFold's orbit joins them — É and é, Ø and ø, K and
// k and U+212A KELVIN SIGN, S and s and U+017F LONG S. Simple folding maps one character to
// one, so ß does not match ss and an accent is never ignored (emilie does not find Émilie).
// The rule is the same on both stores and does not depend on the database's locale:
//
//   - A value whose characters are all ASCII letters other than k and s, or ASCII non-letters,
//     is matched by LIKE (SQLite) or ILIKE on the "C" collation (PostgreSQL): both fold ASCII
//     only, which for such a value is exact, since no other character folds to them.
//   - Any other value is matched character by character against the fold orbit of each of its
//     characters: on SQLite by the function credo_contains (foldContains, registered with the
//     driver), on PostgreSQL by a regular expression of bracket classes ([Éé][mM]…, foldRegexp),
//     which compares code points and so ignores LC_CTYPE.

// asciiFold reports whether LIKE's ASCII-only folding matches v exactly: v is ASCII and has
// no k or s, whose fold orbits reach beyond ASCII (U+212A, U+017F).
func asciiFold(v string) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= utf8.RuneSelf, c == 'k', c == 'K', c == 's', c == 'S':
			return false
		}
	}
	return true
}

// foldContains reports whether h has a substring equal to n under simple case folding
// (strings.EqualFold). It allocates nothing.
func foldContains(h, n string) bool {
	if n == "" {
		return true
	}
	// first is the lower-case ASCII letter that n's first character matches, if any, else
	// utf8.RuneSelf: a start on an ASCII character is then skipped on one comparison.
	first := lowerASCII(n[0])
	if first >= utf8.RuneSelf {
		switch r, _ := utf8.DecodeRuneInString(n); r {
		case '\u212A':
			first = 'k'
		case '\u017F':
			first = 's'
		default:
			first = utf8.RuneSelf
		}
	}
	for i := 0; i < len(h); {
		if c := h[i]; c < utf8.RuneSelf {
			if lowerASCII(c) == first && foldPrefix(h[i:], n) {
				return true
			}
			i++
			continue
		}
		if foldPrefix(h[i:], n) {
			return true
		}
		_, size := utf8.DecodeRuneInString(h[i:])
		i += size
	}
	return false
}

// foldPrefix reports whether s starts with n under simple case folding.
func foldPrefix(s, n string) bool {
	i, j := 0, 0
	for j < len(n) {
		if i >= len(s) {
			return false
		}
		a, b := s[i], n[j]
		if a|b < utf8.RuneSelf {
			if lowerASCII(a) != lowerASCII(b) {
				return false
			}
			i++
			j++
			continue
		}
		r, rs := utf8.DecodeRuneInString(s[i:])
		t, ts := utf8.DecodeRuneInString(n[j:])
		if !foldEqual(r, t) {
			return false
		}
		i += rs
		j += ts
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldEqual reports whether r and t are in the same simple fold orbit.
func foldEqual(r, t rune) bool {
	if r == t {
		return true
	}
	if r > t {
		r, t = t, r
	}
	if t < utf8.RuneSelf {
		return lowerASCII(byte(r)) == lowerASCII(byte(t))
	}
	if r < utf8.RuneSelf {
		// The only orbits joining ASCII to other characters.
		switch t {
		case '\u212A': // KELVIN SIGN
			return r == 'k' || r == 'K'
		case '\u017F': // LATIN SMALL LETTER LONG S
			return r == 's' || r == 'S'
		}
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == t {
			return true
		}
	}
	return false
}

// foldRegexp returns a PostgreSQL regular expression (ARE) matching a substring equal to v
// under simple case folding: each character with a fold orbit becomes the bracket class of
// the orbit, and every other character is literal, a metacharacter escaped by a backslash.
func foldRegexp(v string) string {
	var b strings.Builder
	b.Grow(len(v) * 4)
	for _, r := range v {
		if f := unicode.SimpleFold(r); f != r {
			b.WriteByte('[')
			b.WriteRune(r)
			for ; f != r; f = unicode.SimpleFold(f) {
				b.WriteRune(f)
			}
			b.WriteByte(']')
			continue
		}
		if strings.ContainsRune(`\^$.[]|()*+?{}`, r) {
			b.WriteByte('\\') // makes the metacharacter literal
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldFunction is the name of the SQLite function foldContains: credo_contains(h, n) is 1
// when h contains n under simple case folding, 0 when not, NULL when h or n is NULL.
const foldFunction = "credo_contains"

var foldOnce sync.Once

// linkSQLite checks that the program links a SQLite driver and registers foldFunction with
// it, once: every connection it opens afterwards has the function. dir names the database
// in the error.
func linkSQLite(dir string) error {
	lite := backend.LinkedSQLite()
	if lite == nil {
		return fmt.Errorf("engine: database %q is SQLite, and this program links no SQLite driver: it must import _ %q", "sqlite:"+dir, "credo/engine/sqlite")
	}
	foldOnce.Do(func() { lite.RegisterContains(foldFunction, foldContains) })
	return nil
}
