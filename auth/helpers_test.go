package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testKey is the signing key of the tests; forged tokens are signed with it too.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// clock is a settable test clock.
type clock struct{ now time.Time }

func newClock() *clock                   { return &clock{now: t0} }
func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }
func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }
func ptr[T any](v T) *T                  { return &v }

// checkErr fails unless err matches: want nil means no error; otherwise err must wrap want and
// its message contain every part of msg.
func checkErr(t *testing.T, err, want error, msg ...string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error; want one wrapping %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %q does not wrap %v", err, want)
	}
	for _, m := range msg {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("error %q does not contain %q", err, m)
		}
	}
}
