package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSkipValue: skipValue reads exactly one JSON value, whatever it holds (strings with
// escaped quotes and backslashes, brackets inside strings, nesting, numbers and literals),
// and leaves what follows it unread.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":"b\"}]","c":[1,{"d":null}]}`, `"\\"`, `"x\\\"]"`, ` 12.5e3`, `true`, `[[],{}]`, `"é\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		value := bytes.TrimLeft(data, " \t\r\n")
		space := len(data) - len(value)
		value = bytes.TrimRight(value, " \t\r\n")
		in := bufio.NewReader(bytes.NewReader(append(append([]byte{}, data[:space+len(value)]...), ",x"...)))
		gotSpace, n, err := skipValue(in)
		if err != nil || gotSpace != int64(space) || n != int64(len(value)) {
			t.Fatalf("%q: space %d, %d bytes, %v; want %d, %d", data, gotSpace, n, err, space, len(value))
		}
		if next, _ := in.ReadByte(); next != ',' {
			t.Fatalf("%q: %q follows the value read, want ','", data, next)
		}
	})
}
