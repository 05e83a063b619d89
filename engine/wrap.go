package engine

import (
	"fmt"
	"strings"
)

// wrap adds an operation, its subject and its key (nil: none) to *errp, once per exported
// operation, as pkgsite's derrors.Wrap does: `defer wrap(&err, "update", r.Name, key)` at the
// top of a verb, whose helpers return their causes unwrapped (translated to a category where
// they touch the database). The message reads "engine: update Widget [k]: cause", or
// "engine: list Widget: cause" without a key. A cause that another verb already wrapped (a
// hook's delete inside a delete) keeps its own operation, without a second "engine: ".
//
// Its parameters are typed rather than a format and its arguments, which a defer evaluates on
// every call: boxing the name and the key into a ...any cost two allocations per verb, also
// when it succeeds, as nearly every get does.
func wrap(errp *error, op, subject string, key []any) {
	if *errp != nil {
		*errp = newOpError(op, subject, key, *errp)
	}
}

// newOpError formats the operation of wrap. It is a function of its own so that wrap stays
// small enough to inline.
func newOpError(op, subject string, key []any, err error) *opError {
	name := op + " " + subject
	if key != nil {
		name += " " + fmt.Sprint(key)
	}
	return &opError{op: name, err: err}
}

// opError is an error with the engine operation it ended.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "engine: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "engine: ")
}

func (e *opError) Unwrap() error { return e.err }

// Message is err's text for a client: without the operations the engine's verbs wrapped it
// in (they are for logs), so that a refusal reads as its cause, e.g. a write check's reason.
func Message(err error) string {
	for {
		e, ok := err.(*opError)
		if !ok {
			return err.Error()
		}
		err = e.err
	}
}
