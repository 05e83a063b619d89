package auth

import "errors"

// Error categories of authentication and authorization; handlers map them to 401 and 403.
var (
	// ErrUnauthenticated: no credential, or one that is invalid, expired, revoked or of
	// another partition.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the caller is authenticated but not permitted.
	ErrForbidden = errors.New("forbidden")
)
