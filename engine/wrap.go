package engine

import (
	"fmt"
	"strings"
)

// wrap adds an operation and its key to *errp, once per exported operation, as pkgsite's
// derrors.Wrap does: `defer wrap(&err, "update %s %v", r.Name, key)` at the top of a verb,
// whose helpers return their causes unwrapped (translated to a category where they touch the
// database). The message reads "engine: update Widget [k]: cause". A cause that another verb
// already wrapped (a hook's delete inside a delete) keeps its own operation, without a second
// "engine: ".
func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = &opError{op: fmt.Sprintf(format, args...), err: *errp}
	}
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
