package legacy

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestScrapPaper: any non-empty id up to MaxScrapPaperID characters gives the PDF with the id
// printed on every page as given (characters the font lacks as code points); a registration's
// or an event's id adds its details; a missing, empty, blank, repeated or too long id is a 400
// naming id.
func TestScrapPaper(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		reg := rid(40)
		placed := e.ok("POST", regPath(reg, "register-lax"), e.registerBody(venueA, start(20, "09:00:00", "-06:00"), ""))
		for _, c := range []struct {
			name, id string
			lines    []string // header lines printed on each page, in order
		}{
			{name: "registration", id: reg, lines: []string{"Id: " + reg, "Registration of Ada Lovelace (AL-1)",
				"Event #1 - Sitting - Paper", "Starts: Monday 4 February 2030, 09:00 (-06:00)", "Venue: Main Hall", "Assessment: MATH Mathematics"}},
			{name: "event, upper-case id", id: strings.ToUpper(placed["Event"].(string)), lines: []string{"Id: " + strings.ToUpper(placed["Event"].(string)),
				"Event #1 - Sitting - Paper", "Starts: Monday 4 February 2030, 09:00 (-06:00)", "Venue: Main Hall"}},
			{name: "unknown uuid", id: nobody, lines: []string{"Id: " + nobody}},
			{name: "not a uuid", id: "EXAM-2030/17", lines: []string{"Id: EXAM-2030/17"}},
			{name: "spaces", id: " room 12 (north) ", lines: []string{"Id:  room 12 (north) "}},
			{name: "unicode", id: "Zoë Ωμέγα Ж 試験", lines: []string{"Id: Zoë Ωμέγα Ж <U+8A66><U+9A13>"}},
			{name: "controls and bidi overrides", id: "a\tb\u202ec\r\n", lines: []string{"Id: a<U+0009>b<U+202E>c<U+000D><U+000A>"}},
			{name: "longest", id: strings.Repeat("x", MaxScrapPaperID), lines: nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				rec := e.do("GET", "/api/events/scrap-paper?id="+url.QueryEscape(c.id), "", "-")
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/pdf" {
					t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
				}
				if cd := rec.Header().Get("Content-Disposition"); !regexp.MustCompile(`^inline; filename="scrap-paper-[A-Za-z0-9._-]{1,64}\.pdf"$`).MatchString(cd) {
					t.Errorf("Content-Disposition %q", cd)
				}
				body := rec.Body.Bytes()
				if !bytes.HasPrefix(body, []byte("%PDF-")) || !bytes.Contains(body[len(body)-16:], []byte("%%EOF")) {
					t.Fatalf("not a PDF: %q", body[:16])
				}
				if n := bytes.Count(body, []byte("/Type /Page\n")); n != ScrapPaperPages {
					t.Errorf("%d pages, want %d", n, ScrapPaperPages)
				}
				text := pdfText(t, body)
				want := "Scrap paper\n" + strings.Join(c.lines, "\n")
				if c.lines == nil { // wrapped where the line breaks: compare without breaks and blanks
					want = "ScrappaperId:" + c.id
					text = strings.NewReplacer("\n", "", " ", "").Replace(text)
				}
				if strings.Count(text, want) != ScrapPaperPages {
					t.Errorf("the pages do not each print\n%q\nthey print\n%q", want, text)
				}
			})
		}
		for _, c := range []struct{ name, query string }{
			{name: "missing", query: ""},
			{name: "empty", query: "?id="},
			{name: "blank", query: "?id=%20%20"},
			{name: "twice", query: "?id=a&id=b"},
			{name: "too long", query: "?id=" + strings.Repeat("é", MaxScrapPaperID+1)},
		} {
			t.Run(c.name, func(t *testing.T) {
				rec := e.do("GET", "/api/events/scrap-paper"+c.query, "", "-")
				if status, _ := problemOf(t, rec); status != http.StatusBadRequest {
					t.Fatalf("status %d: %s", status, rec.Body)
				}
				var p struct{ Errors map[string][]string }
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Errors["id"] == nil {
					t.Fatalf("the problem does not name id: %s", rec.Body)
				}
			})
		}
	})
}

// TestScrapPaperHonoursAccept: the PDF answers an Accept that allows it (none, */*,
// application/*, application/pdf), with Vary: Accept; another Accept is a 406 problem, before
// the id is read.
func TestScrapPaperHonoursAccept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			accept string
			want   int
		}{
			{accept: "", want: http.StatusOK},
			{accept: "*/*", want: http.StatusOK},
			{accept: "application/*", want: http.StatusOK},
			{accept: "application/json;q=0.9, application/pdf", want: http.StatusOK},
			{accept: "application/json", want: http.StatusNotAcceptable},
			{accept: "text/html, image/*", want: http.StatusNotAcceptable},
		} {
			t.Run(c.accept, func(t *testing.T) {
				h := http.Header{}
				if c.accept != "" {
					h.Set("Accept", c.accept)
				}
				rec := e.doWith("GET", "/api/events/scrap-paper?id=A-1", "", h)
				if rec.Code != c.want {
					t.Fatalf("status %d, want %d: %s", rec.Code, c.want, rec.Body)
				}
				if v := rec.Header().Values("Vary"); !strings.Contains(strings.Join(v, ","), "Accept") {
					t.Errorf("Vary %q does not name Accept", v)
				}
				if c.want == http.StatusNotAcceptable {
					if status, _ := problemOf(t, rec); status != c.want {
						t.Errorf("not a problem document: %s", rec.Body)
					}
				} else if ct := rec.Header().Get("Content-Type"); ct != "application/pdf" {
					t.Errorf("Content-Type %q", ct)
				}
			})
		}
		// A 406 comes first: the missing id is not what the client is told.
		rec := e.doWith("GET", "/api/events/scrap-paper", "", http.Header{"Accept": {"application/json"}})
		if rec.Code != http.StatusNotAcceptable {
			t.Errorf("no id and Accept application/json: status %d, want 406", rec.Code)
		}
	})
}

// pdfText returns the text that the PDF's compressed content streams show, one line per
// text-showing operator (fpdf writes a UTF-8 font's text as UTF-16BE strings).
func pdfText(t *testing.T, doc []byte) string {
	t.Helper()
	streams := regexp.MustCompile(`(?s)stream\n(.*?)\nendstream`).FindAllSubmatch(doc, -1)
	shows := regexp.MustCompile(`(?s)\(((?:\\.|[^\\)])*)\)\s*Tj`)
	var lines []string
	for _, s := range streams {
		zr, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, err := io.ReadAll(zr)
		if err != nil || !bytes.Contains(content, []byte(" Tf")) {
			continue // not a page's content (a font file, say)
		}
		for _, m := range shows.FindAllSubmatch(content, -1) {
			raw := unescapePDF(m[1])
			units := make([]uint16, len(raw)/2)
			for i := range units {
				units[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
			}
			lines = append(lines, string(utf16.Decode(units)))
		}
	}
	return strings.Join(lines, "\n")
}

// unescapePDF undoes a PDF literal string's backslash escapes as fpdf writes them.
func unescapePDF(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'r' {
				out = append(out, '\r')
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}
