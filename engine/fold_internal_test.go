package engine

import (
	"regexp"
	"strings"
	"testing"
)

// TestFoldContainsAgreesWithEqualFold compares foldContains, foldRegexp (through Go's regexp,
// whose bracket classes and escapes PostgreSQL reads alike) and asciiFold with LIKE's ASCII
// folding against the rule, on random strings of characters with unusual fold orbits.
func TestFoldContainsAgreesWithEqualFold(t *testing.T) {
	for _, p := range FoldPairs(20000) {
		h, n := p[0], p[1]
		want := FoldContainsSpec(h, n)
		if got := foldContains(h, n); got != want {
			t.Fatalf("foldContains(%q, %q) = %v, want %v", h, n, got, want)
		}
		if got := regexp.MustCompile(foldRegexp(n)).MatchString(h); got != want {
			t.Fatalf("foldRegexp(%q) = %q matches %q: %v, want %v", n, foldRegexp(n), h, got, want)
		}
		if asciiFold(n) {
			if got := strings.Contains(asciiLower(h), asciiLower(n)); got != want {
				t.Fatalf("asciiFold(%q): ASCII folding finds it in %q: %v, want %v", n, h, got, want)
			}
		}
	}
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

func TestFoldRegexpEscapes(t *testing.T) {
	for v, want := range map[string]string{
		"é":       "[éÉ]",
		"k":       "[k\u212AK]",
		"a.b":     `[aA]\.[bB]`,
		`1\(2)|$`: `1\\\(2\)\|\$`,
		"ø ß":     `[øØ] [ßẞ]`,
		"€":       "€",
	} {
		if got := foldRegexp(v); got != want {
			t.Errorf("foldRegexp(%q) = %q, want %q", v, got, want)
		}
	}
}
