package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatTime(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  TimeFormats
	}{
		{
			name:  "decisions §8 example, Central Daylight",
			value: "2024-03-10T14:30:00-05:00",
			want: TimeFormats{
				Original: "2024-03-10T14:30:00-05:00",
				Formats: TimeFormatSet{
					Value:             "Sunday - March 10, 2024 - 2:30:00 PM Central Daylight Time",
					RoundTrip:         "2024-03-10T14:30:00.0000000-05:00",
					Offset:            "-05:00:00",
					TimeZone:          "Central Daylight Time",
					ISO8601:           "2024-03-10T14:30:00.0000000-05:00",
					RFC3339:           "2024-03-10T14:30:00.000-05:00",
					ShortDate:         "3/10/2024",
					LongDate:          "Sunday, March 10, 2024",
					ShortTime:         "2:30 PM",
					LongTime:          "2:30:00 PM",
					FullDateTime:      "Sunday, March 10, 2024 2:30:00 PM",
					SortableDateTime:  "2024-03-10T14:30:00",
					UniversalSortable: "2024-03-10 19:30:00Z",
					UnixTimestamp:     "1710099000",
					UTC:               "2024-03-10 19:30:00 UTC",
					UTCISO8601:        "2024-03-10T19:30:00.0000000Z",
					Quarter:           "1",
					Week:              "10",
					Day:               "70",
					IsWeekend:         "True",
				},
				Conversions: TimeConversions{
					Eastern:  TimeInZone{DateTime: "Mar 10, 2024 3:30:00 PM EDT", Offset: "-04:00"},
					Mountain: TimeInZone{DateTime: "Mar 10, 2024 1:30:00 PM MDT", Offset: "-06:00"},
					Pacific:  TimeInZone{DateTime: "Mar 10, 2024 12:30:00 PM PDT", Offset: "-07:00"},
				},
			},
		},
		{
			name:  "Eastern Standard in January",
			value: "2024-01-15T10:00:00-05:00",
			want: TimeFormats{
				Original: "2024-01-15T10:00:00-05:00",
				Formats: TimeFormatSet{
					Value:             "Monday - January 15, 2024 - 10:00:00 AM Eastern Standard Time",
					RoundTrip:         "2024-01-15T10:00:00.0000000-05:00",
					Offset:            "-05:00:00",
					TimeZone:          "Eastern Standard Time",
					ISO8601:           "2024-01-15T10:00:00.0000000-05:00",
					RFC3339:           "2024-01-15T10:00:00.000-05:00",
					ShortDate:         "1/15/2024",
					LongDate:          "Monday, January 15, 2024",
					ShortTime:         "10:00 AM",
					LongTime:          "10:00:00 AM",
					FullDateTime:      "Monday, January 15, 2024 10:00:00 AM",
					SortableDateTime:  "2024-01-15T10:00:00",
					UniversalSortable: "2024-01-15 15:00:00Z",
					UnixTimestamp:     "1705330800", // 1704067200 (2024-01-01Z) + 14 days + 15 h
					UTC:               "2024-01-15 15:00:00 UTC",
					UTCISO8601:        "2024-01-15T15:00:00.0000000Z",
					Quarter:           "1",
					Week:              "3", // 2024-01-01 is a Monday: week 3 is Jan 15–21
					Day:               "15",
					IsWeekend:         "False",
				},
				Conversions: TimeConversions{
					Eastern:  TimeInZone{DateTime: "Jan 15, 2024 10:00:00 AM EST", Offset: "-05:00"},
					Mountain: TimeInZone{DateTime: "Jan 15, 2024 8:00:00 AM MST", Offset: "-07:00"},
					Pacific:  TimeInZone{DateTime: "Jan 15, 2024 7:00:00 AM PST", Offset: "-08:00"},
				},
			},
		},
		{
			name:  "India, no named zone, local date differs from US dates",
			value: "2024-07-01T08:00:00+05:30",
			want: TimeFormats{
				Original: "2024-07-01T08:00:00+05:30",
				Formats: TimeFormatSet{
					Value:             "Monday - July 1, 2024 - 8:00:00 AM UTC+5.5",
					RoundTrip:         "2024-07-01T08:00:00.0000000+05:30",
					Offset:            "05:30:00",
					TimeZone:          "UTC+5.5",
					ISO8601:           "2024-07-01T08:00:00.0000000+05:30",
					RFC3339:           "2024-07-01T08:00:00.000+05:30",
					ShortDate:         "7/1/2024",
					LongDate:          "Monday, July 1, 2024",
					ShortTime:         "8:00 AM",
					LongTime:          "8:00:00 AM",
					FullDateTime:      "Monday, July 1, 2024 8:00:00 AM",
					SortableDateTime:  "2024-07-01T08:00:00",
					UniversalSortable: "2024-07-01 02:30:00Z",
					UnixTimestamp:     "1719801000", // 1704067200 + 182 days + 2.5 h
					UTC:               "2024-07-01 02:30:00 UTC",
					UTCISO8601:        "2024-07-01T02:30:00.0000000Z",
					Quarter:           "3",
					Week:              "27", // day 183 = 26 full weeks from Monday Jan 1, + 1
					Day:               "183",
					IsWeekend:         "False",
				},
				Conversions: TimeConversions{
					Eastern:  TimeInZone{DateTime: "Jun 30, 2024 10:30:00 PM EDT", Offset: "-04:00"},
					Mountain: TimeInZone{DateTime: "Jun 30, 2024 8:30:00 PM MDT", Offset: "-06:00"},
					Pacific:  TimeInZone{DateTime: "Jun 30, 2024 7:30:00 PM PDT", Offset: "-07:00"},
				},
			},
		},
		{
			name:  "Z with seven fraction digits on the last day of a leap year",
			value: "2024-12-31T23:59:59.9999999Z",
			want: TimeFormats{
				Original: "2024-12-31T23:59:59.9999999Z",
				Formats: TimeFormatSet{
					Value:             "Tuesday - December 31, 2024 - 11:59:59 PM UTC+0",
					RoundTrip:         "2024-12-31T23:59:59.9999999+00:00",
					Offset:            "00:00:00",
					TimeZone:          "UTC+0",
					ISO8601:           "2024-12-31T23:59:59.9999999+00:00",
					RFC3339:           "2024-12-31T23:59:59.999+00:00", // truncated, not rounded
					ShortDate:         "12/31/2024",
					LongDate:          "Tuesday, December 31, 2024",
					ShortTime:         "11:59 PM",
					LongTime:          "11:59:59 PM",
					FullDateTime:      "Tuesday, December 31, 2024 11:59:59 PM",
					SortableDateTime:  "2024-12-31T23:59:59",
					UniversalSortable: "2024-12-31 23:59:59Z",
					UnixTimestamp:     "1735689599", // 2025-01-01Z is 1735689600
					UTC:               "2024-12-31 23:59:59 UTC",
					UTCISO8601:        "2024-12-31T23:59:59.9999999Z",
					Quarter:           "4",
					Week:              "1", // ISO week 1 of 2025 (.NET GetWeekOfYear said 53)
					Day:               "366",
					IsWeekend:         "False",
				},
				Conversions: TimeConversions{
					Eastern:  TimeInZone{DateTime: "Dec 31, 2024 6:59:59 PM EST", Offset: "-05:00"},
					Mountain: TimeInZone{DateTime: "Dec 31, 2024 4:59:59 PM MST", Offset: "-07:00"},
					Pacific:  TimeInZone{DateTime: "Dec 31, 2024 3:59:59 PM PST", Offset: "-08:00"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormatTime(tt.value)
			if err != nil {
				t.Fatalf("FormatTime(%q): %v", tt.value, err)
			}
			diffMembers(t, got, &tt.want)
		})
	}
}

// diffMembers reports every JSON member whose value differs.
func diffMembers(t *testing.T, got, want *TimeFormats) {
	t.Helper()
	g, w := flatten(t, got), flatten(t, want)
	for k, wv := range w {
		if gv := g[k]; gv != wv {
			t.Errorf("%s = %q, want %q", k, gv, wv)
		}
	}
	if len(g) != len(w) {
		t.Errorf("got %d members, want %d", len(g), len(w))
	}
}

// flatten maps "Formats.Week"-style paths to the string values of the JSON encoding.
func flatten(t *testing.T, v *TimeFormats) map[string]string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch v := v.(type) {
			case map[string]any:
				walk(prefix+k+".", v)
			case string:
				out[prefix+k] = v
			default:
				t.Errorf("%s%s is %T, want a string", prefix, k, v)
			}
		}
	}
	walk("", tree)
	return out
}

// TestFormatTimeGolden pins the JSON text, member names and order included, for the example of
// decisions §8.
func TestFormatTimeGolden(t *testing.T) {
	got, err := FormatTime("2024-03-10T14:30:00-05:00")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	want, err := os.ReadFile(filepath.Join("testdata", "formats-time-2024-03-10.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("JSON differs from testdata/formats-time-2024-03-10.json:\n%s", b)
	}
}

func TestTimeZoneName(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{value: "2024-07-01T12:00:00-04:00", want: "Eastern Daylight Time"}, // before Atlantic Standard
		{value: "2024-01-01T12:00:00-04:00", want: "Atlantic Standard Time"},
		{value: "2024-07-01T12:00:00-03:00", want: "Atlantic Daylight Time"},
		{value: "2024-01-01T12:00:00-06:00", want: "Central Standard Time"},
		{value: "2024-07-01T12:00:00-06:00", want: "Mountain Daylight Time"},
		{value: "2024-01-01T12:00:00-07:00", want: "Mountain Standard Time"},
		{value: "2024-07-01T12:00:00-07:00", want: "Pacific Daylight Time"},
		{value: "2024-01-01T12:00:00-08:00", want: "Pacific Standard Time"},
		{value: "2024-07-01T12:00:00-08:00", want: "Alaska Daylight Time"},
		{value: "2024-01-01T12:00:00-09:00", want: "Alaska Standard Time"},
		{value: "2024-07-01T12:00:00-10:00", want: "Hawaii Standard Time"},
		{value: "2024-01-01T12:00:00-10:00", want: "Hawaii Standard Time"},
		{value: "2024-07-01T12:00:00-02:30", want: "Newfoundland Daylight Time"},
		{value: "2024-01-01T12:00:00-03:30", want: "Newfoundland Standard Time"},
		{value: "2024-07-01T12:00:00-03:30", want: "UTC-3.5"}, // St John's is on -02:30 then
		{value: "2024-07-01T12:00:00-09:00", want: "UTC-9"},   // Anchorage is on -08:00 then
		// The offset is compared at the instant: around the 2024-03-10 change in New York.
		{value: "2024-03-10T01:30:00-05:00", want: "Eastern Standard Time"},
		{value: "2024-03-10T03:30:00-04:00", want: "Eastern Daylight Time"},
		{value: "2024-03-10T01:30:00-06:00", want: "Central Standard Time"}, // 07:30Z: NY on EDT already
		{value: "2024-03-10T03:30:00-05:00", want: "Central Daylight Time"}, // 08:30Z: Chicago just changed
		{value: "2024-07-01T12:00:00+00:00", want: "UTC+0"},
		{value: "2024-07-01T12:00:00-00:00", want: "UTC+0"},
		{value: "2024-07-01T12:00:00Z", want: "UTC+0"},
		{value: "2024-07-01T12:00:00+05:45", want: "UTC+5.75"},
		{value: "2024-07-01T12:00:00+14:00", want: "UTC+14"},
		{value: "2024-07-01T12:00:00-12:00", want: "UTC-12"},
	}
	for _, tt := range tests {
		got, err := FormatTime(tt.value)
		if err != nil {
			t.Errorf("FormatTime(%q): %v", tt.value, err)
			continue
		}
		if got.Formats.TimeZone != tt.want {
			t.Errorf("FormatTime(%q).Formats.TimeZone = %q, want %q", tt.value, got.Formats.TimeZone, tt.want)
		}
		if !strings.HasSuffix(got.Formats.Value, " "+tt.want) {
			t.Errorf("FormatTime(%q).Formats.Value = %q, want suffix %q", tt.value, got.Formats.Value, tt.want)
		}
	}
}

func TestFormatTimeOffsetMember(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{value: "2024-07-01T12:00:00-05:00", want: "-05:00:00"},
		{value: "2024-07-01T12:00:00+05:30", want: "05:30:00"},
		{value: "2024-07-01T12:00:00-03:30", want: "-03:30:00"},
		{value: "2024-07-01T12:00:00Z", want: "00:00:00"},
		{value: "2024-07-01T12:00:00-14:00", want: "-14:00:00"},
	}
	for _, tt := range tests {
		got, err := FormatTime(tt.value)
		if err != nil {
			t.Errorf("FormatTime(%q): %v", tt.value, err)
			continue
		}
		if got.Formats.Offset != tt.want {
			t.Errorf("FormatTime(%q).Formats.Offset = %q, want %q", tt.value, got.Formats.Offset, tt.want)
		}
	}
}

func TestFormatTimeFraction(t *testing.T) {
	tests := []struct {
		value, roundTrip, rfc3339, utc string
	}{
		{value: "2024-03-10T14:30:00.5-05:00", roundTrip: "2024-03-10T14:30:00.5000000-05:00",
			rfc3339: "2024-03-10T14:30:00.500-05:00", utc: "2024-03-10T19:30:00.5000000Z"},
		{value: "2024-03-10T14:30:00.1234567+01:00", roundTrip: "2024-03-10T14:30:00.1234567+01:00",
			rfc3339: "2024-03-10T14:30:00.123+01:00", utc: "2024-03-10T13:30:00.1234567Z"},
	}
	for _, tt := range tests {
		got, err := FormatTime(tt.value)
		if err != nil {
			t.Errorf("FormatTime(%q): %v", tt.value, err)
			continue
		}
		f := got.Formats
		if f.RoundTrip != tt.roundTrip || f.ISO8601 != tt.roundTrip || f.RFC3339 != tt.rfc3339 || f.UTCISO8601 != tt.utc {
			t.Errorf("FormatTime(%q): RoundTrip %q ISO8601 %q RFC3339 %q UTC_ISO8601 %q, want %q %q %q %q",
				tt.value, f.RoundTrip, f.ISO8601, f.RFC3339, f.UTCISO8601, tt.roundTrip, tt.roundTrip, tt.rfc3339, tt.utc)
		}
	}
}

func TestFormatTimeErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
	}{
		{name: "empty", value: ""},
		{name: "no offset", value: "2024-03-10T14:30:00"},
		{name: "space instead of T", value: "2024-03-10 14:30:00Z"},
		{name: "8 fraction digits", value: "2024-03-10T14:30:00.12345678Z"},
		{name: "culture format", value: "March 10 2024"},
		{name: "empty fraction", value: "2024-03-10T14:30:00.Z"},
		{name: "lower-case t and z", value: "2024-03-10t14:30:00z"},
		{name: "offset without colon", value: "2024-03-10T14:30:00+0500"},
		{name: "offset hours only", value: "2024-03-10T14:30:00+05"},
		{name: "offset beyond 14:00", value: "2024-03-10T14:30:00+14:30"},
		{name: "offset minutes 60", value: "2024-03-10T14:30:00+05:60"},
		{name: "no seconds", value: "2024-03-10T14:30Z"},
		{name: "February 30", value: "2024-02-30T00:00:00Z"},
		{name: "February 29 of a common year", value: "2023-02-29T00:00:00Z"},
		{name: "month 13", value: "2024-13-01T00:00:00Z"},
		{name: "hour 24", value: "2024-03-10T24:00:00Z"},
		{name: "leap second", value: "2016-12-31T23:59:60Z"},
		{name: "year 0", value: "0000-06-01T00:00:00Z"},
		{name: "leading space", value: " 2024-03-10T14:30:00Z"},
		{name: "trailing space", value: "2024-03-10T14:30:00Z "},
		{name: "signed digits", value: "2024-+3-10T14:30:00Z"},
		{name: "UTC after year 9999", value: "9999-12-31T23:00:00-05:00"},
		{name: "UTC before year 1", value: "0001-01-01T00:00:00+01:00"},
		{name: "Eastern before year 1", value: "0001-01-01T01:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormatTime(tt.value)
			if !errors.Is(err, ErrBadTime) {
				t.Fatalf("FormatTime(%q) = %+v, %v; want an error wrapping ErrBadTime", tt.value, got, err)
			}
			if got != nil {
				t.Errorf("FormatTime(%q) returned a result with its error", tt.value)
			}
		})
	}
}

func TestFormatTimeRange(t *testing.T) {
	for _, v := range []string{"0001-01-02T00:00:00Z", "9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59+14:00"} {
		if _, err := FormatTime(v); err != nil {
			t.Errorf("FormatTime(%q): %v", v, err)
		}
	}
}

// Zone data: the child processes below re-run this test binary.
const (
	childEnv  = "CREDO_PLATFORM_TZ_CHILD"  // "bogus" or "hidden"
	hiddenEnv = "CREDO_PLATFORM_TZ_HIDDEN" // path list that the "hidden" child must not see
)

// childTests are the tests a child runs; TestChildZoneSources proves its environment.
const childTests = "^(TestFormatTime|TestFormatTimeGolden|TestTimeZoneName|TestChildZoneSources)$"

// TestEmbeddedZoneData proves that the zones come from the embedded time/tzdata copy.
// time.LoadLocation tries $ZONEINFO, then the system directories, then the embedded copy, then
// $GOROOT/lib/time/zoneinfo.zip. The "bogus ZONEINFO" child sets ZONEINFO=/nonexistent and unsets
// TZ. The "no system zoneinfo" child also runs in a private user and mount namespace (unshare)
// where empty tmpfs mounts cover every system directory and $GOROOT/lib/time, so that the
// embedded copy is the only source left; it is skipped where unshare is unavailable.
func TestEmbeddedZoneData(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("inside a child")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	baseEnv := func() []string {
		var env []string
		for _, kv := range os.Environ() {
			if name, _, _ := strings.Cut(kv, "="); name != "TZ" && name != "ZONEINFO" && name != childEnv && name != hiddenEnv {
				env = append(env, kv)
			}
		}
		return append(env, "ZONEINFO=/nonexistent")
	}
	run := func(t *testing.T, cmd *exec.Cmd, mustPass ...string) {
		t.Helper()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child failed: %v\n%s", err, out)
		}
		for _, s := range mustPass {
			if !bytes.Contains(out, []byte("--- PASS: "+s+" ")) {
				t.Fatalf("child did not pass %s:\n%s", s, out)
			}
		}
	}

	t.Run("bogus ZONEINFO, TZ unset", func(t *testing.T) {
		cmd := exec.Command(bin, "-test.run="+childTests, "-test.v")
		cmd.Env = append(baseEnv(), childEnv+"=bogus")
		run(t, cmd, "TestFormatTime", "TestTimeZoneName", "TestChildZoneSources")
	})

	t.Run("no system zoneinfo", func(t *testing.T) {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skip("unshare not found")
		}
		if out, err := exec.Command(unshare, "--user", "--map-root-user", "--mount", "true").CombinedOutput(); err != nil {
			t.Skipf("no user namespaces here: %v %s", err, out)
		}
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Skipf("cannot find GOROOT to hide its zoneinfo.zip: %v", err)
		}
		hidden := []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo",
			filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time")}
		const script = `set -e
IFS=:
for d in $` + hiddenEnv + `; do
	if [ -d "$d" ]; then mount -t tmpfs tmpfs "$d"; elif [ -e "$d" ]; then mount --bind /dev/null "$d"; fi
done
exec "$@"`
		cmd := exec.Command(unshare, "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
			bin, "-test.run="+childTests, "-test.v")
		cmd.Env = append(baseEnv(), childEnv+"=hidden", hiddenEnv+"="+strings.Join(hidden, ":"))
		run(t, cmd, "TestFormatTime", "TestTimeZoneName", "TestChildZoneSources")
	})
}

// TestChildZoneSources checks, inside a child of TestEmbeddedZoneData, that the environment is
// what the parent arranged, so that passing zone tests prove the embedded copy was used.
func TestChildZoneSources(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("runs only inside TestEmbeddedZoneData")
	}
	if z := os.Getenv("ZONEINFO"); z != "/nonexistent" {
		t.Errorf("ZONEINFO = %q", z)
	}
	if tz, ok := os.LookupEnv("TZ"); ok {
		t.Errorf("TZ is set to %q", tz)
	}
	if mode != "hidden" {
		return
	}
	for _, p := range filepath.SplitList(os.Getenv(hiddenEnv)) {
		if entries, err := os.ReadDir(p); err == nil && len(entries) > 0 {
			t.Errorf("%s is still visible (%d entries)", p, len(entries))
		}
	}
	if _, err := os.Stat("/usr/share/zoneinfo/America/New_York"); err == nil {
		t.Error("/usr/share/zoneinfo/America/New_York is still visible")
	}
}
