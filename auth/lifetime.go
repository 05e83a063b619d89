package auth

import (
	"fmt"
	"math"
	"strconv"
)

// Token lifetimes in seconds (api.md, Authentication 2 and 6).
const (
	// DefaultLifetime is the lifetime of a token when the request names none: 24 hours.
	DefaultLifetime = 86400
	// MinLifetime is the shortest lifetime a token may be generated with: 1 minute.
	MinLifetime = 60
	// MaxLifetime is the longest lifetime a token may be generated with: 365 days.
	MaxLifetime = 31536000
)

// ValidateLifetime reports whether a requested token lifetime in seconds is within
// MinLifetime..MaxLifetime, both included. The error wraps ErrMalformed (a 400) and says what is
// allowed.
func ValidateLifetime(seconds int) error {
	if seconds < MinLifetime || seconds > MaxLifetime {
		return malformed("Lifetime must be between %s and %s seconds; got %s",
			groupDigits(MinLifetime), groupDigits(MaxLifetime), groupDigits(int64(seconds)))
	}
	return nil
}

// lifetimeUnits are the units LifetimeText chooses from, largest first.
var lifetimeUnits = []struct {
	name    string
	seconds int64
}{
	{"week", 7 * 86400},
	{"day", 86400},
	{"hour", 3600},
	{"minute", 60},
	{"second", 1},
}

// LifetimeText describes a lifetime in seconds the way tokens/generate answers (decisions §7):
// the exact seconds with thousands separators, then an approximation in the largest of week,
// day, hour, minute and second whose value is at least 1, rounded to the nearest whole unit
// (halves away from zero): "3,600 seconds (~1 hour)", "2,592,000 seconds (~4 weeks)".
func LifetimeText(seconds int) string {
	secs := int64(seconds)
	abs := secs
	if abs < 0 {
		abs = -abs
	}
	unit := lifetimeUnits[len(lifetimeUnits)-1]
	for _, u := range lifetimeUnits {
		if abs >= u.seconds {
			unit = u
			break
		}
	}
	n := int64(math.Round(float64(secs) / float64(unit.seconds)))
	return fmt.Sprintf("%s %s (~%s %s)", groupDigits(secs), plural("second", secs),
		groupDigits(n), plural(unit.name, n))
}

func plural(unit string, n int64) string {
	if n == 1 || n == -1 {
		return unit
	}
	return unit + "s"
}

// groupDigits writes n with a comma between groups of three digits: 2,592,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}
