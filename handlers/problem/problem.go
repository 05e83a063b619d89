// Package problem writes every HTTP error of credo as an RFC 9457 problem document, from one
// table that maps error categories to statuses.
package problem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"credo/auth"
	"credo/engine"
)

// Problem is an RFC 9457 problem document with the PascalCase members of decisions §3. A handler
// returns one when it needs a status that no error category gives.
type Problem struct {
	Type     string              `json:"Type"`
	Title    string              `json:"Title"`
	Status   int                 `json:"Status"`
	Detail   string              `json:"Detail,omitempty"`
	Instance string              `json:"Instance,omitempty"`
	Errors   map[string][]string `json:"Errors,omitempty"`
	// Header holds extra response headers (Allow, WWW-Authenticate).
	Header http.Header `json:"-"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// New returns a problem with a status and a detail message.
func New(status int, format string, args ...any) *Problem {
	return &Problem{Status: status, Title: http.StatusText(status), Detail: fmt.Sprintf(format, args...)}
}

// From maps an error to its problem document: the one status table of the service.
func From(err error) *Problem {
	var p *Problem
	var verr *engine.ValidationError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &verr):
		out := New(http.StatusBadRequest, "%s", verr.Error())
		if verr.Detail != "" && len(verr.Fields) > 0 {
			out.Detail = verr.Detail
		}
		out.Errors = verr.Fields
		return out
	case errors.Is(err, engine.ErrNotFound):
		return New(http.StatusNotFound, "The record does not exist.")
	case errors.Is(err, engine.ErrInvalid), errors.Is(err, engine.ErrConflict):
		return New(http.StatusBadRequest, "%s", err.Error())
	case errors.Is(err, engine.ErrUnavailable):
		return New(http.StatusServiceUnavailable, "The database is unavailable.")
	case errors.Is(err, auth.ErrUnauthenticated):
		out := New(http.StatusUnauthorized, "%s", err.Error())
		out.Header = http.Header{"WWW-Authenticate": {`Bearer realm="credo"`}}
		return out
	case errors.Is(err, auth.ErrForbidden):
		return New(http.StatusForbidden, "%s", err.Error())
	case errors.Is(err, auth.ErrMalformed):
		return New(http.StatusBadRequest, "%s", err.Error())
	case errors.As(err, &tooLarge):
		return New(http.StatusRequestEntityTooLarge, "The body is larger than %d bytes.", tooLarge.Limit)
	}
	return New(http.StatusInternalServerError, "An unexpected error occurred.")
}

// Write sends err as a problem document. Unexpected errors (500) are logged as bugs; a request
// the client abandoned gets nothing.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return
	}
	p := From(err)
	if p.Status >= 500 {
		slog.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "err", err)
	}
	out := *p
	out.Instance = r.URL.Path
	if out.Type == "" {
		out.Type = "about:blank"
	}
	for k, vs := range p.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(out.Status)
	if r.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// HandlerFunc is an http handler that returns its error instead of writing it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP calls f and writes its error, if any, with Write.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		Write(w, r, err)
	}
}

// JSON writes v as a JSON body with a status.
func JSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("problem: encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}
