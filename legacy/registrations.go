package legacy

import (
	"fmt"
	"net/http"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine"
	"credo/handlers/problem"
)

// MaxSearchResults caps registrations/search; api.md gives the operation no paging.
const MaxSearchResults = 1000

// registrationLinks are the event, learner and form members of both registration read shapes
// (decisions §14); JSON inlines them where the struct embeds them.
type registrationLinks struct {
	EventIdentifier          *string          `json:"EventIdentifier"`
	EventNumber              *int64           `json:"EventNumber"`
	EventFormat              *string          `json:"EventFormat"`
	EventStart               *engine.DateTime `json:"EventStart"`
	EventVenue               *string          `json:"EventVenue"`
	EventExamType            *string          `json:"EventExamType"`
	LearnerIdentifier        string           `json:"LearnerIdentifier"`
	LearnerCode              *string          `json:"LearnerCode"`
	LearnerName              *string          `json:"LearnerName"`
	LearnerEmail             *string          `json:"LearnerEmail"`
	AssessmentFormIdentifier *string          `json:"AssessmentFormIdentifier"`
	AssessmentFormCode       *string          `json:"AssessmentFormCode"`
	AssessmentFormName       *string          `json:"AssessmentFormName"`
	AssessmentFormTitle      *string          `json:"AssessmentFormTitle"`
}

// registrationView is GET /api/registrations/{id}.
type registrationView struct {
	RegistrationIdentifier       string          `json:"RegistrationIdentifier"`
	RegistrationAttendanceStatus string          `json:"RegistrationAttendanceStatus"`
	LastChangeTime               engine.DateTime `json:"LastChangeTime"`
	LastChangeType               string          `json:"LastChangeType"`
	registrationLinks
	Accommodations []accommodation `json:"Accommodations"`
	TimeLimit      *int64          `json:"TimeLimit"`
}

// registrationItem is one element of registrations/search.
type registrationItem struct {
	RegistrationIdentifier string          `json:"RegistrationIdentifier"`
	AttendanceStatus       string          `json:"AttendanceStatus"`
	LastChangeTime         engine.DateTime `json:"LastChangeTime"`
	LastChangeType         string          `json:"LastChangeType"`
	registrationLinks
}

// registrationRow is what registrationSelect reads.
type registrationRow struct {
	item      registrationItem
	timeLimit *int64
}

func (v *registrationRow) dests() []any {
	l := &v.item.registrationLinks
	return []any{&v.item.RegistrationIdentifier, &v.item.AttendanceStatus, &v.item.LastChangeTime,
		&v.item.LastChangeType, &v.timeLimit, &l.EventIdentifier, &l.EventNumber, &l.EventFormat,
		&l.EventStart, &l.EventVenue, &l.EventExamType, &l.LearnerIdentifier, &l.LearnerCode,
		&l.LearnerName, &l.LearnerEmail, &l.AssessmentFormIdentifier, &l.AssessmentFormCode,
		&l.AssessmentFormName, &l.AssessmentFormTitle}
}

// registrationSelect is registrationRow's select list, in dests order.
func registrationSelect(t tables, learnerName string) string {
	cols := []string{
		sqlCol("r", t.registration, "RegistrationIdentifier"), sqlCol("r", t.registration, "AttendanceStatus"),
		sqlCol("r", t.registration, "LastChangeTime"), sqlCol("r", t.registration, "LastChangeType"),
		sqlCol("r", t.registration, "TimeLimit"),
		sqlCol("e", t.event, "EventIdentifier"), sqlCol("e", t.event, "EventNumber"),
		sqlCol("e", t.event, "EventExamFormat"), sqlCol("e", t.event, "EventStart"),
		sqlCol("e", t.event, "EventVenue"), sqlCol("e", t.event, "EventExamType"),
		sqlCol("r", t.registration, "LearnerIdentifier"), sqlCol("p", t.person, "PersonCode"),
		learnerName, sqlCol("u", t.user, "Email"),
		sqlCol("f", t.form, "FormIdentifier"), sqlCol("f", t.form, "FormCode"),
		sqlCol("f", t.form, "FormName"), sqlCol("f", t.form, "FormTitle"),
	}
	return strings.Join(cols, ", ")
}

// registrations starts a query of registrations (r) joined to what the read shapes show.
func (a *api) registrations(db *gorm.DB) *gorm.DB {
	q := a.from(db, a.t.registration, "r")
	for _, j := range a.sql.registrationJoins {
		q = q.Joins(j)
	}
	return q
}

// registration returns the read shape of a registration; org "" looks in every organization
// (the anonymous scrap paper). A registration outside org is not found (404).
func (a *api) registration(db *gorm.DB, org, id string) (registrationView, error) {
	q := a.registrations(db).Select(a.sql.registrationSelect).Where(eq("r", a.t.registration, "RegistrationIdentifier", id))
	if org != "" {
		q = q.Where(eq("r", a.t.registration, "OrganizationIdentifier", org))
	}
	rows, err := scanAll(q.Limit(1), (*registrationRow).dests)
	if err != nil {
		return registrationView{}, err
	}
	if len(rows) == 0 {
		return registrationView{}, notFound(msgRegistrationMissing)
	}
	row := rows[0]
	v := registrationView{
		RegistrationIdentifier:       row.item.RegistrationIdentifier,
		RegistrationAttendanceStatus: row.item.AttendanceStatus,
		LastChangeTime:               row.item.LastChangeTime,
		LastChangeType:               row.item.LastChangeType,
		registrationLinks:            row.item.registrationLinks,
		TimeLimit:                    row.timeLimit,
	}
	v.Accommodations, err = a.accommodations(db, id)
	return v, err
}

// accommodations lists a registration's accommodations by Type.
func (a *api) accommodations(db *gorm.DB, registration string) ([]accommodation, error) {
	return scanAll(a.from(db, a.t.accommodation, "x").
		Select(sqlCol("x", a.t.accommodation, "AccommodationType")+", "+sqlCol("x", a.t.accommodation, "AccommodationName")+", "+sqlCol("x", a.t.accommodation, "TimeExtension")).
		Where(eq("x", a.t.accommodation, "RegistrationIdentifier", registration)).
		Order(sqlCol("x", a.t.accommodation, "AccommodationType")),
		func(x *accommodation) []any { return []any{&x.Type, &x.Name, &x.TimeExtension} })
}

// writeRegistration answers the registration's read shape: what the commands that change one
// registration answer.
func (a *api) writeRegistration(w http.ResponseWriter, r *http.Request, id string) error {
	v, err := a.registration(a.store.DB(r.Context()), caller(r).OrganizationIdentifier, id)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, v)
}

func (a *api) getRegistration(w http.ResponseWriter, r *http.Request) error {
	return a.writeRegistration(w, r, pathID(r, "registration"))
}

// deleteRegistration removes a registration of the organization and its accommodations.
func (a *api) deleteRegistration(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	org := caller(r).OrganizationIdentifier
	err := a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		res := a.table(db, a.t.registration).
			Where(eq("", a.t.registration, "RegistrationIdentifier", id)).
			Where(eq("", a.t.registration, "OrganizationIdentifier", org)).Delete(&map[string]any{})
		if res.Error != nil {
			return fmt.Errorf("legacy: delete registration: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return notFound(msgRegistrationMissing)
		}
		return a.table(db, a.t.accommodation).Where(eq("", a.t.accommodation, "RegistrationIdentifier", id)).Delete(&map[string]any{}).Error
	})
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, map[string]any{"Registration": id, "Deleted": true})
}

// criteria is the body of registrations/count and registrations/search.
type criteria struct {
	Name, Email, Code *string
	LastChangeSince   *engine.DateTime
	LastChangeBefore  *engine.DateTime
}

// readCriteria reads the criteria; Name, Email and Code are checked as filters of the members
// they match (the person's FullName, the user's Email, the person's PersonCode): a value
// longer than the member's maximum is a 400 naming it, before any SQL runs.
func (a *api) readCriteria(w http.ResponseWriter, r *http.Request) (criteria, error) {
	var c criteria
	b, err := readBody(w, r, "Name", "Email", "Code", "LastChangeTimeSince", "LastChangeTimeBefore")
	if err != nil {
		return c, err
	}
	var bad problems
	c.Name, err = b.filter("Name", field(a.t.person, "FullName"))
	bad.add(err)
	c.Email, err = b.filter("Email", field(a.t.user, "Email"))
	bad.add(err)
	c.Code, err = b.filter("Code", field(a.t.person, "PersonCode"))
	bad.add(err)
	c.LastChangeSince, err = b.datetime("LastChangeTimeSince")
	bad.add(err)
	c.LastChangeBefore, err = b.datetime("LastChangeTimeBefore")
	bad.add(err)
	return c, bad.err()
}

// where limits q (from registrations) to the organization and the criteria: Name, Email and
// Code are case-insensitive substrings of the learner's name, email and person code, matched
// as a contains filter is (engine.Store.Contains); LastChangeTimeSince is inclusive and
// LastChangeTimeBefore exclusive (decisions §12).
func (a *api) where(q *gorm.DB, org string, c criteria) *gorm.DB {
	q = q.Where(eq("r", a.t.registration, "OrganizationIdentifier", org))
	contains := func(expr string, v *string) {
		if v == nil || *v == "" {
			return
		}
		q = q.Where(a.store.Contains(clause.Expr{SQL: expr}, *v))
	}
	contains(a.sql.learnerName, c.Name)
	contains(sqlCol("u", a.t.user, "Email"), c.Email)
	contains(sqlCol("p", a.t.person, "PersonCode"), c.Code)
	changed := col("r", a.t.registration, "LastChangeTime")
	if c.LastChangeSince != nil {
		q = q.Where(clause.Gte{Column: changed, Value: c.LastChangeSince.InstantKey()})
	}
	if c.LastChangeBefore != nil {
		q = q.Where(clause.Lt{Column: changed, Value: c.LastChangeBefore.InstantKey()})
	}
	return q
}

// countRegistrations answers {"Count": n} for the organization's registrations matching the criteria.
func (a *api) countRegistrations(w http.ResponseWriter, r *http.Request) error {
	c, err := a.readCriteria(w, r)
	if err != nil {
		return err
	}
	var n int64
	if err := a.where(a.registrations(a.store.DB(r.Context())), caller(r).OrganizationIdentifier, c).Count(&n).Error; err != nil {
		return fmt.Errorf("legacy: count registrations: %w", err)
	}
	return problem.JSON(w, http.StatusOK, map[string]int64{"Count": n})
}

// searchRegistrations answers the organization's registrations matching the criteria, newest
// change first, at most MaxSearchResults.
func (a *api) searchRegistrations(w http.ResponseWriter, r *http.Request) error {
	c, err := a.readCriteria(w, r)
	if err != nil {
		return err
	}
	q := a.where(a.registrations(a.store.DB(r.Context())).Select(a.sql.registrationSelect), caller(r).OrganizationIdentifier, c).
		Order(sqlCol("r", a.t.registration, "LastChangeTime") + " DESC, " + sqlCol("r", a.t.registration, "RegistrationIdentifier") + " DESC").
		Limit(MaxSearchResults)
	rows, err := scanAll(q, (*registrationRow).dests)
	if err != nil {
		return err
	}
	out := make([]registrationItem, len(rows))
	for i, row := range rows {
		out[i] = row.item
	}
	return problem.JSON(w, http.StatusOK, out)
}
