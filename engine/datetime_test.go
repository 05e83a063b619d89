package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseDateTimeRoundTrip(t *testing.T) {
	tests := []struct {
		in, out string
	}{
		{in: "2024-03-10T14:30:00.1234567-06:00", out: "2024-03-10T14:30:00.1234567-06:00"},
		{in: "2024-03-10T14:30:00Z", out: "2024-03-10T14:30:00+00:00"},
		{in: "2024-03-10T14:30:00.5+05:30", out: "2024-03-10T14:30:00.5+05:30"},
		{in: "2024-03-10T14:30:00.1000000+00:00", out: "2024-03-10T14:30:00.1+00:00"},
		{in: "0001-01-01T00:00:00Z", out: "0001-01-01T00:00:00+00:00"},
		{in: "2024-02-29T23:59:59.9999999-14:00", out: "2024-02-29T23:59:59.9999999-14:00"},
	}
	for _, tt := range tests {
		d, err := ParseDateTime(tt.in)
		if err != nil {
			t.Fatalf("ParseDateTime(%q): %v", tt.in, err)
		}
		if got := d.String(); got != tt.out {
			t.Errorf("ParseDateTime(%q).String() = %q, want %q", tt.in, got, tt.out)
		}
		back, err := ParseStorage(d.Storage())
		if err != nil {
			t.Fatalf("ParseStorage(%q): %v", d.Storage(), err)
		}
		if back.String() != tt.out || !back.Equal(d.Time) {
			t.Errorf("storage round trip of %q gave %q", tt.in, back.String())
		}
	}
}

func TestParseDateTimeRejects(t *testing.T) {
	for _, in := range []string{
		"", "2024-03-10T14:30:00", "2024-03-10 14:30:00Z", "2024-03-10T14:30:00.12345678Z",
		"2024-03-10T14:30Z", "2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "2024-03-10T24:00:00Z",
		"2024-03-10T14:30:00+1500", "2024-03-10T14:30:00+15:00", "2024-03-10T14:30:00+14:30",
		"10/03/2024 2:30 PM", "2024-03-10T14:30:00.Z", "2024-03-10T14:30:00z",
		// Signs inside the offset (found by FuzzParseDateTime): once read as +04:59, +01:00, -01:00, +00:30.
		"2024-03-10T14:30:00+05:-1", "2024-03-10T14:30:00++1:00", "2024-03-10T14:30:00-+1:00", "2024-03-10T14:30:00+-0:30",
	} {
		if _, err := ParseDateTime(in); !errors.Is(err, ErrDateTime) {
			t.Errorf("ParseDateTime(%q) = %v, want ErrDateTime", in, err)
		}
	}
}

// The storage form must order by instant, whatever the offsets, so that SQL range filters and
// sorts on the text column are correct.
func TestStorageOrdersByInstant(t *testing.T) {
	ins := []string{
		"2024-03-10T14:30:00-06:00", // 20:30Z
		"2024-03-10T21:00:00+01:00", // 20:00Z
		"2024-03-10T20:30:00.0000001Z",
		"2024-03-11T01:59:00+05:30", // 20:29Z
	}
	var stored []string
	for _, in := range ins {
		d, err := ParseDateTime(in)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, d.Storage())
	}
	sort.Strings(stored)
	want := []string{"2024-03-10T21:00:00+01:00", "2024-03-11T01:59:00+05:30", "2024-03-10T14:30:00-06:00", "2024-03-10T20:30:00.0000001+00:00"}
	for i, s := range stored {
		d, _ := ParseStorage(s)
		if d.String() != want[i] {
			t.Errorf("position %d: %s, want %s", i, d.String(), want[i])
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"CommentIdentifier": "comment_identifier", "UTC": "utc", "UtcArchived": "utc_archived",
		"OAuthProviderUserId": "o_auth_provider_user_id", "Street1": "street1", "ImageUrl": "image_url",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDateTimeFormsMatchTimePackage holds the hand-written storage parser and formatters to
// what the time package's layouts give, over random instants, fractions and offsets.
func TestDateTimeFormsMatchTimePackage(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 22))
	for range 5000 {
		sec := -62135596800 + rng.Int64N(253402300799+62135596800) // Unix seconds, 0001-01-01 .. 9999-12-31
		ticks := rng.Int64N(10_000_000)
		if rng.IntN(4) == 0 {
			ticks = 0
		}
		off := (rng.IntN(28*60) - 14*60) * 60
		u := time.Unix(sec, ticks*100).UTC()
		d := DateTime{Time: u.In(time.FixedZone("", off))}

		wantStorage := u.Format("2006-01-02T15:04:05.0000000Z") + d.Time.Format("-07:00")
		if got := d.Storage(); got != wantStorage {
			t.Fatalf("Storage of %v: %q, want %q", d.Time, got, wantStorage)
		}
		want := d.Time.Format("2006-01-02T15:04:05")
		if ticks != 0 {
			want += "." + strings.TrimRight(fmt.Sprintf("%07d", ticks), "0")
		}
		want += d.Time.Format("-07:00")
		if got := d.String(); got != want {
			t.Fatalf("String of %v: %q, want %q", d.Time, got, want)
		}
		back, err := ParseStorage(wantStorage)
		if err != nil {
			t.Fatalf("ParseStorage(%q): %v", wantStorage, err)
		}
		if !back.Equal(u) || back.String() != want {
			t.Fatalf("ParseStorage(%q) = %v (%s), want %v (%s)", wantStorage, back.Time, back, u, want)
		}
	}
}

// TestOffsetUnderAMinuteWest: an offset is written in whole minutes, signed as the "-07:00"
// layout signs it, so a zero offset has one spelling, +00:00; Storage and String wrote an
// offset of under a minute west as -00:00, which ParseStorage reads as +00:00 (FuzzParseStorage
// found the stored form that does not read back as written).
func TestOffsetUnderAMinuteWest(t *testing.T) {
	u := time.Date(2024, 3, 10, 14, 30, 0, 0, time.UTC)
	for _, off := range []int{-1, -30, -59, -60, -61, -3599, 0, 30, 59, 61} {
		d := DateTime{Time: u.In(time.FixedZone("", off))}
		want := d.Time.Format("-07:00")
		if got := d.Storage(); !strings.HasSuffix(got, want) {
			t.Errorf("Storage with an offset of %d s: %q, want it to end %s", off, got, want)
		}
		if got := d.String(); !strings.HasSuffix(got, want) {
			t.Errorf("String with an offset of %d s: %q, want it to end %s", off, got, want)
		}
	}
	back, err := ParseStorage("2024-03-10T14:30:00.0000000Z-00:00")
	if err != nil || back.Storage() != "2024-03-10T14:30:00.0000000Z+00:00" {
		t.Errorf("ParseStorage of a -00:00 row: %v, %v; want it read as +00:00", back, err)
	}
}

func TestParseStorageRejects(t *testing.T) {
	good := "2024-03-10T20:30:00.1234567Z-06:00"
	if _, err := ParseStorage(good); err != nil {
		t.Fatalf("%q: %v", good, err)
	}
	for _, s := range []string{
		"", good[:33], good + "0",
		"2024-02-30T20:30:00.1234567Z-06:00", // no such day
		"2024-13-10T20:30:00.1234567Z-06:00",
		"2024-00-10T20:30:00.1234567Z-06:00",
		"2024-03-00T20:30:00.1234567Z-06:00",
		"2024-03-10T24:30:00.1234567Z-06:00",
		"2024-03-10T20:60:00.1234567Z-06:00",
		"2024-03-10T20:30:60.1234567Z-06:00",
		"2024-03-10T20:30:00.123456xZ-06:00",
		"2024-03-10T20:30:00.1234567Z*06:00",
		"2024-03-10T20:30:00.1234567Z-24:00",
		"2024-03-10T20:30:00.1234567Z-06:60",
		"2024-03-10 20:30:00.1234567Z-06:00",
		"2024-03-10T20:30:00,1234567Z-06:00",
		"+024-03-10T20:30:00.1234567Z-06:00",
	} {
		if d, err := ParseStorage(s); err == nil {
			t.Errorf("ParseStorage(%q) accepted: %v", s, d.Time)
		}
	}
}

// TestParseDateTimeRange: a well-formed value whose instant falls outside years 1 to 9999 in
// UTC is refused (decisions §4); the bounds themselves are accepted in any offset that keeps
// them in range.
func TestParseDateTimeRange(t *testing.T) {
	for _, in := range []string{
		"0001-01-01T00:00:00Z", "0001-01-01T00:00:00-01:00", "0001-01-01T14:00:00+14:00",
		"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999+02:00", "9999-12-31T09:59:59-14:00",
	} {
		if _, err := ParseDateTime(in); err != nil {
			t.Errorf("ParseDateTime(%q): %v", in, err)
		}
	}
	for _, in := range []string{
		"9999-12-31T23:00:00-02:00", "9999-12-31T10:00:00-14:00", "0001-01-01T00:30:00+01:00",
		"0001-01-01T00:00:00.0000001+00:01", "0001-01-01T13:59:59.9999999+14:00",
	} {
		_, err := ParseDateTime(in)
		if !errors.Is(err, ErrDateTime) || !strings.Contains(fmt.Sprint(err), "outside") {
			t.Errorf("ParseDateTime(%q) = %v, want an out-of-range ErrDateTime", in, err)
		}
	}
}

// TestParseStorageReadsOutOfRangeRows: rows written before ParseDateTime bounded instants hold
// the UTC year 0 or 10000; they read back exactly as they were written, never as an error.
func TestParseStorageReadsOutOfRangeRows(t *testing.T) {
	for _, in := range []string{"9999-12-31T23:00:00-02:00", "9999-12-31T10:00:00.1234567-14:00", "0001-01-01T00:30:00+01:00"} {
		tm, err := time.Parse("2006-01-02T15:04:05.9999999-07:00", in)
		if err != nil {
			t.Fatal(err)
		}
		stored := DateTime{tm}.Storage() // what the write path stored before the fix
		back, err := ParseStorage(stored)
		if err != nil {
			t.Fatalf("ParseStorage(%q) of %s: %v", stored, in, err)
		}
		if back.String() != in || !back.Equal(tm) {
			t.Errorf("ParseStorage(%q) = %s, want %s", stored, back, in)
		}
	}
	for _, s := range []string{"10001-01-01T00:00:00.0000000Z+00:00", "10000-13-01T00:00:00.0000000Z+00:00"} {
		if d, err := ParseStorage(s); err == nil {
			t.Errorf("ParseStorage(%q) accepted: %v", s, d.Time)
		}
	}
}
