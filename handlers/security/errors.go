package security

import (
	"fmt"
	"net/http"

	"credo/auth"
	"credo/handlers/problem"
)

// refusal is an error of an auth category whose message is only the reason, so that a
// problem's Detail reads as a sentence.
type refusal struct {
	category error
	reason   string
}

func (e *refusal) Error() string { return e.reason }
func (e *refusal) Unwrap() error { return e.category }

// unauthenticated is a 401 refusal with the reason.
func unauthenticated(code auth.Reason, format string, args ...any) error {
	return auth.Unauthenticated(code, format, args...)
}

// forbidden is a 403 refusal with the reason.
func forbidden(format string, args ...any) error {
	return &refusal{category: auth.ErrForbidden, reason: fmt.Sprintf(format, args...)}
}

// badMember is a 400 problem naming one body member or query parameter in Errors.
func badMember(name, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	p := problem.New(http.StatusBadRequest, "%s", msg)
	p.Errors = map[string][]string{name: {msg}}
	return p
}
