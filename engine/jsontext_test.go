package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"credo/engine"
)

// TestDecodeObjectRefuses: what encoding/json accepts silently (a repeated member, invalid
// UTF-8 and lone surrogates replaced by U+FFFD) or cannot be stored (U+0000) is a problem naming
// the member, at any depth.
func TestDecodeObjectRefuses(t *testing.T) {
	tests := []struct {
		name, body, member, says string
	}{
		{name: "repeated member", body: `{"A":1,"B":2,"A":3}`, member: "A", says: "more than once"},
		{name: "repeated nested member", body: `{"X":[{"T":"a"},{"T":"a","T":"b"}]}`, member: "X[1].T", says: "more than once"},
		{name: "repeated after escape", body: `{"A":1,"\u0041":2}`, member: "A", says: "more than once"},
		{name: "NUL escape", body: `{"A":"x\u0000y"}`, member: "A", says: "U+0000"},
		{name: "NUL escape nested", body: `{"A":{"B":["ok","\u0000"]}}`, member: "A.B[1]", says: "U+0000"},
		{name: "invalid byte", body: "{\"A\":\"\xff\"}", member: "A", says: "UTF-8"},
		{name: "truncated sequence", body: "{\"A\":\"\xc3\x28\"}", member: "A", says: "UTF-8"},
		{name: "overlong encoding", body: "{\"A\":\"\xc0\xaf\"}", member: "A", says: "UTF-8"},
		{name: "surrogate as UTF-8 bytes", body: "{\"A\":\"\xed\xa0\x80\"}", member: "A", says: "UTF-8"},
		{name: "lone low surrogate escape", body: `{"A":"\udc00"}`, member: "A", says: "UTF-8"},
		{name: "lone high surrogate escape", body: `{"A":"\ud800"}`, member: "A", says: "UTF-8"},
		{name: "high surrogate then text", body: `{"A":"\ud800x"}`, member: "A", says: "UTF-8"},
		{name: "high surrogate then non-surrogate escape", body: `{"A":"\ud800\u0041"}`, member: "A", says: "UTF-8"},
		{name: "two high surrogates", body: `{"A":"\ud800\ud800"}`, member: "A", says: "UTF-8"},
		{name: "invalid member name", body: "{\"\xff\":1}", member: `"\xff"`, says: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.DecodeObject([]byte(tt.body))
			var verr *engine.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, engine.ErrInvalid) {
				t.Fatalf("DecodeObject(%q) = %v, want a ValidationError", tt.body, err)
			}
			msgs, ok := verr.Fields[tt.member]
			if !ok || !strings.Contains(strings.Join(msgs, " "), tt.says) {
				t.Fatalf("DecodeObject(%q) problems %v, want %s named with %q", tt.body, verr.Fields, tt.member, tt.says)
			}
		})
	}
}

// TestDecodeObjectAccepts: valid text, escapes and surrogate pairs decode as encoding/json does.
func TestDecodeObjectAccepts(t *testing.T) {
	body := `{ "A" : "plain", "B":"esc\"aped\\\/\b\f\n\r\t", "C":"\ud83d\ude00 é 漢", "D":[1,-0,2.5e-3,true,false,null,{}],
		"E":{"A":1}, "F":"\u00e9" }`
	got, err := engine.DecodeObject([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	for name, raw := range want {
		if string(got[name]) != string(raw) {
			t.Errorf("%s = %s, want %s", name, got[name], raw)
		}
	}
}

// TestDecodeObjectSyntax: what is not one JSON object is a problem without members.
func TestDecodeObjectSyntax(t *testing.T) {
	for _, body := range []string{``, ` `, `null`, `[]`, `"x"`, `{`, `{"A"}`, `{"A":}`, `{"A":1,}`, `{"A":1}{}`,
		`{"A":01}`, `{"A":1.}`, `{"A":-}`, `{"A":tru}`, `{"A":"\x"}`, `{"A":"\u12"}`, "{\"A\":\"a\x01\"}", `{'A':1}`,
		`{"A":` + strings.Repeat("[", engine.MaxJSONDepth+1) + strings.Repeat("]", engine.MaxJSONDepth+1) + `}`} {
		_, err := engine.DecodeObject([]byte(body))
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || verr.Detail == "" {
			t.Errorf("DecodeObject(%q) = %v, want a ValidationError with a Detail", body, err)
		}
	}
}

// TestJSONSyntaxNamesTheByte: a byte no JSON value begins with is named as the client sent
// it: an ASCII character as itself, another byte in hex, a UTF-8 byte order mark as one.
// Before, a byte was quoted as a Latin-1 character ('ï' for the BOM's 0xEF), naming a
// character the body did not hold. JSONKind names the kind of a valid value.
func TestJSONSyntaxNamesTheByte(t *testing.T) {
	for _, c := range []struct{ body, detail string }{
		{body: "\xef\xbb\xbf{}", detail: "the body is not valid JSON: a byte order mark (EF BB BF), which JSON does not take, at byte 0"},
		{body: "\xff{}", detail: "the body is not valid JSON: unexpected byte 0xFF at byte 0"},
		{body: "{\"A\":\xc3\xa9}", detail: "the body is not valid JSON: unexpected byte 0xC3 at byte 5"},
		{body: `{"A":x}`, detail: "the body is not valid JSON: unexpected 'x' at byte 5"},
		{body: `{"A":t}`, detail: "the body is not valid JSON: unexpected 't' at byte 5"},
	} {
		_, err := engine.DecodeObject([]byte(c.body))
		if err == nil || err.Error() != c.detail {
			t.Errorf("DecodeObject(%q) = %v, want %q", c.body, err, c.detail)
		}
	}
	for body, want := range map[string]string{`{}`: "an object", ` [1]`: "an array", `"x"`: "a string", `-1`: "a number",
		`false`: "true or false", `null`: "null"} {
		if kind, err := engine.JSONKind([]byte(body)); kind != want || err != nil {
			t.Errorf("JSONKind(%q) = %q, %v, want %q", body, kind, err, want)
		}
	}
	if _, err := engine.JSONKind([]byte(`[1,`)); err == nil || err.Error() != "the body is not valid JSON: it ends too early" {
		t.Errorf("JSONKind of a cut array: %v", err)
	}
}

// FuzzCheckJSON: the scanner accepts exactly the JSON that encoding/json accepts, except for
// what DecodeObject documents it refuses.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2,{"a":"b"}]`, `"x"`, `-0.5e+3`, `{"a":1,"a":2}`, `"\u0000"`, "\"\xff\"",
		`"\ud800"`, `{"a":[true,false,null]}`, `  1  `, `01`, `[`, `{"a"}`, `"\ud83d\ude00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := engine.CheckJSON(data, "")
		var verr *engine.ValidationError
		if err != nil && !errors.As(err, &verr) {
			t.Fatalf("CheckJSON(%q) = %v, not a ValidationError", data, err)
		}
		syntaxOK := err == nil || len(verr.Fields) > 0 || !strings.Contains(verr.Detail, "not valid JSON")
		deep := strings.Count(string(data), "[")+strings.Count(string(data), "{") > engine.MaxJSONDepth
		if syntaxOK != json.Valid(data) && !deep {
			t.Fatalf("CheckJSON(%q) = %v but json.Valid = %v", data, err, json.Valid(data))
		}
	})
}

// TestJSONIntIsExact: an int member takes a JSON number that is a whole 32-bit integer.
func TestJSONIntIsExact(t *testing.T) {
	for raw, want := range map[string]int64{`7`: 7, `-0`: 0, `0`: 0, `-2147483648`: -2147483648, `2147483647`: 2147483647} {
		if got, err := engine.JSONInt(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("JSONInt(%s) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{`"7"`, `"-0"`, `7.0`, `7e0`, `2147483648`, `-2147483649`, `true`, `null`, `[7]`} {
		if got, err := engine.JSONInt(json.RawMessage(raw)); err == nil {
			t.Errorf("JSONInt(%s) = %d, want an error", raw, got)
		}
	}
}

// TestParseIntegerIsJSONsGrammar: the one reader of a client's integer (a query value, a path
// key, a CSV cell, a body) takes JSON's integer grammar and nothing strconv adds: no plus
// sign, no leading zero, no space, ASCII digits only.
func TestParseIntegerIsJSONsGrammar(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "-0": 0, "5": 5, "-5": -5, "10": 10,
		"9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808} {
		if got, ok := engine.ParseInteger(s); !ok || got != want {
			t.Errorf("ParseInteger(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", "+5", "+0", "05", "007", "-05", "--5", " 5", "5 ", "5.0", "5e0", "0x10",
		"1_000", "٣", "9223372036854775808", "-9223372036854775809"} {
		if got, ok := engine.ParseInteger(s); ok {
			t.Errorf("ParseInteger(%q) = %d, want a refusal", s, got)
		}
	}
}
