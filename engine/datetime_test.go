package engine

import (
	"errors"
	"sort"
	"testing"
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
