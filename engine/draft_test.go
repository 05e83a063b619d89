package engine_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"credo/engine"
)

// TestDraftSetRefusesUnknownMembers: code that builds a draft learns of a misspelt or
// computed member at once, rather than having it dropped.
func TestDraftSetRefusesUnknownMembers(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	d := w.NewDraft()
	for _, name := range []string{"WidgetCod", "widgetcode", "PartCount", ""} {
		if err := d.Set(name, "x"); err == nil {
			t.Errorf("Set(%q): no error", name)
		}
	}
	if err := d.Set("WidgetCode", "D1"); err != nil || !d.Given("WidgetCode") || d.Given("WidgetTitle") {
		t.Errorf("Set(WidgetCode): %v; given %v, WidgetTitle given %v", err, d.Given("WidgetCode"), d.Given("WidgetTitle"))
	}
	if _, err := w.DraftOf(map[string]any{"WidgetCode": "D1", "NoSuchMember": 1}); err == nil {
		t.Error("DraftOf with an unknown member: no error")
	}
}

// TestDraftSetRefusesValuesOfAnotherType: a value whose Go type is not the member's is an
// error at Set, not a record stored that every later read fails on (a string for a datetime
// was stored as it was, and reading the record back was a 500).
func TestDraftSetRefusesValuesOfAnotherType(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	d := w.NewDraft()
	for member, v := range map[string]any{
		"WidgetMade":             "2024-03-10T14:30:00Z",
		"WidgetSize":             "3",
		"WidgetEnabled":          "true",
		"WidgetCode":             7,
		"OrganizationIdentifier": "not-a-uuid",
	} {
		if err := d.Set(member, v); err == nil {
			t.Errorf("Set(%s, %#v): no error", member, v)
		}
	}
	made, err := engine.ParseDateTime("2024-03-10T14:30:00-06:00")
	if err != nil {
		t.Fatal(err)
	}
	for member, v := range map[string]any{"WidgetMade": made, "WidgetSize": 3, "WidgetEnabled": true, "WidgetTitle": nil,
		"OrganizationIdentifier": "0190A6F0-0000-7000-8000-00000000000A"} {
		if err := d.Set(member, v); err != nil {
			t.Errorf("Set(%s, %#v): %v", member, v, err)
		}
	}
	if got := d.Get("WidgetSize"); got != int64(3) {
		t.Errorf("an int is held as int64: %#v", got)
	}
	if got := d.Get("OrganizationIdentifier"); got != "0190a6f0-0000-7000-8000-00000000000a" {
		t.Errorf("a uuid is held in its canonical form: %#v", got)
	}
}

// TestDraftOfAnotherResourceIsRefused: a verb given a draft of another resource writes nothing.
func TestDraftOfAnotherResourceIsRefused(t *testing.T) {
	reg := fixtureRegistry(t)
	w, part := reg.MustByName("Widget"), reg.MustByName("WidgetPart")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		d, err := part.DraftOf(map[string]any{"PartName": "Sprocket"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(context.Background(), w, d, engine.AllOrganizations()); err == nil {
			t.Error("create of a Widget from a Part draft: no error")
		}
	})
}

// TestCSVHeaderRefusesAColumnGivenTwice: a CSV header that names a member twice is refused with
// the message of a JSON body that gives it twice; the row took the last cell before, and a
// load dropped the first without a word.
func TestCSVHeaderRefusesAColumnGivenTwice(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	_, err := w.CSVHeader([]string{"WidgetCode", "OrganizationIdentifier", "WidgetCode"})
	var verr *engine.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) != 1 ||
		!reflect.DeepEqual(verr.Fields["WidgetCode"], []string{"WidgetCode is given more than once; give it once"}) {
		t.Errorf("a column given twice: %v", err)
	}
	d, jerr := w.DecodeDraft([]byte(`{"WidgetCode":"A","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","WidgetCode":"B"}`))
	if jerr == nil {
		jerr = d.Problems()
	}
	if jerr == nil || err == nil || jerr.Error() != err.Error() {
		t.Errorf("CSV %v, JSON %v: want one message", err, jerr)
	}
}

// TestCSVHeader: a CSV header's unknown and repeated names are each one problem, with the
// messages of a JSON body; a good header has none, and its rows decode.
func TestCSVHeader(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	h, err := w.CSVHeader([]string{"WidgetIdentifier", "OrganizationIdentifier", "WidgetCode"})
	if err != nil {
		t.Fatalf("a good header: %v", err)
	}
	d := h.DecodeRow([]string{"", "0190a6f0-0000-7000-8000-00000000000a", "K1"})
	if err := d.Problems(); err != nil || d.Get("WidgetCode") != "K1" {
		t.Errorf("a row under it: %v, WidgetCode %v", err, d.Get("WidgetCode"))
	}
	_, err = w.CSVHeader([]string{"WidgetCode", "Bogus", "WidgetCode", "Bogus", "WidgetTitle", "WidgetCode"})
	var verr *engine.ValidationError
	want := map[string][]string{
		"Bogus":      {"Bogus is not a member of Widget"},
		"WidgetCode": {"WidgetCode is given more than once; give it once"},
	}
	if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Fields, want) {
		t.Errorf("a header with an unknown and a repeated name: %#v, want %v", err, want)
	}
}

// TestCSVHeaderNamesAsABodyDoes: a CSV header name with U+0000 or invalid UTF-8 is refused
// with the message a JSON body's member name gets (it was "is not a member", the bytes
// unquoted); a name that would not read as itself in a message — empty, blank at an end, with
// a control or format character — is quoted, in a body's problem as in a header's, and a long
// one is cut.
func TestCSVHeaderNamesAsABodyDoes(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	for _, c := range []struct{ name, body, want string }{
		{"Wid\x00get", `"Wid\u0000get"`, `the member name "Wid\x00get" contains U+0000 (NUL), which cannot be stored`},
		{"Wid\xffget", "\"Wid\xffget\"", `the member name "Wid\xffget" is not valid UTF-8 text`},
		{"", `""`, `"" is not a member of Widget`},
		{" WidgetCode", `" WidgetCode"`, `" WidgetCode" is not a member of Widget`},
		{"\x1b[2J", `"\u001b[2J"`, `"\x1b[2J" is not a member of Widget`},
		{"a\u202eb", "\"a\u202eb\"", `"a\u202eb" is not a member of Widget`},
		{"Émile", `"Émile"`, `Émile is not a member of Widget`},
		{strings.Repeat("n", 100), `"` + strings.Repeat("n", 100) + `"`, `"` + strings.Repeat("n", 64) + `"… (100 bytes) is not a member of Widget`},
	} {
		_, err := w.CSVHeader([]string{"WidgetCode", c.name})
		if err == nil || err.Error() != c.want {
			t.Errorf("header name %q: %v, want %q", c.name, err, c.want)
		}
		d, jerr := w.DecodeDraft([]byte(`{"WidgetCode":"A","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a",` + c.body + `:1}`))
		if jerr == nil {
			jerr = d.Problems()
		}
		if jerr == nil || jerr.Error() != c.want {
			t.Errorf("body member %s: %v, want %q", c.body, jerr, c.want)
		}
	}
}

// TestDecodeDraftNamesTheType: a member of the wrong JSON type is refused with the type it
// needs, said once ("must be a string" was once "must be a string string").
func TestDecodeDraftNamesTheType(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	for member, want := range map[string]string{
		"WidgetCode":             "WidgetCode must be a string",
		"OrganizationIdentifier": "OrganizationIdentifier must be a uuid string",
		"WidgetMade":             "WidgetMade must be a datetime string",
		"WidgetEnabled":          "WidgetEnabled must be true or false",
		"WidgetSize":             "WidgetSize must be an integer",
	} {
		d, err := w.DecodeDraft([]byte(`{"` + member + `":[7]}`))
		if err == nil {
			err = d.Problems()
		}
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Fields[member], []string{want}) {
			t.Errorf("%s: %v, want %q", member, err, want)
		}
	}
}

// TestBodyNamesAreKeyedAsShown: the Errors key of a member name that is no member, or that
// breaks the text rules, is the name as its message shows it (engine.ShownName): bounded,
// printable and valid UTF-8. It was the name whole — 1 MiB, or an ESC, as sent.
func TestBodyNamesAreKeyedAsShown(t *testing.T) {
	w := fixtureRegistry(t).MustByName("Widget")
	long := strings.Repeat("n", 1<<20)
	for _, c := range []struct{ body, key string }{
		{`"` + long + `"`, `"` + strings.Repeat("n", 64) + `"… (1048576 bytes)`},
		{`"\u001b[2J"`, `"\x1b[2J"`},
		{`"a\r\nb"`, `"a\r\nb"`},
		{`"Wid\u0000get"`, `"Wid\x00get"`},
		{`"Émile"`, `Émile`},
	} {
		d, err := w.DecodeDraft([]byte(`{"WidgetCode":"A",` + c.body + `:1,` + c.body + `:2}`))
		if err == nil {
			err = d.Problems()
		}
		var verr *engine.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("%.40s: %v", c.body, err)
		}
		if got := verr.Members(); !slices.Contains(got, c.key) {
			t.Errorf("%.40s: keys %.200q, want %q among them", c.body, got, c.key)
		}
		if len(err.Error()) > 1<<10 {
			t.Errorf("%.40s: a message of %d bytes", c.body, len(err.Error()))
		}
	}
}
