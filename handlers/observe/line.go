package observe

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// AccessOutput is where access lines go without slog's generic handlers, which spent about
// ten times as long on a line as appending it does (BENCHMARKS.md). Each line is written byte
// for byte as slog.TextHandler (or JSONHandler) writes the same record with default options
// and no attributes added by With: the tests compare the two. A line with a value that such a
// handler would quote or escape (possible only in a client's X-Request-Id or address) goes
// through the Logger instead, as does every line when there is no AccessOutput.
type AccessOutput struct {
	// W receives each line in one Write, as slog's handlers write a record.
	W io.Writer
	// JSON selects slog.JSONHandler's format; otherwise slog.TextHandler's.
	JSON bool
}

// accessLine is what one request's access line says, in the order it says it.
type accessLine struct {
	time                         time.Time
	level                        slog.Level
	id, method, route, partition string
	status                       int
	bytes                        int64
	duration                     time.Duration
	user, remote                 string
	client                       string
	hasClient                    bool // a ClientAddress is configured: the line says client
	aborted                      bool // said only when true
}

// record is the line as a slog record, for the Logger.
func (l *accessLine) record() slog.Record {
	r := slog.NewRecord(l.time, l.level, "request", 0)
	r.AddAttrs(
		slog.String("request_id", l.id), slog.String("method", l.method), slog.String("route", l.route),
		slog.String("partition", l.partition), slog.Int("status", l.status), slog.Int64("bytes", l.bytes),
		slog.Duration("duration", l.duration), slog.String("user", l.user), slog.String("remote", l.remote))
	if l.hasClient {
		r.AddAttrs(slog.String("client", l.client))
	}
	if l.aborted {
		r.AddAttrs(slog.Bool("aborted", true))
	}
	return r
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// write writes l to out and reports true, or reports false, writing nothing, when a value
// needs the quoting or escaping that only slog's handlers do.
func (out *AccessOutput) write(l *accessLine) bool {
	for _, s := range [...]string{l.id, l.method, l.route, l.partition, l.user, l.remote, l.client} {
		if !plain(s) {
			return false
		}
	}
	bp := lineBuffers.Get().(*[]byte)
	b := l.append((*bp)[:0], out.JSON)
	_, _ = out.W.Write(b)
	*bp = b
	lineBuffers.Put(bp)
	return true
}

// append appends l as slog's text or JSON handler writes it; every string value is plain.
func (l *accessLine) append(b []byte, json bool) []byte {
	str := func(key, v string) {
		if json {
			b = append(b, `,"`...)
			b = append(b, key...)
			b = append(b, `":"`...)
			b = append(b, v...)
			b = append(b, '"')
			return
		}
		b = append(b, ' ')
		b = append(b, key...)
		b = append(b, '=')
		if v == "" {
			b = append(b, `""`...)
		}
		b = append(b, v...)
	}
	num := func(key string, n int64) {
		if json {
			b = append(b, `,"`...)
			b = append(b, key...)
			b = append(b, `":`...)
		} else {
			b = append(b, ' ')
			b = append(b, key...)
			b = append(b, '=')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	if json {
		b = append(b, `{"time":"`...)
		b = l.time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, l.level.String()...)
		b = append(b, `","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, l.time)
		b = append(b, " level="...)
		b = append(b, l.level.String()...)
		b = append(b, " msg=request"...)
	}
	str("request_id", l.id)
	str("method", l.method)
	str("route", l.route)
	str("partition", l.partition)
	num("status", int64(l.status))
	num("bytes", l.bytes)
	if json {
		num("duration", int64(l.duration)) // nanoseconds, as encoding/json writes a Duration
	} else {
		b = append(b, " duration="...)
		b = append(b, l.duration.String()...) // digits, '.', '-' and unit letters: never quoted
	}
	str("user", l.user)
	str("remote", l.remote)
	if l.hasClient {
		str("client", l.client)
	}
	if l.aborted {
		if json {
			b = append(b, `,"aborted":true`...)
		} else {
			b = append(b, " aborted=true"...)
		}
	}
	if json {
		b = append(b, '}')
	}
	return append(b, '\n')
}

// appendRFC3339Millis formats t as slog.TextHandler does: RFC 3339 with exactly three digits
// of milliseconds (truncated).
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	// RFC3339Nano drops trailing zeros: a tenth of a millisecond more keeps four digits, of
	// which the fourth is then dropped.
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// plain reports whether both of slog's handlers write s as it is: printable ASCII other than
// space, '=', '"' and '\\' (the text handler quotes a value with any of these, or with
// anything else; the JSON handler escapes the last two and the rest). The empty string is
// plain: it is written `""` by both.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
