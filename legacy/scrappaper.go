package legacy

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
	"gorm.io/gorm"

	"credo/engine"
	"credo/handlers/problem"
)

// Scrap-paper layout: A4 portrait, in millimetres.
const (
	// ScrapPaperPages is how many ruled pages a scrap-paper PDF has.
	ScrapPaperPages = 2
	scrapMargin     = 15.0
	scrapRule       = 8.0
)

// scrapPaper answers a printable PDF of ruled pages headed by the event or registration the
// `id` names (a registration adds its learner and form). It is anonymous (decisions §12), so
// the header leaves out emails and billing; an unknown id is a 404.
func (a *api) scrapPaper(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r, "id")
	if err != nil {
		return err
	}
	raw, err := requiredParam(q, "id")
	if err != nil {
		return err
	}
	id, err := engine.ParseUUID(raw)
	if err != nil {
		return engine.InvalidMember("id", "id: %v", err)
	}
	header, err := a.scrapHeader(a.store.DB(r.Context()), id)
	if err != nil {
		return err
	}
	doc, err := renderScrapPaper(header, a.clock())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="scrap-paper-`+id+`.pdf"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(doc)
	return err
}

// scrapHeader returns the header lines for a registration id, else for an event id.
func (a *api) scrapHeader(db *gorm.DB, id string) ([]string, error) {
	reg, err := a.registration(db, "", id)
	var p *problem.Problem
	switch {
	case err == nil:
		lines := []string{"Registration " + reg.RegistrationIdentifier,
			"Learner: " + deref(reg.LearnerName) + codeSuffix(reg.LearnerCode)}
		if reg.EventIdentifier != nil {
			lines = append(lines, a.eventLines(db, eventLine(reg.EventNumber, reg.EventExamType, reg.EventFormat), reg.EventStart, reg.EventVenue)...)
		}
		if reg.AssessmentFormCode != nil {
			lines = append(lines, "Assessment: "+*reg.AssessmentFormCode+" "+deref(reg.AssessmentFormTitle))
		}
		return lines, nil
	case !errors.As(err, &p) || p.Status != http.StatusNotFound:
		return nil, err
	}
	evs, err := a.events(db, eq("e", a.t.event, "EventIdentifier", id))
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, notFound(msgScrapPaperMissing)
	}
	e := evs[0]
	title := eventLine(e.EventNumber, e.EventExamType, e.EventExamFormat)
	if e.EventExamType == nil && e.EventTitle != nil {
		title += " " + *e.EventTitle
	}
	return a.eventLines(db, title, &e.EventStart, e.EventVenue), nil
}

func eventLine(number *int64, examType, format *string) string {
	s := "Event"
	if number != nil {
		s += fmt.Sprintf(" #%d", *number)
	}
	for _, p := range []*string{examType, format} {
		if deref(p) != "" {
			s += " - " + *p
		}
	}
	return s
}

// eventLines adds the start and the venue's name to an event's title line.
func (a *api) eventLines(db *gorm.DB, title string, start *engine.DateTime, venue *string) []string {
	lines := []string{title}
	if start != nil {
		lines = append(lines, "Starts: "+start.Format("Monday 2 January 2006, 15:04 (-07:00)"))
	}
	if venue != nil {
		names, err := scanAll(a.from(db, a.t.venue, "v").Select(sqlCol("v", a.t.venue, "VenueName")).
			Where(eq("v", a.t.venue, "VenueIdentifier", *venue)).Limit(1),
			func(s *string) []any { return []any{s} })
		if err == nil && len(names) > 0 {
			lines = append(lines, "Venue: "+names[0])
		}
	}
	return lines
}

func codeSuffix(code *string) string {
	if deref(code) == "" {
		return ""
	}
	return " (" + *code + ")"
}

// renderScrapPaper draws ScrapPaperPages ruled A4 pages, each headed by the lines; the
// document is dated now.
func renderScrapPaper(header []string, now time.Time) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(now)
	pdf.SetModificationDate(now)
	pdf.SetTitle("Scrap paper", true)
	pdf.SetCreator("credo", true)
	pdf.SetMargins(scrapMargin, scrapMargin, scrapMargin)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetHeaderFuncMode(func() {
		pdf.SetFont("Helvetica", "B", 14)
		pdf.CellFormat(0, 8, "Scrap paper", "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		for _, l := range header {
			pdf.CellFormat(0, 5.5, tr(l), "", 1, "L", false, 0, "")
		}
		pdf.Ln(2)
		w, _ := pdf.GetPageSize()
		pdf.SetLineWidth(0.4)
		pdf.Line(scrapMargin, pdf.GetY(), w-scrapMargin, pdf.GetY())
	}, true)
	pdf.SetFooterFunc(func() {
		_, h := pdf.GetPageSize()
		pdf.SetY(h - scrapMargin + 4)
		pdf.SetFont("Helvetica", "I", 8)
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
