package legacy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"gorm.io/gorm"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// MaxScrapPaperID is the longest id, in characters, that scrap-paper prints: longer ones are a
// 400, not a sheet whose header crowds out the ruled lines.
const MaxScrapPaperID = 200

// scrapPaper answers a printable PDF of ruled pages headed by the `id` it is given, printed as
// given: any non-empty string up to MaxScrapPaperID characters (decisions §12: the original
// prints the id on the sheet). When the id names a registration or an event of the version-1
// partition, the header adds it (a registration: learner, event, form). The route is
// anonymous, so the header leaves out emails and billing. A missing or blank id is a 400; an
// Accept that allows no PDF is a 406 (request.NegotiateFor), checked first.
func (a *api) scrapPaper(w http.ResponseWriter, r *http.Request) error {
	if _, err := request.NegotiateFor(w, r, request.Offer{Type: "application/pdf"}); err != nil {
		return err
	}
	q, err := queryParams(r, "id")
	if err != nil {
		return err
	}
	raw, err := requiredParam(q, "id")
	if err != nil {
		return err
	}
	if n := utf8.RuneCountInString(raw); n > MaxScrapPaperID {
		return engine.InvalidMember("id", "id is %d characters long; scrap paper prints at most %d", n, MaxScrapPaperID)
	}
	header := []string{"Id: " + raw}
	if id, err := engine.ParseUUID(raw); err == nil {
		more, err := a.scrapDetails(a.store.DB(r.Context()), id)
		if err != nil {
			return err
		}
		header = append(header, more...)
	}
	doc, err := renderScrapPaper(header, a.clock())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="scrap-paper-`+fileNamePart(raw)+`.pdf"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(doc)
	return err
}

// scrapDetails returns the header lines of the registration with id, else of the event with
// id, else none.
func (a *api) scrapDetails(db *gorm.DB, id string) ([]string, error) {
	reg, err := a.registration(db, "", id)
	var p *problem.Problem
	switch {
	case err == nil:
		lines := []string{"Registration of " + deref(reg.LearnerName) + codeSuffix(reg.LearnerCode)}
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
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	e := evs[0]
	title := eventLine(e.EventNumber, e.EventExamType, e.EventExamFormat)
	if e.EventExamType == nil && e.EventTitle != nil {
		title += " " + *e.EventTitle
	}
	return a.eventLines(db, title, &e.EventStart, e.EventVenue), nil
}

// fileNamePart is id reduced to ASCII letters, digits, '.', '-' and '_' (others become '_'),
// at most 64 of them, for a Content-Disposition file name that needs no quoting rules.
func fileNamePart(id string) string {
	b := make([]byte, 0, 64)
	for _, c := range id {
		if len(b) == cap(b) {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			b = append(b, byte(c))
		default:
			b = append(b, '_')
		}
	}
	return string(b)
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
