package observe

import (
	"context"
	"net/http"
)

// Entry is what the access line and the metrics record about one request. The middleware puts
// it in the request context; the router and the authenticators fill it in as they learn the
// route, partition and caller.
type Entry struct {
	// ID is the request id, echoed in X-Request-Id and carried into logs and problem documents.
	ID string
	// Partition is the partition the request was served in ("" for none).
	Partition string
	// User is the authenticated caller's user identifier ("" for anonymous requests).
	User string

	route      *Route
	obs        *Observer
	credential string // the kind of credential presented, for counting a refusal
	status     int
	bytes      int64
	aborted    bool // the answer was cut off: the handler broke the connection (http.ErrAbortHandler), or a write to the client failed
	logged     bool // the request's failure is logged; log it once
}

type entryKey struct{}

// From returns the request's entry, or nil outside the middleware.
func From(ctx context.Context) *Entry {
	e, _ := ctx.Value(entryKey{}).(*Entry)
	return e
}

// RequestID returns the id of the request that ctx belongs to, "" outside the middleware.
func RequestID(ctx context.Context) string {
	if e := From(ctx); e != nil {
		return e.ID
	}
	return ""
}

// SetPartition records the partition a request is served in.
func SetPartition(r *http.Request, slug string) {
	if e := From(r.Context()); e != nil {
		e.Partition = slug
	}
}

// SetCredential records the kind of credential a request presented (a closed set of the
// authenticator's, e.g. bearer, cookie, secret, none), under which its refusal is counted.
func SetCredential(r *http.Request, kind string) {
	if e := From(r.Context()); e != nil {
		e.credential = kind
	}
}

// SetUser records the authenticated caller of a request.
func SetUser(r *http.Request, user string) {
	if e := From(r.Context()); e != nil {
		e.User = user
	}
}

// Status returns the status written so far, 0 when the header is not sent yet: a handler that
// fails after writing cannot send a problem document any more.
func (e *Entry) Status() int { return e.status }

// Route returns the template of the route the request matched, "" before routing.
func (e *Entry) Route() string {
	if e.route == nil {
		return ""
	}
	return e.route.Template
}
