package platform

import (
	"net/http"
	"strconv"
	"strings"

	"credo/handlers/problem"
)

// Version is the body of the version operation: the version string as built and its numeric
// parts (decisions §8), as .NET's Major.Minor.Build.Revision.
type Version struct {
	Version  string `json:"Version"`
	Major    int    `json:"Major"`
	Minor    int    `json:"Minor"`
	Build    int    `json:"Build"`
	Revision int    `json:"Revision"`
}

// ParseVersion splits a version string into its numeric parts. An optional leading "v" is
// dropped; then up to four dot-separated decimal numbers give Major, Minor, Build and Revision
// ("v25.2" → 25, 2, 0, 0; "1.2.3.4" → 1, 2, 3, 4). A number must be followed by ".", "-", "+"
// or the end. When no fourth number is written, a git describe suffix "-N-g<hash>" gives
// Revision N, the number of commits since the release tag ("v25.2.3-4-gabc1234" → 25, 2, 3, 4).
// Anything else after the numbers (a pre-release such as "-dev" or "-rc.1", "-dirty", "+build")
// is ignored. Parts that are missing, not decimal or larger than 2^31-1 are 0, and so is every
// part of a string that does not start with a number ("dev", "(devel)", a bare commit hash such
// as "2b77592"). Version is s unchanged.
func ParseVersion(s string) Version {
	out := Version{Version: s}
	rest := strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	parts := [4]*int{&out.Major, &out.Minor, &out.Build, &out.Revision}
	n := 0
	for n < len(parts) {
		digits := leadingDigits(rest)
		if digits == "" || !endsPart(rest[len(digits):]) {
			break // "2b77592" is a commit hash, "1.2b" has no Minor
		}
		v, err := strconv.ParseInt(digits, 10, 32)
		if err != nil {
			// Too large for a version part: keep the parts read so far and ignore the rest.
			rest = ""
			break
		}
		*parts[n] = int(v)
		n++
		rest = rest[len(digits):]
		if n == len(parts) || !strings.HasPrefix(rest, ".") || leadingDigits(rest[1:]) == "" {
			break
		}
		rest = rest[1:]
	}
	if n == 0 || n == len(parts) {
		return out
	}
	if commits, ok := describeCommits(rest); ok {
		out.Revision = commits
	}
	return out
}

// describeCommits reads the "-N-g<hex>" that git describe appends after a tag, with an optional
// "-dirty" after it.
func describeCommits(s string) (int, bool) {
	if !strings.HasPrefix(s, "-") {
		return 0, false
	}
	s = s[1:]
	digits := leadingDigits(s)
	if digits == "" || !strings.HasPrefix(s[len(digits):], "-g") {
		return 0, false
	}
	hash := strings.TrimSuffix(s[len(digits)+2:], "-dirty")
	if hash == "" || strings.Trim(hash, "0123456789abcdef") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

// endsPart reports whether s, what follows a number, starts a new part or a suffix.
func endsPart(s string) bool {
	return s == "" || s[0] == '.' || s[0] == '-' || s[0] == '+'
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// version serves the version operation.
func (c Config) version(w http.ResponseWriter, _ *http.Request) error {
	return problem.JSON(w, http.StatusOK, ParseVersion(c.Version))
}
