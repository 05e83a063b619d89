package engine_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"credo/engine"
)

// TestShownWellFormed: a well-formed name is shown as itself, a short value as %q quotes it,
// a short path whole, as messages named them before the rule (clients match these texts).
func TestShownWellFormed(t *testing.T) {
	for _, name := range []string{"GET", "Widget", "Origin.Identifier", "Filter.Name", "Prénom", "日本語", strings.Repeat("a", engine.MaxShown)} {
		if got := engine.ShownName(name); got != name {
			t.Errorf("ShownName(%q) = %q", name, got)
		}
	}
	for v, want := range map[string]string{"abc": `"abc"`, "": `""`, "é": `"é"`, "a\"b": `"a\"b"`} {
		if got := engine.Quoted(v); got != want {
			t.Errorf("Quoted(%q) = %s, want %s", v, got, want)
		}
	}
	if p := "/v2/acme/Widgets/0191c3a0-0000-7000-8000-000000000000"; engine.ShownPath(p) != p {
		t.Errorf("ShownPath(%q) = %q", p, engine.ShownPath(p))
	}
}

// TestShownCutKeepsCharacters: a name or value cut at MaxShown bytes is cut between
// characters, not inside one: a valid name whose character straddles the limit is not shown
// with the escapes of a part of it, as though the client had sent invalid UTF-8. A path is cut
// between its %-escapes.
func TestShownCutKeepsCharacters(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("a", engine.MaxShown-1) + "é" + "tail",
		strings.Repeat("a", engine.MaxShown-2) + "日本" + "tail",
		strings.Repeat("é", 100),
	} {
		for _, got := range []string{engine.ShownName(s), engine.Quoted(s)} {
			if strings.Contains(got, `\x`) || !utf8.ValidString(got) {
				t.Errorf("%q is shown as %s", s, got)
			}
			if !strings.HasSuffix(got, "bytes)") {
				t.Errorf("%q is shown as %s, not cut", s, got)
			}
		}
	}
	for _, tail := range []string{"", "a", "aa"} {
		p := "/" + strings.Repeat("a", engine.MaxShownPath-3) + tail + strings.Repeat("%C3%A9", 10)
		got := engine.ShownPath(p)
		if cut := strings.TrimSuffix(got, "…"); strings.Contains(cut[len(cut)-2:], "%") {
			t.Errorf("a path is cut inside an escape: …%s", got[len(got)-12:])
		}
		if len(got) > engine.MaxShownPath+len("…") {
			t.Errorf("a path is shown with %d bytes", len(got))
		}
	}
}

// TestShownNameAllocations: the access line shows every request's method through ShownName;
// a well-formed one costs no allocation.
func TestShownNameAllocations(t *testing.T) {
	method := string([]byte("GET"))
	var sink string
	if n := testing.AllocsPerRun(100, func() { sink = engine.ShownName(method) }); n != 0 {
		t.Errorf("ShownName(%q) allocates %v times", method, n)
	}
	_ = sink
}
