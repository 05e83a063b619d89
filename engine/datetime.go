package engine

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DateTime is an instant with the UTC offset it was written in. It round-trips exactly
// (up to 7 fraction digits) and compares by instant. In the database it is one text column,
// `2024-03-10T20:30:00.1234567Z-06:00`: the fixed-width UTC instant (so that text order is
// instant order and range filters use the index) followed by the original offset.
type DateTime struct{ time.Time }

// ErrDateTime describes the accepted form; every error of ParseDateTime is one (errors.Is).
var ErrDateTime = errors.New("expected yyyy-MM-ddTHH:mm:ss[.fffffff] followed by Z or ±HH:mm")

// The instants a DateTime may hold (decisions §4), those of .NET's DateTimeOffset: a value
// written in an offset must still fall in years 1 to 9999 in UTC, so that its stored form (the
// UTC instant first) is the fixed width that sorts and compares as text.
var (
	MinInstant = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxInstant = time.Date(9999, 12, 31, 23, 59, 59, 999_999_900, time.UTC)
)

// rangeError is a well-formed datetime whose instant lies outside MinInstant … MaxInstant.
type rangeError struct{ value string }

func (e rangeError) Error() string {
	return fmt.Sprintf("%s lies outside 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.9999999Z once its offset is applied", Quoted(e.value))
}

func (e rangeError) Is(target error) bool { return target == ErrDateTime }

// ParseDateTime reads the send format of api.md: `yyyy-MM-ddTHH:mm:ss`, an optional fraction of
// 1 to 7 digits, and a mandatory offset `Z` or `±HH:mm` (at most 14:00). It is the one datetime
// parser of credo: bodies, query parameters, CSV loads, version 1 and platform/formats/time
// read through it. The instant must lie within MinInstant … MaxInstant.
func ParseDateTime(s string) (DateTime, error) {
	bad := func() (DateTime, error) { return DateTime{}, fmt.Errorf("%s: %w", Quoted(s), ErrDateTime) }
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return bad()
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1 {
		return bad()
	}
	rest := s[19:]
	nanos := 0
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		digits := rest[1:i]
		if len(digits) == 0 || len(digits) > 7 {
			return bad()
		}
		n, _ := strconv.Atoi(digits)
		for k := len(digits); k < 9; k++ {
			n *= 10
		}
		nanos = n
		rest = rest[i:]
	}
	var offset int
	switch {
	case rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		// Digits only: strconv.Atoi took a sign, so that "+05:-1" read as +04:59 and "++1:00"
		// as +01:00, values outside the send format that came back other than sent.
		oh, okh := fixedDigits(rest[1:3])
		om, okm := fixedDigits(rest[4:6])
		if !okh || !okm || oh > 14 || om > 59 || oh == 14 && om > 0 {
			return bad()
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return bad()
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return bad()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, fixedZone(offset))
	if t.Day() != day {
		return bad()
	}
	if t.Before(MinInstant) || t.After(MaxInstant) {
		return DateTime{}, rangeError{s}
	}
	return DateTime{t}, nil
}

// fixedZone returns a location for an offset; UTC stays UTC so that output prints +00:00.
func fixedZone(offset int) *time.Location {
	if offset == 0 {
		return time.UTC
	}
	if z, ok := zones.Load(offset); ok {
		return z.(*time.Location)
	}
	z, _ := zones.LoadOrStore(offset, time.FixedZone("", offset))
	return z.(*time.Location)
}

// zones shares one *time.Location per offset: a read record's datetimes need not each allocate
// one (offsets are whole minutes within ±24 h, so the map stays small).
var zones sync.Map

// String renders the output format: `yyyy-MM-ddTHH:mm:ss[.fffffff]±HH:mm`, fraction zeros trimmed.
func (d DateTime) String() string {
	b := make([]byte, 0, 34)
	return string(d.AppendFormat(b))
}

// AppendFormat appends String's form to b.
func (d DateTime) AppendFormat(b []byte) []byte {
	b = appendCivil(b, d.Time)
	if ticks := d.Nanosecond() / 100; ticks != 0 {
		b = append(b, '.')
		digits := 7
		for ticks%10 == 0 {
			ticks /= 10
			digits--
		}
		b = appendDigits(b, ticks, digits)
	}
	return appendOffset(b, d.Time)
}

// appendCivil appends t's yyyy-MM-ddTHH:mm:ss in t's own zone, like t.AppendFormat with that
// layout but without reading a layout.
func appendCivil(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05")
	}
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	return appendDigits(b, s, 2)
}

// appendOffset appends t's UTC offset as ±HH:mm.
func appendOffset(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	// Whole minutes, as the "-07:00" layout writes, signed after the cut: an offset of under a
	// minute west is +00:00, the one spelling of a zero offset, never -00:00 (which RFC 3339
	// reserves for an unknown offset, and ParseStorage reads as +00:00).
	off /= 60
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = append(b, sign)
	b = appendDigits(b, off/60, 2)
	b = append(b, ':')
	return appendDigits(b, off%60, 2)
}

// appendDigits appends n as exactly width decimal digits, zero-padded.
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	for range width {
		b = append(b, '0')
	}
	for i := len(b) - 1; i >= start && n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}

// Storage returns the database form (see DateTime).
func (d DateTime) Storage() string {
	u := d.UTC()
	b := make([]byte, 0, 34)
	b = appendCivil(b, u)
	b = append(b, '.')
	b = appendDigits(b, u.Nanosecond()/100, 7)
	b = append(b, 'Z')
	return string(appendOffset(b, d.Time))
}

// InstantKey is the fixed-width UTC part of Storage: comparing a stored column against it
// compares instants, whatever offsets the values were written in.
func (d DateTime) InstantKey() string { return d.Storage()[:28] }

// ParseStorage reads the database form written by Storage. It reads the fixed-width digits
// itself: time.Parse was a tenth of the CPU of listing records.
//
// Before ParseDateTime bounded instants, a value such as 9999-12-31T23:00:00-02:00 was stored
// with the UTC year 10000 (35 characters) and 0001-01-01T00:30:00+01:00 with the year 0. Both are
// read back as written, so that such a row never makes a read fail; their text sorts out of
// instant order, and a write of the record (PUT, PATCH) is refused until the value is corrected.
// So is a zero offset written -00:00, as Storage wrote an offset of under a minute west before
// appendOffset signed the whole minutes: it reads as +00:00, the same instant and offset.
func ParseStorage(s string) (DateTime, error) {
	malformed := func() (DateTime, error) {
		return DateTime{}, fmt.Errorf("engine: stored datetime %q is malformed", s)
	}
	if len(s) == 35 && strings.HasPrefix(s, "10000-") {
		d, err := ParseStorage("0000" + s[5:])
		if err != nil {
			return malformed()
		}
		return DateTime{d.AddDate(10000, 0, 0)}, nil // years 0 and 10000 are both leap years
	}
	if len(s) != 34 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
		s[19] != '.' || s[27] != 'Z' || (s[28] != '+' && s[28] != '-') || s[31] != ':' {
		return malformed()
	}
	var v [9]int // year, month, day, hour, minute, second, ticks, offset hours, offset minutes
	for i, span := range [9][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 27}, {29, 31}, {32, 34}} {
		n, ok := fixedDigits(s[span[0]:span[1]])
		if !ok {
			return malformed()
		}
		v[i] = n
	}
	if v[1] < 1 || v[1] > 12 || v[2] < 1 || v[3] > 23 || v[4] > 59 || v[5] > 59 || v[7] > 23 || v[8] > 59 {
		return malformed()
	}
	t := time.Date(v[0], time.Month(v[1]), v[2], v[3], v[4], v[5], v[6]*100, time.UTC)
	if t.Day() != v[2] {
		return malformed() // a day the month does not have
	}
	off := v[7]*3600 + v[8]*60
	if s[28] == '-' {
		off = -off
	}
	return DateTime{t.In(fixedZone(off))}, nil
}

// fixedDigits reads s, all decimal digits.
func fixedDigits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int(c)
	}
	return n, true
}

// Value implements driver.Valuer so that GORM models can hold DateTime fields.
func (d DateTime) Value() (driver.Value, error) { return d.Storage(), nil }

// Scan implements sql.Scanner.
func (d *DateTime) Scan(src any) error {
	switch v := src.(type) {
	case string:
		dt, err := ParseStorage(v)
		*d = dt
		return err
	case []byte:
		dt, err := ParseStorage(string(v))
		*d = dt
		return err
	}
	return fmt.Errorf("engine: cannot scan %T into DateTime", src)
}

// MarshalJSON writes the output format.
func (d DateTime) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 36), '"')
	b = d.AppendFormat(b)
	return append(b, '"'), nil
}

// UnmarshalJSON reads the send format strictly.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", b, ErrDateTime)
	}
	dt, err := ParseDateTime(s)
	if err != nil {
		return err
	}
	*d = dt
	return nil
}

// Now returns the current instant in UTC, truncated to the 100 ns the format carries.
func Now() DateTime { return DateTime{time.Now().UTC().Truncate(100 * time.Nanosecond)} }
