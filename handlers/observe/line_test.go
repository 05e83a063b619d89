package observe

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// slogLine is what slog's own handler of the format writes for l.
func slogLine(t testing.TB, l *accessLine, json bool) string {
	t.Helper()
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if json {
		h = slog.NewJSONHandler(&b, nil)
	}
	if err := h.Handle(context.Background(), l.record()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkLine compares what AccessOutput writes for l with slog's handler, in both formats: the
// same bytes when every value is plain, nothing written (slog's turn) otherwise.
func checkLine(t testing.TB, l accessLine) {
	t.Helper()
	for _, json := range []bool{false, true} {
		var b bytes.Buffer
		wrote := (&AccessOutput{W: &b, JSON: json}).write(&l)
		want := slogLine(t, &l, json)
		switch {
		case wrote && b.String() != want:
			t.Errorf("json %v:\n got %q\nwant %q", json, b.String(), want)
		case !wrote && b.Len() > 0:
			t.Errorf("json %v: refused the line yet wrote %q", json, b.String())
		case !wrote && plainLine(&l):
			t.Errorf("json %v: refused a line of plain values: %q", json, want)
		}
	}
}

func plainLine(l *accessLine) bool {
	for _, s := range []string{l.id, l.method, l.route, l.partition, l.user, l.remote, l.client} {
		if !plain(s) {
			return false
		}
	}
	return true
}

// TestAccessLineIsSlogs: the access line appended without slog is, byte for byte, what
// slog.TextHandler and slog.JSONHandler write for the same record, over times in several
// zones and at millisecond boundaries, durations of every unit, empty values, the optional
// members and both levels; a value either handler would quote or escape is left to slog.
func TestAccessLineIsSlogs(t *testing.T) {
	base := accessLine{time: time.Date(2026, 11, 24, 3, 56, 56, 643_263_000, time.UTC), level: slog.LevelInfo,
		id: "1894d27be573f8af98c1ffbb3c07557a", method: "GET", route: "/v2/{partition}/security/users-comments/{CommentIdentifier}",
		partition: "bench", status: 200, bytes: 380, duration: 533263 * time.Nanosecond,
		user: "01a20bb2-ff53-7bf4-9f80-969df3176a76", remote: "127.0.0.1:34276"}
	kolkata := time.FixedZone("", 5*3600+1800)
	for _, mod := range []func(l *accessLine){
		func(l *accessLine) {},
		func(l *accessLine) { l.partition, l.user = "", "" },
		func(l *accessLine) { l.client, l.hasClient = "203.0.113.7", true },
		func(l *accessLine) { l.hasClient = true }, // a ClientAddress that found none
		func(l *accessLine) { l.aborted, l.status = true, StatusClientClosed },
		func(l *accessLine) { l.level, l.route = slog.LevelDebug, "/v2/{partition}/platform/health" },
		func(l *accessLine) { l.remote = "[2001:db8::1]:443" },
		func(l *accessLine) { l.time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		func(l *accessLine) { l.time = time.Date(2026, 1, 2, 3, 4, 5, 100_000_000, kolkata) },
		func(l *accessLine) { l.time = time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.FixedZone("", -7*3600)) },
		func(l *accessLine) { l.time = time.Now() },
		func(l *accessLine) { l.duration = 0 },
		func(l *accessLine) { l.duration = time.Nanosecond },
		func(l *accessLine) { l.duration = 90 * time.Minute },
		func(l *accessLine) { l.duration = 1500 * time.Millisecond },
		func(l *accessLine) { l.duration = -time.Second },
		func(l *accessLine) { l.bytes, l.status = 1<<40, 500 },
		// Left to slog: what a client may put in X-Request-Id, and what either handler changes.
		func(l *accessLine) { l.id = `a"b` },
		func(l *accessLine) { l.id = `a=b` },
		func(l *accessLine) { l.id = `a\b` },
		func(l *accessLine) { l.remote = "with space" },
		func(l *accessLine) { l.client, l.hasClient = "é", true },
		func(l *accessLine) { l.user = "\x00\xff" },
	} {
		l := base
		mod(&l)
		checkLine(t, l)
	}
}

// FuzzAccessLine compares the two writers on arbitrary values; its seeds run with the tests.
func FuzzAccessLine(f *testing.F) {
	f.Add("1894d27be573f8af98c1ffbb3c07557a", "GET", "bench", "127.0.0.1:1", "", int64(533263), int64(1_795_000_000_643_263_000), true)
	f.Add(`x"y`, "PO ST", "", "", "\u2028", int64(-1), int64(0), false)
	f.Add("<&>", "{}", "a/b", "[::1]:2", "~!#$%^*()", int64(1<<62), int64(1<<62), true)
	f.Fuzz(func(t *testing.T, id, method, partition, remote, client string, duration, unixNano int64, hasClient bool) {
		checkLine(t, accessLine{time: time.Unix(0, unixNano), level: slog.LevelInfo, id: id, method: method,
			route: "/v2/{partition}/x", partition: partition, status: 201, bytes: 7, duration: time.Duration(duration),
			user: "u", remote: remote, client: client, hasClient: hasClient})
	})
}
