package legacy

import (
	"context"
	"fmt"
	"math"
	"strings"

	"gorm.io/gorm"

	"credo/auth"
	"credo/engine"
)

// Registration states and change types written to AttendanceStatus and LastChangeType.
const (
	statusRegistered = "Registered"
	statusCancelled  = "Cancelled"

	changeRegistered     = "Registered"
	changeTransferred    = "Transferred"
	changeCancelled      = "Cancelled"
	changeAssessment     = "Assessment Changed"
	changeAccommodation  = "Accommodation Granted"
	changeAccommodationX = "Accommodation Revoked"
)

// regState is what the commands need of an existing registration.
type regState struct {
	Event, Learner string
	Form           *string
	Cancelled      *engine.DateTime
}

// loadRegistration reads a registration of the organization; a missing one is the 404 of
// decisions §12.
func (a *api) loadRegistration(db *gorm.DB, org, id string) (regState, error) {
	t := a.t.registration
	rows, err := scanAll(a.from(db, t, "r").
		Select(strings.Join([]string{sqlCol("r", t, "EventIdentifier"), sqlCol("r", t, "LearnerIdentifier"),
			sqlCol("r", t, "FormIdentifier"), sqlCol("r", t, "Cancelled")}, ", ")).
		Where(eq("r", t, "RegistrationIdentifier", id)).Where(eq("r", t, "OrganizationIdentifier", org)).Limit(1),
		func(s *regState) []any { return []any{&s.Event, &s.Learner, &s.Form, &s.Cancelled} })
	if err != nil {
		return regState{}, err
	}
	if len(rows) == 0 {
		return regState{}, notFound(msgRegistrationMissing)
	}
	return rows[0], nil
}

// registrationExists reports whether any organization has a registration with this id.
func (a *api) registrationExists(db *gorm.DB, id string) (bool, error) {
	return exists(a.from(db, a.t.registration, "r").Where(eq("r", a.t.registration, "RegistrationIdentifier", id)))
}

// checkLearner returns the learner (a UserIdentifier) when a person of the organization has it.
func (a *api) checkLearner(db *gorm.DB, org string, learner *string) (string, error) {
	id, err := engine.ParseUUID(deref(learner))
	if err != nil {
		return "", fail(msgLearnerNotFound)
	}
	ok, err := exists(a.from(db, a.t.person, "p").
		Where(eq("p", a.t.person, "UserIdentifier", id)).Where(eq("p", a.t.person, "OrganizationIdentifier", org)))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fail(msgLearnerNotFound)
	}
	return id, nil
}

// form is an assessment form as registrations use it.
type form struct {
	ID, Title string
	Limit     *int64
}

// findForm returns the organization's published form with the code whose title does not end in
// "Bilingual" (any case); several such forms: the first by FormIdentifier.
func (a *api) findForm(db *gorm.DB, org string, code *string) (form, error) {
	if deref(code) == "" {
		return form{}, failMember(msgFormNotFound, "Assessment", "Assessment (a form code) is required")
	}
	t := a.t.form
	forms, err := scanAll(a.from(db, t, "f").
		Select(sqlCol("f", t, "FormIdentifier")+", "+sqlCol("f", t, "FormTitle")+", "+sqlCol("f", t, "FormTimeLimit")).
		Where(eq("f", t, "OrganizationIdentifier", org)).Where(eq("f", t, "FormCode", *code)).
		Where(eq("f", t, "FormPublished", true)).Order(sqlCol("f", t, "FormIdentifier")),
		func(f *form) []any { return []any{&f.ID, &f.Title, &f.Limit} })
	if err != nil {
		return form{}, err
	}
	for _, f := range forms {
		if !strings.HasSuffix(strings.ToLower(strings.TrimSpace(f.Title)), "bilingual") {
			return f, nil
		}
	}
	return form{}, fail(msgFormNotFound)
}

// timeLimit is the form's limit plus the accommodations' extensions; null for an untimed form.
func timeLimit(formLimit *int64, accs []accommodation) (*int64, error) {
	var ext int64
	for _, x := range accs {
		if x.TimeExtension != nil {
			ext += *x.TimeExtension
		}
	}
	return limitOf(formLimit, ext)
}

// limitOf is a form's limit plus extensions, null for an untimed form. TimeLimit is an int of
// api.md, a 32-bit integer (an integer column on PostgreSQL): extensions that carry it past
// 2,147,483,647 minutes are a 400 naming TimeExtension, and the command changes nothing.
func limitOf(formLimit *int64, extensions int64) (*int64, error) {
	if formLimit == nil {
		return nil, nil
	}
	n := *formLimit + extensions
	if n > math.MaxInt32 {
		return nil, failMember(msgExtensionInvalid, "TimeExtension", fmt.Sprintf(
			"the time limit, the form's %d minutes plus the accommodations' extensions, would be %d minutes; the most is %d",
			*formLimit, n, math.MaxInt32))
	}
	return &n, nil
}

// storedTimeLimit recomputes a registration's time limit from its form and stored accommodations.
func (a *api) storedTimeLimit(db *gorm.DB, registration string, formID *string) (*int64, error) {
	if formID == nil {
		return nil, nil
	}
	x := a.t.accommodation
	sum := fmt.Sprintf("(SELECT COALESCE(SUM(%s), 0) FROM %s AS x WHERE %s = ?)", sqlCol("x", x, "TimeExtension"),
		a.store.Table(x), sqlCol("x", x, "RegistrationIdentifier"))
	type limits struct {
		form *int64
		ext  int64
	}
	rows, err := scanAll(a.from(db, a.t.form, "f").Select(sqlCol("f", a.t.form, "FormTimeLimit")+", "+sum, registration).
		Where(eq("f", a.t.form, "FormIdentifier", *formID)),
		func(l *limits) []any { return []any{&l.form, &l.ext} })
	if err != nil || len(rows) == 0 || rows[0].form == nil {
		return nil, err
	}
	return limitOf(rows[0].form, rows[0].ext)
}

// update writes members of a registration and stamps the change (LastChangeTime, Type, User).
func (a *api) update(db *gorm.DB, p *auth.Principal, id, change string, set map[string]any) error {
	t := a.t.registration
	values := map[string]any{
		column(t, "LastChangeTime"): a.now(),
		column(t, "LastChangeType"): change,
		column(t, "LastChangeUser"): changeUser(p),
	}
	for m, v := range set {
		values[column(t, m)] = v
	}
	if err := a.table(db, t).Where(eq("", t, "RegistrationIdentifier", id)).Updates(values).Error; err != nil {
		return fmt.Errorf("legacy: update registration %s: %w", id, err)
	}
	return nil
}

// changeUser is what LastChangeUser records: the caller's user id (its email when it has none).
func changeUser(p *auth.Principal) any {
	if p.UserIdentifier != "" {
		return p.UserIdentifier
	}
	if p.Email != "" {
		return p.Email
	}
	return nil
}

// putAccommodation inserts or replaces the registration's accommodation of acc.Type.
func (a *api) putAccommodation(ctx context.Context, tx *engine.Store, registration string, acc accommodation) error {
	if _, err := a.dropAccommodation(tx.DB(ctx), registration, acc.Type); err != nil {
		return err
	}
	return newDraft(a.t.accommodation).
		set("RegistrationIdentifier", registration).
		set("AccommodationType", acc.Type).
		set("AccommodationName", opt(acc.Name)).
		set("TimeExtension", opt(acc.TimeExtension)).
		insert(ctx, tx)
}

// dropAccommodation deletes the registration's accommodation of a type, reporting whether there was one.
func (a *api) dropAccommodation(db *gorm.DB, registration, typ string) (bool, error) {
	x := a.t.accommodation
	res := a.table(db, x).Where(eq("", x, "RegistrationIdentifier", registration)).
		Where(eq("", x, "AccommodationType", typ)).Delete(&map[string]any{})
	if res.Error != nil {
		return false, fmt.Errorf("legacy: delete accommodation: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}
