package legacy

import (
	"net/http"
	"strings"

	"gorm.io/gorm"

	"credo/auth"
	"credo/engine"
)

// cancelRegistration cancels a registration of the organization: AttendanceStatus Cancelled,
// the time and Reason kept. Cancelling a cancelled registration changes nothing and succeeds.
// Answers the registration's read shape.
func (a *api) cancelRegistration(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	b, err := readBody(w, r, "Reason")
	if err != nil {
		return err
	}
	reason, err := b.str("Reason")
	if err != nil {
		return err
	}
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		reg, err := a.loadRegistration(db, p.OrganizationIdentifier, id)
		if err != nil || reg.Cancelled != nil {
			return err
		}
		return a.update(db, p, id, changeCancelled, map[string]any{
			"AttendanceStatus": statusCancelled, "Cancelled": a.now(), "CancelReason": opt(reason),
		})
	})
	if err != nil {
		return err
	}
	return a.writeRegistration(w, r, id)
}

// changeAssessment assigns the organization's form with the code Assessment and recomputes the
// time limit. Answers the registration's read shape.
func (a *api) changeAssessment(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	b, err := readBody(w, r, "Assessment")
	if err != nil {
		return err
	}
	code, err := b.str("Assessment")
	if err != nil {
		return err
	}
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		reg, err := a.loadRegistration(db, p.OrganizationIdentifier, id)
		if err != nil {
			return err
		}
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
		return a.update(db, p, id, changeAssessment, map[string]any{
			"FormIdentifier": f.ID, "TimeLimit": opt(timeLimit(f.Limit, accs)),
		})
	})
	if err != nil {
		return err
	}
	return a.writeRegistration(w, r, id)
}

// grantAccommodation adds the accommodation, or replaces the registration's one of the same
// Type, and recomputes the time limit. Answers the registration's read shape.
func (a *api) grantAccommodation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	b, err := readBody(w, r, accommodationMembers...)
	if err != nil {
		return err
	}
	acc, accErr := b.accommodation()
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		reg, err := a.loadRegistration(db, p.OrganizationIdentifier, id)
		if err != nil {
			return err
		}
		if accErr != nil {
			return accErr
		}
		if err := a.putAccommodation(ctx, tx, id, acc); err != nil {
			return err
		}
		return a.retime(db, p, id, reg, changeAccommodation)
	})
	if err != nil {
		return err
	}
	return a.writeRegistration(w, r, id)
}

// revokeAccommodation removes the registration's accommodation of Type and recomputes the time
// limit; a Type the registration does not have is a successful no-op. Answers the read shape.
func (a *api) revokeAccommodation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	b, err := readBody(w, r, "Type")
	if err != nil {
		return err
	}
	typ, err := b.str("Type")
	if err != nil {
		return err
	}
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		reg, err := a.loadRegistration(db, p.OrganizationIdentifier, id)
		if err != nil {
			return err
		}
		if typ == nil || strings.TrimSpace(*typ) == "" {
			return failMember(msgAccommodationType, "Type", "Type is required and cannot be blank")
		}
		dropped, err := a.dropAccommodation(db, id, strings.TrimSpace(*typ))
		if err != nil || !dropped {
			return err
		}
		return a.retime(db, p, id, reg, changeAccommodationX)
	})
	if err != nil {
		return err
	}
	return a.writeRegistration(w, r, id)
}

// retime recomputes the time limit after an accommodation change and stamps the change.
func (a *api) retime(db *gorm.DB, p *auth.Principal, id string, reg regState, change string) error {
	limit, err := a.storedTimeLimit(db, id, reg.Form)
	if err != nil {
		return err
	}
	return a.update(db, p, id, change, map[string]any{"TimeLimit": opt(limit)})
}
