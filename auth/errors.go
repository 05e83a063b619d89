package auth

import (
	"errors"
	"fmt"
)

// Error categories of authentication and authorization; handlers map them to 401 and 403.
var (
	// ErrUnauthenticated: no credential, or one that is invalid, expired, revoked or of
	// another partition.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the caller is authenticated but not permitted.
	ErrForbidden = errors.New("forbidden")
	// ErrMalformed: a credential or credential parameter that the caller asked to have
	// examined or issued cannot be used as sent (a token that is not a JWT, a lifetime out of
	// range, an encrypted cookie sent to be decoded without decryption). Handlers map it to 400.
	// Authentication never returns it: a malformed credential presented to authenticate is
	// ErrUnauthenticated (401), as decisions §7 requires.
	ErrMalformed = errors.New("malformed")
)

// reasonError is an error of a category whose message is only the reason, so that the problem
// writer's Detail reads as a sentence ("token expired at …") rather than a chain of prefixes.
type reasonError struct {
	category error
	reason   string
}

func (e *reasonError) Error() string { return e.reason }
func (e *reasonError) Unwrap() error { return e.category }

// unauthenticated returns an error wrapping ErrUnauthenticated whose message is the reason.
func unauthenticated(format string, args ...any) error {
	return &reasonError{category: ErrUnauthenticated, reason: fmt.Sprintf(format, args...)}
}

// forbidden returns an error wrapping ErrForbidden whose message is the reason.
func forbidden(format string, args ...any) error {
	return &reasonError{category: ErrForbidden, reason: fmt.Sprintf(format, args...)}
}

// malformed returns an error wrapping ErrMalformed whose message is the reason.
func malformed(format string, args ...any) error {
	return &reasonError{category: ErrMalformed, reason: fmt.Sprintf(format, args...)}
}
