package legacy

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine"
)

// The closed sets of version-1 exam events (decisions §12), compared case-sensitively.
var (
	examTypes   = []string{"Class", "Individual", "Individual (A)", "Individual (N)", "Sitting", "Test", "Accessibility and Resource Centre (ARC)"}
	examFormats = []string{"Online", "Paper"}
	// individualTypes are never matched: an individual event is its one learner's.
	individualTypes = []string{"Individual", "Individual (A)", "Individual (N)"}
)

const (
	// examIndividual always gets a new event, typed by whether the registration is accommodated.
	examIndividual     = "Individual"
	examIndividualAcc  = "Individual (A)"
	examIndividualNone = "Individual (N)"
	// eventTypeExam is the EventType of version-1 exam events, the only ones register-lax and
	// transfer-lax match; eventTypeClass marks the classes that events/classes lists.
	eventTypeExam  = "Exam"
	eventTypeClass = "Class"
	// matchWindow: a request's start matches an event starting at most this much earlier.
	matchWindow = time.Minute
)

// eventSpec is what the body says about the event to find or create.
type eventSpec struct {
	Venue                             string
	Start                             engine.DateTime
	ExamType, ExamFormat, BillingCode *string
	Limit                             *int64
}

// readEventSpec reads the event members of a register-lax, transfer-lax or add-event body
// (those a body does not take are absent, hence nil), adding each one's problem to p.
func (a *api) readEventSpec(b members, p *problems) eventSpec {
	var spec eventSpec
	var venue *string
	b.strs(p, strMember{"EventVenue", &venue}, strMember{"EventExamType", &spec.ExamType},
		strMember{"EventExamFormat", &spec.ExamFormat}, strMember{"EventBillingCode", &spec.BillingCode})
	spec.Venue = deref(venue)
	return spec
}

// futureStart reads EventStart, which must be a datetime after now.
func (a *api) futureStart(b members) (engine.DateTime, error) {
	d, err := b.datetime("EventStart")
	switch {
	case err != nil:
		return engine.DateTime{}, failMember(msgStartInvalid, "EventStart", err.Error())
	case d == nil:
		return engine.DateTime{}, failMember(msgStartInvalid, "EventStart", "EventStart is required")
	case !d.After(a.clock()):
		return engine.DateTime{}, failMember(msgStartInvalid, "EventStart", "EventStart must be in the future")
	}
	return *d, nil
}

// checkVenue returns the venue id, lower-cased as stored, when it is one of the organization's.
func (a *api) checkVenue(db *gorm.DB, org, venue string) (string, error) {
	id, err := engine.ParseUUID(venue)
	if err != nil {
		return "", fail(msgVenueNotFound)
	}
	ok, err := exists(a.from(db, a.t.venue, "v").
		Where(eq("v", a.t.venue, "VenueIdentifier", id)).Where(eq("v", a.t.venue, "OrganizationIdentifier", org)))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fail(msgVenueNotFound)
	}
	return id, nil
}

// placement is the event a registration goes to.
type placement struct {
	Event   string
	Limit   *int64
	Created bool
}

// place returns the organization's exam event at spec.Venue whose start is within a minute
// before spec.Start (by instant, so the offsets written do not matter; of several, the latest),
// creating one when none matches; an Individual exam always gets a new event, "Individual (A)"
// when accommodated.
// spec.Venue is a venue checkVenue returned.
func (a *api) place(ctx context.Context, tx *engine.Store, org string, spec eventSpec, accommodated bool) (placement, error) {
	db := tx.DB(ctx)
	if deref(spec.ExamType) == examIndividual {
		typ := examIndividualNone
		if accommodated {
			typ = examIndividualAcc
		}
		id := engine.NewID()
		return placement{Event: id, Created: true}, a.createEvent(ctx, tx, org, id, spec, typ)
	}
	if err := a.lock(db, matchLocks(spec.Venue, spec.Start)...); err != nil {
		return placement{}, err
	}
	start := col("e", a.t.event, "EventStart")
	examType := sqlCol("e", a.t.event, "EventExamType")
	type match struct {
		id    string
		limit *int64
	}
	found, err := scanAll(a.from(db, a.t.event, "e").
		Select(sqlCol("e", a.t.event, "EventIdentifier")+", "+sqlCol("e", a.t.event, "RegistrationLimit")).
		Where(eq("e", a.t.event, "EventVenue", spec.Venue)).
		Where(clause.Gte{Column: start, Value: engine.DateTime{Time: spec.Start.Add(-matchWindow + 100*time.Nanosecond)}.InstantKey()}).
		Where(clause.Lt{Column: start, Value: spec.Start.InstantKey() + "~"}).
		Where(eq("e", a.t.event, "OrganizationIdentifier", org)).
		Where(eq("e", a.t.event, "EventType", eventTypeExam)).
		Where(clause.Expr{SQL: sqlCol("e", a.t.event, "EventCancelled") + " IS NULL"}).
		Where(clause.Expr{SQL: "(" + examType + " IS NULL OR " + examType + " NOT IN ?)", Vars: []any{individualTypes}}).
		Order(sqlCol("e", a.t.event, "EventStart")+" DESC, "+sqlCol("e", a.t.event, "EventIdentifier")).Limit(1),
		func(m *match) []any { return []any{&m.id, &m.limit} })
	if err != nil {
		return placement{}, err
	}
	if len(found) > 0 {
		return placement{Event: found[0].id, Limit: found[0].limit}, nil
	}
	id := engine.NewID()
	return placement{Event: id, Created: true}, a.createEvent(ctx, tx, org, id, spec, deref(spec.ExamType))
}

// createEvent validates a new exam event (type, billing code, format: api.md's order) and
// inserts it with the organization's next EventNumber; spec.Venue is a venue checkVenue returned.
func (a *api) createEvent(ctx context.Context, tx *engine.Store, org, id string, spec eventSpec, examType string) error {
	db := tx.DB(ctx)
	switch {
	case deref(spec.ExamType) == "":
		return failMember(msgExamTypeMissing, "EventExamType", "EventExamType is required when an event is created")
	case !slices.Contains(examTypes, *spec.ExamType):
		return failMember(msgExamTypeInvalid, "EventExamType", "EventExamType must be one of "+quoteAll(examTypes))
	case deref(spec.BillingCode) == "":
		return failMember(msgBillingMissing, "EventBillingCode", "EventBillingCode is required when an event is created")
	}
	ok, err := exists(a.from(db, a.t.billing, "b").
		Where(eq("b", a.t.billing, "OrganizationIdentifier", org)).Where(eq("b", a.t.billing, "BillingCode", *spec.BillingCode)))
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return failMember(msgBillingInvalid, "EventBillingCode", "EventBillingCode must be one of the organization's billing codes")
	case deref(spec.ExamFormat) == "":
		return failMember(msgFormatMissing, "EventExamFormat", "EventExamFormat is required when an event is created")
	case !slices.Contains(examFormats, *spec.ExamFormat):
		return failMember(msgFormatInvalid, "EventExamFormat", "EventExamFormat must be one of "+quoteAll(examFormats))
	}
	if err := a.lock(db, numberLock(org)); err != nil {
		return err
	}
	var next int64
	err = a.from(db, a.t.event, "e").Select("COALESCE(MAX(" + sqlCol("e", a.t.event, "EventNumber") + "), 0) + 1").
		Where(eq("e", a.t.event, "OrganizationIdentifier", org)).Scan(&next).Error
	if err != nil {
		return fmt.Errorf("legacy: next event number: %w", err)
	}
	return newDraft(a.t.event).
		set("EventIdentifier", id).
		set("OrganizationIdentifier", org).
		set("EventNumber", next).
		set("EventTitle", examType).
		set("EventType", eventTypeExam).
		set("EventVenue", spec.Venue).
		set("EventStart", spec.Start).
		set("EventExamType", examType).
		set("EventExamFormat", *spec.ExamFormat).
		set("EventBillingCode", *spec.BillingCode).
		set("RegistrationLimit", opt(spec.Limit)).
		insert(ctx, tx)
}

// checkSeat refuses a registration onto a matched event whose RegistrationLimit (when above 0)
// the registrations that are not cancelled already reach. Events created here have no limit.
func (a *api) checkSeat(db *gorm.DB, p placement) error {
	if p.Created || p.Limit == nil || *p.Limit <= 0 {
		return nil
	}
	var n int64
	err := a.from(db, a.t.registration, "r").
		Where(eq("r", a.t.registration, "EventIdentifier", p.Event)).
		Where(clause.Expr{SQL: sqlCol("r", a.t.registration, "Cancelled") + " IS NULL"}).Count(&n).Error
	if err != nil {
		return fmt.Errorf("legacy: count seats: %w", err)
	}
	if n >= *p.Limit {
		return fail(msgEventFull)
	}
	return nil
}

func quoteAll(values []string) string {
	s := ""
	for i, v := range values {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", v)
	}
	return s
}
