// Package problem writes every HTTP error of credo as an RFC 9457 problem document, from one
// table that maps error categories to statuses.
package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"unicode"
	"unicode/utf8"

	"credo/auth"
	"credo/engine"
	"credo/handlers/observe"
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
	// RequestId is the id of the request that failed, as in its X-Request-Id header: an
	// extension member (RFC 9457 §3.2) that lets a client's report be found in the server's log.
	RequestId string `json:"RequestId,omitempty"`
	// Header holds extra response headers (Allow, WWW-Authenticate).
	Header http.Header `json:"-"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// New returns a problem with a status and a detail message.
func New(status int, format string, args ...any) *Problem {
	return &Problem{Status: status, Title: http.StatusText(status), Detail: fmt.Sprintf(format, args...)}
}

// MaxMembers bounds the members and parameters a 400 names (in Errors and its Detail): a
// request of thousands of unknown parameters was answered with a document twenty times its
// size, each message naming the parameters allowed.
const MaxMembers = 50

// RetryAfter is the Retry-After of a 503: the database is unavailable (unreachable, not
// answering within the timeout, refusing connections, or a lock held past the timeout), which
// is usually brief, or aborted the request's transaction in a deadlock or a serialization
// failure.
const RetryAfter = "2"

// RetryAfterNotMigrated is the Retry-After of the 503 of a partition whose tables lack what its
// descriptors need: an operator must migrate it again (restart credo), which takes longer than
// a database's hiccup, so clients need not ask every 2 seconds.
const RetryAfterNotMigrated = "30"

// From maps an error to its problem document: the one status table of the service. A driver
// error that a module passes through untranslated is translated here (engine.Translate), so
// that a refused connection is a 503 on every route.
func From(err error) *Problem {
	p, _ := of(err, engine.Translate)
	return p
}

// of maps err by the table, or else err translated by translate; it returns the problem and the
// error it maps (err, or its translation).
func of(err error, translate func(error) error) (*Problem, error) {
	if p := from(err); p != nil {
		return p, err
	}
	if t := translate(err); t != err {
		if p := from(t); p != nil {
			return p, t
		}
	}
	return New(http.StatusInternalServerError, "An unexpected error occurred."), err
}

// from maps err by the table, or returns nil.
func from(err error) *Problem {
	var p *Problem
	var verr *engine.ValidationError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &verr):
		verr, more := verr.Limit(MaxMembers)
		out := New(http.StatusBadRequest, "%s", verr.Error())
		if verr.Detail != "" && len(verr.Fields) > 0 {
			out.Detail = verr.Detail
		}
		if more > 0 {
			out.Detail += fmt.Sprintf("; and problems with %d more members or parameters, not listed", more)
		}
		out.Errors = verr.Fields
		return out
	case errors.Is(err, engine.ErrNotFound):
		return New(http.StatusNotFound, "The record does not exist.")
	case errors.Is(err, engine.ErrNoneMatch):
		return New(http.StatusPreconditionFailed, "The record exists with an ETag that If-None-Match names (or If-None-Match is *); nothing was written.")
	case errors.Is(err, engine.ErrPrecondition):
		return New(http.StatusPreconditionFailed, "The record changed since the ETag that If-Match names; GET it again and retry with its current ETag.")
	case errors.Is(err, engine.ErrInvalid), errors.Is(err, engine.ErrConflict):
		return New(http.StatusBadRequest, "%s", engine.Message(err))
	case errors.Is(err, engine.ErrNotMigrated):
		return unavailable(err, "The partition's tables do not match its descriptors", "", RetryAfterNotMigrated)
	case errors.Is(err, engine.ErrUnavailable):
		// The database cannot be reached, or refuses connections; or what kept it from serving
		// the request, as the engine's DatabaseError says (a timeout, a lock held too long).
		return unavailable(err, "The database is unavailable", "", RetryAfter)
	case errors.Is(err, engine.ErrNoSpace):
		// The engine's reason says what became of the change; that reads go on is the server's
		// to say (credo load prints the same reason without it).
		return unavailable(err, "The database has no space left to store the change; nothing was written", "reads are served", RetryAfter)
	case errors.Is(err, engine.ErrAborted):
		out := New(http.StatusServiceUnavailable, "The database aborted the request's transaction in a conflict with a concurrent one (a deadlock or a serialization failure); nothing was written; retry the request as it is.")
		out.Header = http.Header{"Retry-After": {RetryAfter}}
		return out
	case errors.Is(err, auth.ErrUnauthenticated):
		out := New(http.StatusUnauthorized, "%s", engine.Message(err))
		out.Header = http.Header{"WWW-Authenticate": {`Bearer realm="credo"`}}
		return out
	case errors.Is(err, auth.ErrForbidden):
		return New(http.StatusForbidden, "%s", engine.Message(err))
	case errors.Is(err, auth.ErrMalformed):
		return New(http.StatusBadRequest, "%s", engine.Message(err))
	case errors.As(err, &tooLarge):
		return New(http.StatusRequestEntityTooLarge, "The body is larger than %d bytes.", tooLarge.Limit)
	}
	return nil
}

// Write sends err as a problem document carrying the request id. A 5xx is logged once with
// its cause (observe.Fail, which keeps an outage's lines bounded) and a 401 counted by reason
// (and by the kind of credential the authenticator recorded), as is a 403 that names an
// auth.Reason (a session cookie's write from another origin, auth.ReasonCrossOrigin).
// A request whose client went away (its context is done) and that failed on the server's side
// gets nothing and logs nothing as a failure: the failure is the consequence of the departure.
// A client error (4xx) is still written, since a client that only half-closed its connection
// still reads, and must get the 400 of its broken body rather than the 200 net/http sends for a
// handler that wrote nothing. A response whose header is already sent cannot become a problem
// document: the error is logged and the response left as it is.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	translate := engine.Translate
	if s := engine.StoreFrom(ctx); s != nil {
		translate = s.Translate // names the partition and its timeout
	}
	p, err := of(err, translate)
	if ctx.Err() != nil && p.Status >= 500 {
		slog.DebugContext(ctx, "client went away", "request_id", observe.RequestID(ctx), "err", err)
		return
	}
	if e := observe.From(ctx); e != nil && e.Status() != 0 {
		observe.Fail(r, p.Status, fmt.Errorf("after the response began (status %d): %w", e.Status(), err))
		return
	}
	if p.Status >= 500 {
		observe.Fail(r, p.Status, err)
	}
	if reason := auth.ReasonOf(err); p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden && reason != "" {
		if reason == "" {
			reason = auth.ReasonOther
		}
		observe.AuthFailure(ctx, string(reason))
	}
	out := *p
	out.Instance = engine.ShownPath(r.URL.EscapedPath())
	out.RequestId = observe.RequestID(ctx)
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

// unavailable is the 503 of err, with Retry-After: what the engine's DatabaseError in err says
// happened (engine.Reason), or else what; then, unless empty, what the server goes on doing
// meanwhile, which the engine's reason does not say (credo load prints that reason too).
func unavailable(err error, what, then, retryAfter string) *Problem {
	if reason := engine.Reason(err); reason != "" {
		r, n := utf8.DecodeRuneInString(reason)
		what = string(unicode.ToUpper(r)) + reason[n:]
	}
	if then != "" {
		what += "; " + then
	}
	out := New(http.StatusServiceUnavailable, "%s; retry later.", what)
	out.Header = http.Header{"Retry-After": {retryAfter}}
	return out
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
	return Body(w, status, b)
}

// Body writes b, one JSON value whole in memory, as the body of an answer with a status: with
// a final line feed, its type and its length (JSONHeader).
func Body(w http.ResponseWriter, status int, b []byte) error {
	b = append(b, '\n')
	JSONHeader(w.Header(), len(b))
	w.WriteHeader(status)
	_, err := w.Write(b)
	return err
}

// JSONHeader declares a JSON body of n bytes that is whole in memory: its type and its length.
// With the length, net/http sends a body larger than its 2 KiB buffer as it is instead of in
// chunks (a page of 20 records went out in three writes to the connection, now two), and the
// client knows the size of what it reads.
func JSONHeader(h http.Header, n int) {
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(n)}
}

// jsonType is the Content-Type of JSON bodies, one slice for every answer: net/http and the
// middleware only read it, where Header.Set would allocate it anew.
var jsonType = []string{"application/json; charset=utf-8"}
