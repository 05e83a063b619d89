package platform

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	// The zone database is embedded so that the formats/time operation gives the same answer on
	// every machine, including containers without /usr/share/zoneinfo (decisions §8).
	_ "time/tzdata"

	"credo/engine"
)

// ErrBadTime is wrapped by every error FormatTime returns for a value that is missing or not in
// the send format; the HTTP layer turns it into a 400 naming the `value` parameter. It is the
// engine's ErrDateTime: values are read by the one datetime parser, engine.ParseDateTime.
var ErrBadTime = engine.ErrDateTime

// TimeFormats is the result of the formats/time operation (api.md "Platform operations
// (version 2)", decisions §8). Every member is a string.
type TimeFormats struct {
	Original    string          `json:"Original"`
	Formats     TimeFormatSet   `json:"Formats"`
	Conversions TimeConversions `json:"Conversions"`
}

// TimeFormatSet holds the input reformatted, en-US culture, as the original .NET service did.
// Members describing the local date or time (Value, ShortDate … SortableDateTime, Quarter, Week,
// Day, IsWeekend) use the date and time as written, in the input's own offset; UniversalSortable,
// UnixTimestamp, UTC and UTC_ISO8601 use the UTC instant.
type TimeFormatSet struct {
	// Value is "dddd - MMMM d, yyyy - h:mm:ss tt" followed by a space and TimeZone.
	Value string `json:"Value"`
	// RoundTrip is .NET "o": seven fraction digits and the offset; Z input gives +00:00.
	RoundTrip string `json:"RoundTrip"`
	// Offset is the .NET TimeSpan "c" form of the offset: "-05:00:00", and with no sign when
	// not negative ("05:30:00", "00:00:00"), as the original printed it.
	Offset string `json:"Offset"`
	// TimeZone names the offset; see FormatTime.
	TimeZone string `json:"TimeZone"`
	// ISO8601 equals RoundTrip.
	ISO8601 string `json:"ISO8601"`
	// RFC3339 has three fraction digits (truncated, not rounded) and the offset.
	RFC3339           string `json:"RFC3339"`
	ShortDate         string `json:"ShortDate"`         // M/d/yyyy
	LongDate          string `json:"LongDate"`          // dddd, MMMM d, yyyy
	ShortTime         string `json:"ShortTime"`         // h:mm tt
	LongTime          string `json:"LongTime"`          // h:mm:ss tt
	FullDateTime      string `json:"FullDateTime"`      // dddd, MMMM d, yyyy h:mm:ss tt
	SortableDateTime  string `json:"SortableDateTime"`  // yyyy-MM-ddTHH:mm:ss, local
	UniversalSortable string `json:"UniversalSortable"` // yyyy-MM-dd HH:mm:ssZ, UTC
	// UnixTimestamp is whole seconds since 1970-01-01T00:00:00Z, rounded down.
	UnixTimestamp string `json:"UnixTimestamp"`
	UTC           string `json:"UTC"`         // yyyy-MM-dd HH:mm:ss UTC
	UTCISO8601    string `json:"UTC_ISO8601"` // yyyy-MM-ddTHH:mm:ss.fffffffZ, UTC
	Quarter       string `json:"Quarter"`     // 1 to 4
	// Week is the ISO 8601 week number (weeks start on Monday; week 1 holds the year's first
	// Thursday), so 2024-12-31 is week 1 (of 2025). The original's .NET
	// Calendar.GetWeekOfYear(FirstFourDayWeek, Monday) never rolls over to the next year and
	// said 53 there; we follow ISO 8601 as decisions §8 describes.
	Week      string `json:"Week"`
	Day       string `json:"Day"`       // day of the year, 1 to 366
	IsWeekend string `json:"IsWeekend"` // "True" on Saturday and Sunday, else "False"
}

// TimeConversions holds the instant in three US zones.
type TimeConversions struct {
	Eastern  TimeInZone `json:"Eastern"`
	Mountain TimeInZone `json:"Mountain"`
	Pacific  TimeInZone `json:"Pacific"`
}

// TimeInZone is an instant in one zone: DateTime "MMM d, yyyy h:mm:ss tt" and the zone's
// abbreviation (EST or EDT, MST or MDT, PST or PDT by whether daylight time is in effect), and
// Offset "±HH:mm".
type TimeInZone struct {
	DateTime string `json:"DateTime"`
	Offset   string `json:"Offset"`
}

// namedZone is one of the zones that TimeZone and Conversions consult.
type namedZone struct {
	name   string // "Eastern": becomes "Eastern Daylight Time" / "Eastern Standard Time"
	iana   string
	letter string // first letter of the abbreviation; "" when not used in Conversions
	loc    *time.Location
}

// namedZones lists the zones in the order TimeZone tries them (decisions §8).
var namedZones = sync.OnceValues(func() ([]namedZone, error) {
	zones := []namedZone{
		{name: "Eastern", iana: "America/New_York", letter: "E"},
		{name: "Central", iana: "America/Chicago"},
		{name: "Mountain", iana: "America/Denver", letter: "M"},
		{name: "Pacific", iana: "America/Los_Angeles", letter: "P"},
		{name: "Alaska", iana: "America/Anchorage"},
		{name: "Hawaii", iana: "Pacific/Honolulu"},
		{name: "Atlantic", iana: "America/Halifax"},
		{name: "Newfoundland", iana: "America/St_Johns"},
	}
	for i := range zones {
		loc, err := time.LoadLocation(zones[i].iana)
		if err != nil {
			return nil, fmt.Errorf("platform: time zone %s: %w", zones[i].iana, err)
		}
		zones[i].loc = loc
	}
	return zones, nil
})

// FormatTime parses value with engine.ParseDateTime, in the send format (api.md "Date and time
// values", decisions §3): `yyyy-MM-ddTHH:mm:ss`, an optional fraction of 1 to 7 digits, then `Z` or `±HH:mm` (offset at
// most 14:00, as .NET allows). Anything else, including an empty value, a value without offset,
// 8 or more fraction digits, lower-case `t`/`z`, a space instead of `T`, or an instant whose UTC
// date (or date in a converted zone) falls outside years 1 to 9999, is an error wrapping
// ErrBadTime. Other errors mean the embedded zone database could not be read.
//
// TimeZone is the first of Eastern, Central, Mountain, Pacific, Alaska, Hawaii, Atlantic and
// Newfoundland whose UTC offset at that instant equals the input's offset, named
// "<Zone> Daylight Time" when that zone observes daylight time at that instant and
// "<Zone> Standard Time" otherwise (Hawaii is always Standard). When none matches it is "UTC"
// followed by the signed offset in hours, written as a decimal with no trailing zeros (two
// decimals at most): "UTC+5.5", "UTC-3", "UTC+5.75". A zero offset, whether written `Z`,
// `+00:00` or `-00:00`, gives "UTC+0", and like every `Z` input prints as +00:00 in RoundTrip.
func FormatTime(value string) (*TimeFormats, error) {
	d, err := engine.ParseDateTime(value)
	if err != nil {
		return nil, err
	}
	t := d.Time
	zones, err := namedZones()
	if err != nil {
		return nil, err
	}
	_, offset := t.Zone()
	u := t.UTC()

	tzName := offsetName(offset)
	for _, z := range zones {
		in := t.In(z.loc)
		if _, off := in.Zone(); off == offset {
			tzName = z.name + " Standard Time"
			if in.IsDST() && z.name != "Hawaii" {
				tzName = z.name + " Daylight Time"
			}
			break
		}
	}

	conv := func(z namedZone) (TimeInZone, error) {
		in := t.In(z.loc)
		if in.Year() < 1 || in.Year() > 9999 {
			return TimeInZone{}, fmt.Errorf("%q: %s date out of range: %w", value, z.name, ErrBadTime)
		}
		abbr := z.letter + "ST"
		if in.IsDST() {
			abbr = z.letter + "DT"
		}
		return TimeInZone{
			DateTime: in.Format("Jan 2, 2006 3:04:05 PM") + " " + abbr,
			Offset:   in.Format("-07:00"),
		}, nil
	}
	var c TimeConversions
	if c.Eastern, err = conv(zones[0]); err != nil {
		return nil, err
	}
	if c.Mountain, err = conv(zones[2]); err != nil {
		return nil, err
	}
	if c.Pacific, err = conv(zones[3]); err != nil {
		return nil, err
	}

	roundTrip := t.Format("2006-01-02T15:04:05.0000000-07:00")
	_, week := t.ISOWeek()
	weekend := "False"
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		weekend = "True"
	}
	return &TimeFormats{
		Original: value,
		Formats: TimeFormatSet{
			Value:             t.Format("Monday - January 2, 2006 - 3:04:05 PM") + " " + tzName,
			RoundTrip:         roundTrip,
			Offset:            timeSpan(offset),
			TimeZone:          tzName,
			ISO8601:           roundTrip,
			RFC3339:           t.Format("2006-01-02T15:04:05.000-07:00"),
			ShortDate:         t.Format("1/2/2006"),
			LongDate:          t.Format("Monday, January 2, 2006"),
			ShortTime:         t.Format("3:04 PM"),
			LongTime:          t.Format("3:04:05 PM"),
			FullDateTime:      t.Format("Monday, January 2, 2006 3:04:05 PM"),
			SortableDateTime:  t.Format("2006-01-02T15:04:05"),
			UniversalSortable: u.Format("2006-01-02 15:04:05Z"),
			UnixTimestamp:     strconv.FormatInt(t.Unix(), 10),
			UTC:               u.Format("2006-01-02 15:04:05 UTC"),
			UTCISO8601:        u.Format("2006-01-02T15:04:05.0000000Z"),
			Quarter:           strconv.Itoa((int(t.Month())-1)/3 + 1),
			Week:              strconv.Itoa(week),
			Day:               strconv.Itoa(t.YearDay()),
			IsWeekend:         weekend,
		},
		Conversions: c,
	}, nil
}

// timeSpan renders an offset in seconds as .NET TimeSpan.ToString() does: [-]hh:mm:ss.
func timeSpan(offset int) string {
	sign := ""
	if offset < 0 {
		sign, offset = "-", -offset
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, offset/3600, offset/60%60, offset%60)
}

// offsetName renders an offset that no named zone matches: "UTC+5.5", "UTC-3", "UTC+0".
func offsetName(offset int) string {
	hours := math.Round(float64(offset)/3600*100) / 100
	sign := "+"
	if offset < 0 {
		sign, hours = "-", -hours
	}
	return "UTC" + sign + strconv.FormatFloat(hours, 'f', -1, 64)
}
