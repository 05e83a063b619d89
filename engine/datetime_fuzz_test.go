package engine

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sendFormat is api.md's send format, written out as a grammar independent of ParseDateTime:
// what ParseDateTime accepts must be in it, with an offset of at most 14:00.
var sendFormat = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,7})?(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`)

// FuzzParseDateTime: the one datetime codec never panics; every error is an ErrDateTime; what
// it accepts is in the send format, agrees with the time package on the instant and offset,
// lies within MinInstant … MaxInstant, and reads back exactly through the output form
// (parse → format → parse is stable) and through the storage form; what the time package reads
// in the send format within the range, it accepts.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{
		"2024-03-10T14:30:00.1234567-06:00", "2024-03-10T14:30:00Z", "0001-01-01T00:00:00Z",
		"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:00:00-02:00", "0001-01-01T00:30:00+01:00",
		"2024-02-29T23:59:59.9999999-14:00", "2024-02-30T00:00:00Z", "2024-03-10T14:30:00+14:30",
		"2024-03-10T14:30:00.Z", "2024-03-10T14:30:00+05:-1", "2024-03-10T14:30:00++1:00",
		"2024-03-10T14:30:00-+1:00", "2024-03-10T14:30:00+-0:30", "+024-03-10T14:30:00Z",
		"2024-03-10T14:30:00.12345678Z", "0000-12-31T23:59:59-01:00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDateTime(s)
		if err != nil {
			if !errors.Is(err, ErrDateTime) {
				t.Fatalf("ParseDateTime(%q) = %v, not an ErrDateTime", s, err)
			}
			if sendFormat.MatchString(s) && s[:4] != "0000" { // .NET's DateTimeOffset has no year 0 either
				if tm, perr := time.Parse("2006-01-02T15:04:05.9999999Z07:00", s); perr == nil &&
					!tm.Before(MinInstant) && !tm.After(MaxInstant) {
					t.Fatalf("ParseDateTime(%q) = %v, but it is in the send format and the range (%v)", s, err, tm)
				}
			}
			return
		}
		if !sendFormat.MatchString(s) {
			t.Fatalf("ParseDateTime(%q) accepted a value outside the send format: %s", s, d)
		}
		tm, perr := time.Parse("2006-01-02T15:04:05.9999999Z07:00", s)
		if perr != nil {
			t.Fatalf("ParseDateTime(%q) = %s, but time.Parse refuses it: %v", s, d, perr)
		}
		_, off := d.Zone()
		_, tmOff := tm.Zone()
		if !tm.Equal(d.Time) || off != tmOff {
			t.Fatalf("ParseDateTime(%q) = %s, time.Parse = %s", s, d, tm)
		}
		if d.Before(MinInstant) || d.After(MaxInstant) {
			t.Fatalf("ParseDateTime(%q) = %s, outside the instants credo keeps", s, d)
		}
		out := d.String()
		back, err := ParseDateTime(out)
		if err != nil {
			t.Fatalf("ParseDateTime(%q) of the output of %q: %v", out, s, err)
		}
		_, backOff := back.Zone()
		if !back.Equal(d.Time) || backOff != off || back.String() != out {
			t.Fatalf("%q → %q → %q: not stable", s, out, back)
		}
		stored, err := ParseStorage(d.Storage())
		if err != nil {
			t.Fatalf("ParseStorage(%q) of %q: %v", d.Storage(), s, err)
		}
		_, storedOff := stored.Zone()
		if !stored.Equal(d.Time) || storedOff != off || stored.String() != out {
			t.Fatalf("storage round trip of %q: %q gave %s", s, d.Storage(), stored)
		}
		if got := d.Storage()[:28]; got != d.InstantKey() || len(d.Storage()) != 34 {
			t.Fatalf("Storage(%q) = %q is not the fixed width", s, d.Storage())
		}
	})
}

// FuzzParseStorage: reading a stored column never panics, and what it reads is written back
// as it was (a column is only ever written by Storage), but a zero offset written -00:00,
// which Storage once wrote for an offset of under a minute west and now writes +00:00.
func FuzzParseStorage(f *testing.F) {
	for _, s := range []string{
		"2024-03-10T20:30:00.1234567Z-06:00", "0001-01-01T00:00:00.0000000Z+00:00",
		"10000-01-01T01:00:00.0000000Z-02:00", "0000-12-31T23:30:00.0000000Z+01:00",
		"10000-13-01T00:00:00.0000000Z+00:00", "2024-02-30T00:00:00.0000000Z+00:00",
		"0000-10-01T00:00:00.0000000Z-00:00", "10000-01-01T00:00:00.0000000Z-00:00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseStorage(s)
		if err != nil {
			return
		}
		if got := d.Storage(); got != s && got != strings.TrimSuffix(s, "-00:00")+"+00:00" {
			t.Fatalf("ParseStorage(%q) = %s, written back as %q", s, d, got)
		}
	})
}
