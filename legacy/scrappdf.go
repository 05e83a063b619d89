package legacy

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// Scrap-paper layout: A4 portrait, in millimetres.
const (
	// ScrapPaperPages is how many ruled pages a scrap-paper PDF has.
	ScrapPaperPages = 2
	scrapMargin     = 15.0
	scrapRule       = 8.0
	scrapFont       = "Go"
)

// The Go fonts (BSD licence, embedded by golang.org/x/image) print the header: they cover
// Latin, Greek and Cyrillic, where the PDF core fonts cover only Windows-1252, and fpdf embeds
// the subset a sheet uses. scrapGlyphs reads the regular font's character map once, to tell
// which characters it can draw.
var scrapGlyphs = sync.OnceValues(func() (*sfnt.Font, error) { return sfnt.Parse(goregular.TTF) })

// printable returns s as the header font can draw it, each character once: a control or
// formatting character (line breaks, bidirectional overrides…), a character the font lacks,
// or a byte that is not UTF-8 is written as its code point, e.g. <U+4E2D>, so that the sheet
// shows every character of the id, unambiguously.
func printable(s string) (string, error) {
	f, err := scrapGlyphs()
	if err != nil {
		return "", fmt.Errorf("legacy: read the scrap-paper font: %w", err)
	}
	var buf sfnt.Buffer
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, "<0x%02X>", s[i])
				continue
			}
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		if g, err := f.GlyphIndex(&buf, r); err != nil || g == 0 {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

// renderScrapPaper draws ScrapPaperPages ruled A4 pages, each headed by the lines (wrapped
// when long); the document is dated now.
func renderScrapPaper(header []string, now time.Time) ([]byte, error) {
	lines := make([]string, len(header))
	for i, l := range header {
		p, err := printable(l)
		if err != nil {
			return nil, err
		}
		lines[i] = p
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes(scrapFont, "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(scrapFont, "B", gobold.TTF)
	pdf.AddUTF8FontFromBytes(scrapFont, "I", goitalic.TTF)
	pdf.SetCreationDate(now)
	pdf.SetModificationDate(now)
	pdf.SetTitle("Scrap paper", true)
	pdf.SetCreator("credo", true)
	pdf.SetMargins(scrapMargin, scrapMargin, scrapMargin)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("")
	pdf.SetHeaderFuncMode(func() {
		pdf.SetFont(scrapFont, "B", 14)
		pdf.CellFormat(0, 8, "Scrap paper", "", 1, "L", false, 0, "")
		pdf.SetFont(scrapFont, "", 10)
		for _, l := range lines {
			pdf.MultiCell(0, 5.5, l, "", "L", false)
		}
		pdf.Ln(2)
		w, _ := pdf.GetPageSize()
		pdf.SetLineWidth(0.4)
		pdf.Line(scrapMargin, pdf.GetY(), w-scrapMargin, pdf.GetY())
	}, true)
	pdf.SetFooterFunc(func() {
		_, h := pdf.GetPageSize()
		pdf.SetY(h - scrapMargin + 4)
		pdf.SetFont(scrapFont, "I", 8)
		pdf.CellFormat(0, 4, fmt.Sprintf("Page %d of {nb} - hand in with your exam", pdf.PageNo()), "", 0, "C", false, 0, "")
	})
	for range ScrapPaperPages {
		pdf.AddPage()
		w, h := pdf.GetPageSize()
		pdf.SetDrawColor(170, 170, 170)
		pdf.SetLineWidth(0.2)
		for y := pdf.GetY() + scrapRule; y <= h-scrapMargin; y += scrapRule {
			pdf.Line(scrapMargin, y, w-scrapMargin, y)
		}
		pdf.SetDrawColor(0, 0, 0)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("legacy: render scrap paper: %w", err)
	}
	return buf.Bytes(), nil
}
