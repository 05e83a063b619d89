package legacy

import (
	"net/http"
	"strings"

	"gorm.io/gorm"

	"credo/auth"
	"credo/engine"
)

// inRegistration runs change in one transaction, under the lock of registration id and after
// loading it from the caller's organization (the 404 when it has none).
func (a *api) inRegistration(r *http.Request, id string, change func(tx *engine.Store, db *gorm.DB, reg regState) error) error {
	ctx := r.Context()
	return a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		reg, err := a.loadRegistration(db, caller(r).OrganizationIdentifier, id)
		if err != nil {
			return err
		}
		return change(tx, db, reg)
	})
}

// changeRegistration is inRegistration answered with the registration's read shape.
func (a *api) changeRegistration(w http.ResponseWriter, r *http.Request, id string, change func(tx *engine.Store, db *gorm.DB, reg regState) error) error {
	if err := a.inRegistration(r, id, change); err != nil {
		return err
	}
	return a.writeRegistration(w, r, id)
}

// cancelRegistration cancels a registration of the organization: AttendanceStatus Cancelled,
// the time and Reason kept. Cancelling a cancelled registration changes nothing and succeeds.
// Answers the registration's read shape.
func (a *api) cancelRegistration(w http.ResponseWriter, r *http.Request) error {
	id, p := pathID(r, "registration"), caller(r)
	reason, err := readString(w, r, "Reason")
	if err != nil {
		return err
	}
	return a.changeRegistration(w, r, id, func(_ *engine.Store, db *gorm.DB, reg regState) error {
		if reg.Cancelled != nil {
			return nil
		}
		return a.update(db, p, id, changeCancelled, map[string]any{
			"AttendanceStatus": statusCancelled, "Cancelled": a.now(), "CancelReason": opt(reason),
		})
	})
}

// changeAssessment assigns the organization's form with the code Assessment and recomputes the
// time limit. Answers the registration's read shape.
func (a *api) changeAssessment(w http.ResponseWriter, r *http.Request) error {
	id, p := pathID(r, "registration"), caller(r)
	code, err := readString(w, r, "Assessment")
	if err != nil {
		return err
	}
	return a.changeRegistration(w, r, id, func(_ *engine.Store, db *gorm.DB, reg regState) error {
		f, err := a.findForm(db, p.OrganizationIdentifier, code)
		if err != nil {
			return err
		}
		if reg.Form != nil && *reg.Form == f.ID {
			return fail(msgFormAssigned)
		}
		accs, err := a.accommodations(db, id)
		if err != nil {
			return err
		}
		limit, err := timeLimit(f.Limit, accs)
		if err != nil {
			return err
		}
		return a.update(db, p, id, changeAssessment, map[string]any{"FormIdentifier": f.ID, "TimeLimit": opt(limit)})
	})
}

// grantAccommodation adds the accommodation, or replaces the registration's one of the same
// Type, and recomputes the time limit. Answers the registration's read shape.
func (a *api) grantAccommodation(w http.ResponseWriter, r *http.Request) error {
	id, p := pathID(r, "registration"), caller(r)
	b, err := readBody(w, r, accommodationMembers...)
	if err != nil {
		return err
	}
	acc, accErr := b.accommodation()
	return a.changeRegistration(w, r, id, func(tx *engine.Store, db *gorm.DB, reg regState) error {
		if accErr != nil {
			return accErr
		}
		if err := a.putAccommodation(r.Context(), tx, id, acc); err != nil {
			return err
		}
		return a.retime(db, p, id, reg, changeAccommodation)
	})
}

// revokeAccommodation removes the registration's accommodation of Type and recomputes the time
// limit; a Type the registration does not have is a successful no-op. Answers the read shape.
func (a *api) revokeAccommodation(w http.ResponseWriter, r *http.Request) error {
	id, p := pathID(r, "registration"), caller(r)
	typ, err := readString(w, r, "Type")
	if err != nil {
		return err
	}
	return a.changeRegistration(w, r, id, func(_ *engine.Store, db *gorm.DB, reg regState) error {
		if typ == nil || strings.TrimSpace(*typ) == "" {
			return failMember(msgAccommodationType, "Type", "Type is required and cannot be blank")
		}
		dropped, err := a.dropAccommodation(db, id, strings.TrimSpace(*typ))
		if err != nil || !dropped {
			return err
		}
		return a.retime(db, p, id, reg, changeAccommodationX)
	})
}

// retime recomputes the time limit after an accommodation change and stamps the change.
func (a *api) retime(db *gorm.DB, p *auth.Principal, id string, reg regState, change string) error {
	limit, err := a.storedTimeLimit(db, id, reg.Form)
	if err != nil {
		return err
	}
	return a.update(db, p, id, change, map[string]any{"TimeLimit": opt(limit)})
}
