package legacy

import (
	"fmt"
	"testing"
	"time"
)

// TestEventMatchWindow: register-lax and transfer-lax join an existing event of the venue only
// when the requested start lies in [EventStart, EventStart + 1 minute), compared by instant
// whatever offsets the two are written in (decisions §12); otherwise they create an event.
func TestEventMatchWindow(t *testing.T) {
	cases := []struct {
		name   string
		offset time.Duration // the request's start minus the event's
		zone   string        // the request's offset; the event is written at -06:00
		join   bool
	}{
		{name: "30 s before", offset: -30 * time.Second, zone: "Z", join: false},
		{name: "a tick before", offset: -100 * time.Nanosecond, zone: "+05:30", join: false},
		{name: "same instant", offset: 0, zone: "Z", join: true},
		{name: "same instant, same offset", offset: 0, zone: "-06:00", join: true},
		{name: "30 s after", offset: 30 * time.Second, zone: "+01:00", join: true},
		{name: "a tick under a minute after", offset: time.Minute - 100*time.Nanosecond, zone: "Z", join: true},
		{name: "exactly a minute after", offset: time.Minute, zone: "Z", join: false},
		{name: "61 s after", offset: 61 * time.Second, zone: "-06:00", join: false},
	}
	zone := func(z string) *time.Location {
		if z == "Z" {
			return time.UTC
		}
		tm, err := time.Parse("-07:00", z)
		if err != nil {
			panic(err)
		}
		return tm.Location()
	}
	forEachBackend(t, func(t *testing.T, e *env) {
		for k, command := range []string{"register-lax", "transfer-lax"} {
			for i, c := range cases {
				t.Run(command+"/"+c.name, func(t *testing.T) {
					e := e.with(t)
					n := k*len(cases) + i // a day and ids of its own per case
					evStart := testBase.AddDate(0, 0, 30+n).In(zone("-06:00")).Add(9 * time.Hour)
					event := fmt.Sprintf("0190a6f0-0000-7000-8000-%012x", 0x500000+n)
					e.ok("POST", "/api/events/"+event, `{"EventVenue":"`+venueA+`","EventStart":"`+evStart.Format(time.RFC3339Nano)+
						`","EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"`+billingA+`"}`)
					at := evStart.Add(c.offset).In(zone(c.zone)).Format("2006-01-02T15:04:05.0000000Z07:00")
					id := rid(0x1000 + n)
					var got map[string]any
					if command == "register-lax" {
						got = e.ok("POST", regPath(id, command), e.registerBody(venueA, at, ""))
					} else {
						e.ok("POST", regPath(id, "register-lax"), e.registerBody(venueA3, at, ""))
						got = e.ok("POST", regPath(id, command), `{"EventVenue":"`+venueA+`","EventStart":"`+at+`","EventExamType":"Sitting","Learner":"`+ada+`"}`)
					}
					if joined := got["Event"] == event; joined != c.join || got["EventCreated"] == c.join {
						t.Fatalf("start %s against an event at %s: %v; want joined %v", at, evStart.Format(time.RFC3339Nano), got, c.join)
					}
				})
			}
		}
	})
}
