package legacy

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine"
	"credo/handlers/problem"
)

// eventView is the version-1 read shape of an event (list-events, add and cancel event).
// RegistrationCount counts the registrations that are not cancelled.
type eventView struct {
	EventIdentifier   string           `json:"EventIdentifier"`
	EventNumber       *int64           `json:"EventNumber"`
	EventTitle        *string          `json:"EventTitle"`
	EventType         *string          `json:"EventType"`
	EventVenue        *string          `json:"EventVenue"`
	EventStart        engine.DateTime  `json:"EventStart"`
	EventEnd          *engine.DateTime `json:"EventEnd"`
	EventExamType     *string          `json:"EventExamType"`
	EventExamFormat   *string          `json:"EventExamFormat"`
	EventBillingCode  *string          `json:"EventBillingCode"`
	RegistrationLimit *int64           `json:"RegistrationLimit"`
	RegistrationCount int64            `json:"RegistrationCount"`
	EventCancelled    *engine.DateTime `json:"EventCancelled"`
	EventCancelReason *string          `json:"EventCancelReason"`
}

func (v *eventView) dests() []any {
	return []any{&v.EventIdentifier, &v.EventNumber, &v.EventTitle, &v.EventType, &v.EventVenue,
		&v.EventStart, &v.EventEnd, &v.EventExamType, &v.EventExamFormat, &v.EventBillingCode,
		&v.RegistrationLimit, &v.RegistrationCount, &v.EventCancelled, &v.EventCancelReason}
}

// eventSelect is eventView's select list, in dests order, over events aliased e.
func eventSelect(s *engine.Store, t tables) string {
	sel := ""
	for _, m := range []string{"EventIdentifier", "EventNumber", "EventTitle", "EventType", "EventVenue",
		"EventStart", "EventEnd", "EventExamType", "EventExamFormat", "EventBillingCode", "RegistrationLimit"} {
		sel += sqlCol("e", t.event, m) + ", "
	}
	sel += fmt.Sprintf("(SELECT COUNT(*) FROM %s AS rc WHERE %s = %s AND %s IS NULL), ", s.Table(t.registration),
		sqlCol("rc", t.registration, "EventIdentifier"), sqlCol("e", t.event, "EventIdentifier"),
		sqlCol("rc", t.registration, "Cancelled"))
	return sel + sqlCol("e", t.event, "EventCancelled") + ", " + sqlCol("e", t.event, "EventCancelReason")
}

// events returns the events matching conds, by start time.
func (a *api) events(db *gorm.DB, conds ...clause.Expression) ([]eventView, error) {
	q := a.from(db, a.t.event, "e").Select(a.sql.eventSelect)
	for _, c := range conds {
		q = q.Where(c)
	}
	q = q.Order(sqlCol("e", a.t.event, "EventStart") + ", " + sqlCol("e", a.t.event, "EventIdentifier"))
	return scanAll(q, (*eventView).dests)
}

// event returns one event of the organization, or a 404.
func (a *api) event(db *gorm.DB, org, id string) (eventView, error) {
	evs, err := a.events(db, eq("e", a.t.event, "EventIdentifier", id), eq("e", a.t.event, "OrganizationIdentifier", org))
	if err != nil {
		return eventView{}, err
	}
	if len(evs) == 0 {
		return eventView{}, notFound(msgEventNotFound)
	}
	return evs[0], nil
}

// listEvents answers the organization's events that start on the day `date` names: a calendar
// date yyyy-MM-dd (a UTC day), or a datetime in the send format (that day in its own offset).
func (a *api) listEvents(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r, "date")
	if err != nil {
		return err
	}
	date, err := requiredParam(q, "date")
	if err != nil {
		return err
	}
	lo, hi, err := parseDay(date)
	if err != nil {
		return engine.InvalidMember("date", "date %s must be yyyy-MM-dd or a datetime with an offset", engine.Quoted(date))
	}
	start := col("e", a.t.event, "EventStart")
	conds := []clause.Expression{eq("e", a.t.event, "OrganizationIdentifier", caller(r).OrganizationIdentifier),
		clause.Gte{Column: start, Value: lo.InstantKey()}}
	if !hi.After(engine.MaxInstant) {
		// The end of the last day, 10000-01-01, is no instant credo keeps, and its key (five
		// year digits) compares below every stored one: no start lies beyond it anyway.
		conds = append(conds, clause.Lt{Column: start, Value: hi.InstantKey()})
	}
	evs, err := a.events(a.store.DB(r.Context()), conds...)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, evs)
}

// parseDay returns the bounds [lo, hi) of the day a list-events date names. A calendar date
// before 0001-01-01 is refused, as ParseDateTime refuses a datetime there; hi is after
// engine.MaxInstant for the last day.
func parseDay(s string) (lo, hi engine.DateTime, err error) {
	var day time.Time
	if len(s) == len("2006-01-02") {
		day, err = time.Parse("2006-01-02", s)
		if err == nil && day.Before(engine.MinInstant) {
			err = fmt.Errorf("%s is before 0001-01-01", engine.Quoted(s))
		}
	} else {
		var d engine.DateTime
		d, err = engine.ParseDateTime(s)
		y, m, dd := d.Date()
		day = time.Date(y, m, dd, 0, 0, 0, 0, d.Location())
	}
	if err != nil {
		return lo, hi, err
	}
	return engine.DateTime{Time: day}, engine.DateTime{Time: day.AddDate(0, 0, 1)}, nil
}

// addEvent creates an exam event with the id of the path, under the same rules as an event that
// register-lax creates, plus an optional RegistrationLimit (null or 0: no limit).
func (a *api) addEvent(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "event")
	b, err := readBody(w, r, "EventVenue", "EventStart", "EventExamType", "EventExamFormat", "EventBillingCode", "RegistrationLimit")
	if err != nil {
		return err
	}
	// The problems of the path's id and of the body (types, RegistrationLimit, EventStart)
	// come in one 400. The nil UUID, a typed client's unset Guid, names no event: stored, it
	// was an event that register-lax found at its venue and start and then could not register
	// onto (a registration's EventIdentifier cannot be the nil UUID).
	var bad problems
	if id == engine.NilUUID {
		bad.add(failMember(msgEventIDInvalid, "EventIdentifier", "EventIdentifier cannot be the nil UUID "+engine.NilUUID))
	}
	spec := a.readEventSpec(b, &bad)
	spec.Limit, err = b.int("RegistrationLimit")
	bad.add(err)
	if spec.Limit != nil && *spec.Limit < 0 {
		bad.add(failMember(msgLimitInvalid, "RegistrationLimit", "RegistrationLimit cannot be negative"))
	}
	spec.Start, err = a.futureStart(b)
	bad.add(err)
	if err := bad.err(); err != nil {
		return err
	}
	org := caller(r).OrganizationIdentifier
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		found, err := exists(a.table(db, a.t.event).Where(eq("", a.t.event, "EventIdentifier", id)))
		if err != nil {
			return err
		}
		if found {
			return fail(msgEventExists)
		}
		if spec.Venue, err = a.checkVenue(db, org, spec.Venue); err != nil {
			return err
		}
		return a.createEvent(ctx, tx, org, id, spec, deref(spec.ExamType))
	})
	if err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return fail(msgEventExists)
		}
		return err
	}
	ev, err := a.event(a.store.DB(ctx), org, id)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, ev)
}

// cancelEvent marks an event of the organization cancelled with a reason; register-lax and
// transfer-lax no longer match it. Its registrations stay as they are, to be transferred.
func (a *api) cancelEvent(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "event")
	reason, err := readString(w, r, "Reason")
	if err != nil {
		return err
	}
	org := caller(r).OrganizationIdentifier
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		ev, err := a.event(db, org, id)
		if err != nil {
			return err
		}
		if ev.EventCancelled != nil {
			return fail(msgEventCancelled)
		}
		if ev.EventVenue != nil {
			// Every lookup that can match this event holds its start minute's lock (matchLocks).
			if err := a.lock(db, venueMinuteLock(*ev.EventVenue, startMinute(ev.EventStart))); err != nil {
				return err
			}
		}
		return a.table(db, a.t.event).Where(eq("", a.t.event, "EventIdentifier", id)).
			Updates(map[string]any{
				column(a.t.event, "EventCancelled"):    a.now(),
				column(a.t.event, "EventCancelReason"): opt(reason),
			}).Error
	})
	if err != nil {
		return err
	}
	ev, err := a.event(a.store.DB(ctx), org, id)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, ev)
}

// classView is the public shape of a class: classes is anonymous, so it leaves out billing,
// limits and cancellation.
type classView struct {
	EventIdentifier string           `json:"EventIdentifier"`
	EventNumber     *int64           `json:"EventNumber"`
	EventTitle      *string          `json:"EventTitle"`
	EventVenue      *string          `json:"EventVenue"`
	EventStart      engine.DateTime  `json:"EventStart"`
	EventEnd        *engine.DateTime `json:"EventEnd"`
}

// classes answers an organization's classes (events of EventType Class) that are not
// cancelled, by start time. It is anonymous (decisions §12); an unknown organization has none.
func (a *api) classes(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r, "organization")
	if err != nil {
		return err
	}
	raw, err := requiredParam(q, "organization")
	if err != nil {
		return err
	}
	org, err := engine.ParseUUID(raw)
	if err != nil {
		return engine.InvalidMember("organization", "organization: %v", err)
	}
	evs, err := a.events(a.store.DB(r.Context()),
		eq("e", a.t.event, "OrganizationIdentifier", org),
		eq("e", a.t.event, "EventType", eventTypeClass),
		clause.Expr{SQL: sqlCol("e", a.t.event, "EventCancelled") + " IS NULL"})
	if err != nil {
		return err
	}
	out := make([]classView, len(evs))
	for i, e := range evs {
		out[i] = classView{EventIdentifier: e.EventIdentifier, EventNumber: e.EventNumber, EventTitle: e.EventTitle,
			EventVenue: e.EventVenue, EventStart: e.EventStart, EventEnd: e.EventEnd}
	}
	return problem.JSON(w, http.StatusOK, out)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
