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

// Reason says in one word why a credential was refused: the label by which authentication
// failures are counted. The message of the error says it in a sentence.
type Reason string

// The reasons of ErrUnauthenticated refusals.
const (
	ReasonMissing   Reason = "missing"   // no credential
	ReasonMalformed Reason = "malformed" // not a token, cookie or header of the expected form
	ReasonSignature Reason = "signature" // a signature that does not verify, or a cookie that does not decrypt
	ReasonExpired   Reason = "expired"   // a token, cookie or secret past its expiry
	ReasonClaims    Reason = "claims"    // another audience or issuer, or not valid yet
	ReasonRevoked   Reason = "revoked"   // a revoked token, cookie or secret
	ReasonPartition Reason = "partition" // a credential of another partition
	ReasonUnknown   Reason = "unknown"   // an unknown secret, or a user that no longer exists
	ReasonOther     Reason = "other"     // a refusal that names no reason
)

// ReasonCrossOrigin is the reason of the one ErrForbidden refusal counted with the failures of
// authentication: a valid session cookie on a write that the browser marks as sent by a page
// of another origin (checkCookieOrigin), which is what a cross-site request forgery looks like.
const ReasonCrossOrigin Reason = "cross_origin"

// ReasonOf returns the reason of an ErrUnauthenticated refusal, ReasonOther when it names
// none; ReasonCrossOrigin for a cross-origin cookie refusal; and "" for other errors.
func ReasonOf(err error) Reason {
	var re *reasonError
	if errors.As(err, &re) && re.code != "" {
		return re.code
	}
	if errors.Is(err, ErrUnauthenticated) {
		return ReasonOther
	}
	return ""
}

// reasonError is an error of a category whose message is only the reason, so that the problem
// writer's Detail reads as a sentence ("token expired at …") rather than a chain of prefixes.
type reasonError struct {
	category error
	code     Reason
	reason   string
}

func (e *reasonError) Error() string { return e.reason }
func (e *reasonError) Unwrap() error { return e.category }

// Unauthenticated returns an error wrapping ErrUnauthenticated whose message is the reason, for
// refusals made outside this package.
func Unauthenticated(code Reason, format string, args ...any) error {
	return unauthenticated(code, format, args...)
}

// unauthenticated returns an error wrapping ErrUnauthenticated whose message is the reason.
func unauthenticated(code Reason, format string, args ...any) error {
	return &reasonError{category: ErrUnauthenticated, code: code, reason: fmt.Sprintf(format, args...)}
}

// forbidden returns an error wrapping ErrForbidden whose message is the reason.
func forbidden(format string, args ...any) error {
	return &reasonError{category: ErrForbidden, reason: fmt.Sprintf(format, args...)}
}

// forbiddenFor returns an error wrapping ErrForbidden with a Reason, by which it is counted.
func forbiddenFor(code Reason, format string, args ...any) error {
	return &reasonError{category: ErrForbidden, code: code, reason: fmt.Sprintf(format, args...)}
}

// malformed returns an error wrapping ErrMalformed whose message is the reason.
func malformed(format string, args ...any) error {
	return &reasonError{category: ErrMalformed, reason: fmt.Sprintf(format, args...)}
}
