package request

import (
	"encoding/json"
	"fmt"
	"testing"

	"credo/engine"
)

// TestAppendTokenIsJSONMarshal: J written by hand is byte for byte what encoding/json writes,
// for every kind of position value and for strings it escapes, so that a token does not
// depend on which path wrote it (TestContinuationTokenIsStable pins one token).
func TestAppendTokenIsJSONMarshal(t *testing.T) {
	for _, after := range []engine.Cursor{
		nil,
		{},
		{nil, "0190a6f0-0000-7000-8000-00000000000a"},
		{int64(-42), true, false, "2024-03-10 14:30:00.1234567+00:00"},
		{"a<b", "x"}, {"tom & jerry"}, {`quote " and \ backslash`}, {"tab\there"}, {"Émilie"},
		{"\u2028"}, {"\xff invalid"}, {"\x00"}, {float64(1e21)}, {1.5}, {int(3)},
	} {
		got, err := appendToken([]byte("prefix"), 7, after)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(token{Page: 7, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("appendToken(%#v)\n got %s\nwant prefix%s", after, got, want)
		}
	}
}

func FuzzAppendToken(f *testing.F) {
	f.Add("0190a6f0-0000-7000-8000-00000000000a", int64(3), 2)
	f.Add("<&>\"\\\x7f", int64(-1), 1<<40)
	f.Fuzz(func(t *testing.T, s string, n int64, page int) {
		after := engine.Cursor{s, n, nil, s + s}
		got, err := appendToken(nil, page, after)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(token{Page: page, After: after})
		if string(got) != string(want) {
			t.Errorf("appendToken(%q, %d, %d)\n got %s\nwant %s", s, n, page, got, want)
		}
	})
}

// TestAppendValueIsSprintf: a filter's value enters the MAC as fmt's "%T %v" of it, with
// its length before it, whichever path writes it.
func TestAppendValueIsSprintf(t *testing.T) {
	for _, v := range []any{"", "abc", "Émilie <&>", int64(5), true, 2.5, nil, []string{"a", "b"}} {
		got := appendValue(nil, v)
		want := appendField(nil, fmt.Sprintf("%T %v", v, v))
		if string(got) != string(want) {
			t.Errorf("appendValue(%#v) = %q, want %q", v, got, want)
		}
	}
}
