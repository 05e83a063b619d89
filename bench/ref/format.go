package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The stored datetime form shared with credo's tables: the fixed-width UTC instant, then the
// original offset, e.g. 2024-03-10T20:30:00.1234567Z-06:00 (34 bytes).
const storedLen = 34

// appendOutput appends a stored datetime in the API's output form
// yyyy-MM-ddTHH:mm:ss[.fffffff]±HH:mm (fraction zeros trimmed, the original offset kept).
func appendOutput(b []byte, stored string) ([]byte, error) {
	if len(stored) != storedLen || stored[27] != 'Z' {
		return b, fmt.Errorf("ref: stored datetime %q is malformed", stored)
	}
	t, err := time.Parse("2006-01-02T15:04:05.0000000Z", stored[:28])
	if err != nil {
		return b, err
	}
	oh, _ := strconv.Atoi(stored[29:31])
	om, _ := strconv.Atoi(stored[32:34])
	off := oh*3600 + om*60
	if stored[28] == '-' {
		off = -off
	}
	t = t.Add(time.Duration(off) * time.Second)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if ns := t.Nanosecond() / 100; ns != 0 {
		frac := strconv.Itoa(ns + 10_000_000)[1:]
		b = append(b, '.')
		b = append(b, strings.TrimRight(frac, "0")...)
	}
	if off == 0 {
		return append(b, "+00:00"...), nil
	}
	return append(b, stored[28:]...), nil
}

// storedNow returns the current instant in the stored form, as UTC.
func storedNow() string {
	t := time.Now().UTC()
	b := t.AppendFormat(make([]byte, 0, storedLen), "2006-01-02T15:04:05")
	b = append(b, '.')
	b = append(b, strconv.Itoa(t.Nanosecond()/100 + 10_000_000)[1:]...)
	return string(append(b, "Z+00:00"...))
}

// newV7 returns a time-ordered UUID (version 7), as credo gives new records.
func newV7() string {
	var u [16]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint64(u[:8], ms<<16)
	_, _ = rand.Read(u[6:])
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[x>>4], hex[x&0xf])
	}
	return string(out)
}

// validUUID accepts the canonical 36-character form, any case.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// appendString appends s as a JSON string, escaping as encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				b = append(b, s[start:i]...)
				if r == utf8.RuneError {
					b = append(b, `\ufffd`...)
				} else {
					b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
				}
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
