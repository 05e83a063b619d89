package legacy

import (
	"errors"
	"net/http"

	"gorm.io/gorm"

	"credo/engine"
	"credo/handlers/problem"
)

// placed is the answer of register-lax and transfer-lax (decisions §12).
type placed struct {
	Event        string `json:"Event"`
	Registration string `json:"Registration"`
	EventCreated bool   `json:"EventCreated"`
}

// laxBody is what register-lax and transfer-lax read of their bodies. Its problems need no
// database and come at three steps: members of the wrong type before anything else, then
// Accommodations and EventStart after the registration's checks (each command says where). The
// 400 of a step names its problems and those of the later steps too, so that one 400 names all
// of a body's problems, each in the words it has alone.
type laxBody struct {
	members
	spec                              eventSpec
	learner, registrant, code, reason *string
	accs                              []accommodation
	steps                             [3]error // types, Accommodations, EventStart
}

const (
	stepTypes = iota
	stepAccommodations
	stepStart
)

func (a *api) readLaxBody(w http.ResponseWriter, r *http.Request, allowed ...string) (l laxBody, err error) {
	if l.members, err = readBody(w, r, allowed...); err != nil {
		return l, err
	}
	var types problems
	l.spec = a.readEventSpec(l.members, &types)
	l.strs(&types, strMember{"Learner", &l.learner}, strMember{"LearnerRegistrantType", &l.registrant},
		strMember{"Assessment", &l.code}, strMember{"Reason", &l.reason})
	l.steps[stepTypes] = types.err()
	l.accs, l.steps[stepAccommodations] = l.accommodations("Accommodations")
	l.spec.Start, l.steps[stepStart] = a.futureStart(l.members)
	return l, l.check(stepTypes)
}

// check returns the problems of the body from step on when step has one, else nil.
func (l laxBody) check(step int) error {
	if l.steps[step] == nil {
		return nil
	}
	var p problems
	for _, err := range l.steps[step:] {
		p.add(err)
	}
	return p.err()
}

// registerLax creates the registration of the path: the learner on the event found by venue and
// start (or a new one), with the form found by code and the accommodations given. Checks, in
// order (after members of the wrong type; laxBody reports the body's own problems together):
// the registration id (not the nil UUID, not taken), Accommodations, EventStart, Learner, Assessment, EventVenue, the
// event's members when one is created, and its seats.
func (a *api) registerLax(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	org := p.OrganizationIdentifier
	l, err := a.readLaxBody(w, r, "EventVenue", "EventStart", "EventExamType", "EventExamFormat", "EventBillingCode",
		"Learner", "LearnerRegistrantType", "Assessment", "Accommodations")
	if id == engine.NilUUID {
		// The nil UUID, a typed client's unset Guid, names no registration (stored, it was a
		// registration no client meant): it comes first in one 400 with the body's problems.
		var bad problems
		bad.add(failMember(msgRegistrationIDInvalid, "RegistrationIdentifier", "RegistrationIdentifier cannot be the nil UUID "+engine.NilUUID))
		bad.add(err)
		if err == nil {
			bad.add(l.check(stepAccommodations))
			if l.steps[stepAccommodations] == nil {
				bad.add(l.check(stepStart))
			}
		}
		return bad.err()
	}
	if err != nil {
		return err
	}
	var out placed
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		db := tx.DB(ctx)
		if err := a.lock(db, registrationLock(id)); err != nil {
			return err
		}
		if taken, err := a.registrationExists(db, id); err != nil || taken {
			if err == nil {
				err = fail(msgRegistrationExists)
			}
			return err
		}
		if err := l.check(stepAccommodations); err != nil {
			return err
		}
		if err := l.check(stepStart); err != nil {
			return err
		}
		learnerID, err := a.checkLearner(db, org, l.learner)
		if err != nil {
			return err
		}
		f, err := a.findForm(db, org, l.code)
		if err != nil {
			return err
		}
		if l.spec.Venue, err = a.checkVenue(db, org, l.spec.Venue); err != nil {
			return err
		}
		ev, err := a.place(ctx, tx, org, l.spec, len(l.accs) > 0)
		if err != nil {
			return err
		}
		if err := a.checkSeat(db, ev); err != nil {
			return err
		}
		limit, err := timeLimit(f.Limit, l.accs)
		if err != nil {
			return err
		}
		err = newDraft(a.t.registration).
			set("RegistrationIdentifier", id).
			set("OrganizationIdentifier", org).
			set("EventIdentifier", ev.Event).
			set("LearnerIdentifier", learnerID).
			set("FormIdentifier", f.ID).
			set("RegistrantType", opt(l.registrant)).
			set("AttendanceStatus", statusRegistered).
			set("TimeLimit", opt(limit)).
			set("LastChangeTime", a.now()).
			set("LastChangeType", changeRegistered).
			set("LastChangeUser", changeUser(p)).
			insert(ctx, tx)
		if err != nil {
			return err
		}
		for _, acc := range l.accs {
			if err := newDraft(a.t.accommodation).set("RegistrationIdentifier", id).set("AccommodationType", acc.Type).
				set("AccommodationName", opt(acc.Name)).set("TimeExtension", opt(acc.TimeExtension)).insert(ctx, tx); err != nil {
				return err
			}
		}
		out = placed{Event: ev.Event, Registration: id, EventCreated: ev.Created}
		return nil
	})
	if errors.Is(err, engine.ErrConflict) {
		return fail(msgRegistrationExists)
	}
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, out)
}

// transferLax moves a registration of the organization to the event found by venue and start
// (or a new one, typed by EventExamType, with the format and billing code of the current event).
// The form stays; given Accommodations are granted (by Type) and the time limit recomputed.
// Checks, in order (after members of the wrong type, as for registerLax): the registration
// (404), Accommodations, Learner, the form, EventStart,
// EventVenue, the event's members when one is created, the event itself, its seats.
func (a *api) transferLax(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := pathID(r, "registration")
	p := caller(r)
	org := p.OrganizationIdentifier
	l, err := a.readLaxBody(w, r, "EventVenue", "EventStart", "EventExamType", "Learner", "Reason", "Accommodations")
	if err != nil {
		return err
	}
	var out placed
	err = a.inRegistration(r, id, func(tx *engine.Store, db *gorm.DB, reg regState) error {
		if err := l.check(stepAccommodations); err != nil {
			return err
		}
		learnerID, err := a.checkLearner(db, org, l.learner)
		if err != nil {
			return err
		}
		if learnerID != reg.Learner {
			return fail(msgLearnerMismatch)
		}
		if reg.Form == nil {
			return fail(msgNoForm)
		}
		if err := l.check(stepStart); err != nil {
			return err
		}
		if l.spec.Venue, err = a.checkVenue(db, org, l.spec.Venue); err != nil {
			return err
		}
		if current, err := a.events(db, eq("e", a.t.event, "EventIdentifier", reg.Event)); err != nil {
			return err
		} else if len(current) > 0 {
			l.spec.ExamFormat, l.spec.BillingCode = current[0].EventExamFormat, current[0].EventBillingCode
		}
		held, err := a.accommodations(db, id)
		if err != nil {
			return err
		}
		ev, err := a.place(ctx, tx, org, l.spec, len(held)+len(l.accs) > 0)
		if err != nil {
			return err
		}
		if ev.Event == reg.Event {
			return fail(msgAlreadyOnEvent)
		}
		if err := a.checkSeat(db, ev); err != nil {
			return err
		}
		for _, acc := range l.accs {
			if err := a.putAccommodation(ctx, tx, id, acc); err != nil {
				return err
			}
		}
		limit, err := a.storedTimeLimit(db, id, reg.Form)
		if err != nil {
			return err
		}
		if err := a.update(db, p, id, changeTransferred, map[string]any{
			"EventIdentifier": ev.Event, "TransferReason": opt(l.reason), "TimeLimit": opt(limit),
		}); err != nil {
			return err
		}
		out = placed{Event: ev.Event, Registration: id, EventCreated: ev.Created}
		return nil
	})
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, out)
}
