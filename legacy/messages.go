package legacy

import (
	"net/http"

	"credo/handlers/problem"
)

// The problem messages of version 1: api.md's "Errors" table word for word (with "the service"
// read as Learner, decisions §0), then the ones this package adds where the spec is silent.
const (
	msgAccommodationType   = "Accommodation type cannot be empty."
	msgLearnerNotFound     = "Learner not found."
	msgFormNotFound        = "Assessment form not found."
	msgRegistrationExists  = "Registration already exists. You cannot add a new registration with the same identifier."
	msgExamTypeMissing     = "EventExamType not specified."
	msgExamTypeInvalid     = "Invalid EventExamType value."
	msgBillingMissing      = "EventBillingCode not specified."
	msgBillingInvalid      = "Invalid EventBillingCode value."
	msgFormatMissing       = "EventExamFormat not specified."
	msgFormatInvalid       = "Invalid EventExamFormat value."
	msgStartInvalid        = "Invalid EventStartTime value."
	msgVenueNotFound       = "Venue not found."
	msgRegistrationMissing = "Registration not found."
	msgNoForm              = "Registration has no assessment form."
	msgLearnerMismatch     = "Learner does not belong to registration."
	msgAlreadyOnEvent      = "Registration already assigned to event."
	msgFormAssigned        = "Assessment already assigned to registration."
	// decisions §12.
	msgEventFull = "Event is full."

	// Beyond the spec: the event operations and value checks it does not word.
	msgEventNotFound    = "Event not found."
	msgEventExists      = "Event already exists. You cannot add a new event with the same identifier."
	msgEventCancelled   = "Event is already cancelled."
	msgLimitInvalid     = "Invalid RegistrationLimit value."
	msgExtensionInvalid = "Invalid TimeExtension value."
	msgEventIDInvalid   = "Invalid EventIdentifier value."
	// msgRegistrationIDInvalid is register-lax's for the nil UUID as the registration's
	// identifier, as msgEventIDInvalid is add event's.
	msgRegistrationIDInvalid = "Invalid RegistrationIdentifier value."
)

// fail is a version-1 problem: 400 with the message as Detail.
func fail(msg string) *problem.Problem { return problem.New(http.StatusBadRequest, "%s", msg) }

// failMember is fail naming the member at fault and why.
func failMember(msg, member, why string) *problem.Problem {
	p := fail(msg)
	p.Errors = map[string][]string{member: {why}}
	return p
}

// notFound is a version-1 404 with the message as Detail.
func notFound(msg string) *problem.Problem { return problem.New(http.StatusNotFound, "%s", msg) }
