package engine

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the record as a JSON object with the given members, in order, `null`
// where null.
func AppendJSON(b []byte, rec Record, fields []*Field) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.Name...)
		b = append(b, '"', ':')
		b = appendValue(b, rec[f.Index])
	}
	return append(b, '}')
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return AppendJSONString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case DateTime:
		b = append(b, '"')
		b = x.AppendFormat(b)
		return append(b, '"')
	}
	return append(b, "null"...)
}

// jsonSafe marks the ASCII bytes a JSON string holds as they are (encoding/json's HTML-safe set).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendJSONString appends s as a JSON string, escaping as encoding/json does.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
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
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// TextValues renders the record's members as CSV cells: empty for null, `true`/`false`,
// decimal integers and the datetime output format.
func TextValues(rec Record, fields []*Field, out []string) []string {
	out = out[:0]
	for _, f := range fields {
		switch x := rec[f.Index].(type) {
		case nil:
			out = append(out, "")
		case string:
			out = append(out, x)
		case bool:
			out = append(out, strconv.FormatBool(x))
		case int64:
			out = append(out, strconv.FormatInt(x, 10))
		case DateTime:
			out = append(out, x.String())
		default:
			out = append(out, "")
		}
	}
	return out
}

// Names returns the member names of fields (a CSV header).
func Names(fields []*Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}
