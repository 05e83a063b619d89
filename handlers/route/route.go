// Package route describes the hand-written operations that modules add beside the generated
// record-group routes, so that one router authenticates, authorizes and documents them all.
package route

import (
	"net/http"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// Access says who may call a route.
type Access int

// The access levels of a route.
const (
	// Protected routes need a credential and the permission flag Need on Object.
	Protected Access = iota
	// Public routes answer without a credential (decisions §7).
	Public
	// Authenticated routes need a credential but no permission.
	Authenticated
)

// Route is one hand-written operation. Its description (Summary to Errors) is what the OpenAPI
// document says of it, so it must say what the handler does: the suites validate every exchange
// against that document.
type Route struct {
	// Method is the HTTP method. Path is relative to /v2/{partition}/, e.g. "platform/health",
	// for the v2 modules; version-1 routes give it from the root, e.g. "/api/events/classes".
	// Path variables are written {Name} and described in Params.
	Method, Path string
	// Summary is one sentence for OpenAPI and security/settings/endpoints; Description, when
	// set, says more (Markdown).
	Summary, Description string
	// Tag groups the route in the document: its module, e.g. "platform".
	Tag string
	// OperationID names the operation for generated clients; empty derives it from Method
	// and Path.
	OperationID string
	Access      Access
	// Object is the permission object's path (a record group path such as
	// "progress/gradebooks", or the route's own path for plugins and commands).
	Object string
	// Need is the permission flag: Read, Write, Create, Delete, Execute, Administrate, Configure.
	Need string
	// Probe marks a monitor's check (platform/health): its access lines are logged at debug.
	Probe bool
	// Params are the path and query parameters the route reads. A path variable without a
	// Param is a string.
	Params []Param
	// QueryOf, when set, is the record name whose list parameters (filters, Origin.*, paging)
	// the route reads besides Params.
	QueryOf string
	// Body is the request body the route reads; nil when it reads none.
	Body *Body
	// Responses are the answers other than problem documents: the success answers, and any
	// other answer with a body of its own (health's 503).
	Responses []Response
	// Errors are the statuses the route answers with a problem document beyond those every
	// route has (400, 500; 404 for an unknown partition; 401 and 403 by Access), e.g. 404 for
	// a missing record, 406, 413, 415, 429, 503.
	Errors []int
	// Idempotent says that the route honours Idempotency-Key (handlers/idempotency): the
	// version-1 router wraps Handler with the keeper, and the document describes the header,
	// the 409 and 422 it adds, and Idempotent-Replayed. (The generated creates honour it
	// without this mark; handlers.Server refuses a v2 module that sets it.)
	Idempotent bool
	// RefusesIdempotencyKey, when set, says why the route does not take Idempotency-Key: a
	// request that sends the header, whatever its value, is a 400 problem naming it and giving
	// this reason (idempotency.Refuse), after authentication and authorization and before the
	// handler reads anything. Ignoring the header would let a client believe that its retry is
	// safe. The document declares no such parameter and says so in the description. A route
	// is not both Idempotent and this.
	RefusesIdempotencyKey string
	// Needs resolves, once when the server starts (handlers.Server.Handler), the descriptors,
	// members and filters the handler relies on, and keeps them for it: no request looks a
	// descriptor up by name, and a registry that lacks one fails start-up with its error
	// (naming the module and the descriptor) rather than every request with a 500. Handler is
	// served only after Needs has returned nil; Needs is nil when the route needs nothing.
	Needs func(*engine.Registry) error
	// Handler serves the route; the partition's store is in the request context (engine.StoreFrom)
	// and the caller in auth.FromContext.
	Handler problem.HandlerFunc
}

// In is where a parameter is sent.
type In string

// The parameter locations the routes use.
const (
	InPath  In = "path"
	InQuery In = "query"
)

// Param is a path or query parameter.
type Param struct {
	Name        string
	In          In
	Description string
	// Required is implied for path parameters.
	Required bool
	Schema   Schema
}

// Body is a request body: one schema per media type it is accepted in.
type Body struct {
	Description string
	// Required says that an empty body is refused; an optional body may be left out.
	Required bool
	Content  []Content
}

// Response is one answer of a route.
type Response struct {
	Status      int
	Description string
	// Headers are the response headers a client may rely on.
	Headers []Header
	// Content is the body per media type; none for an empty body.
	Content []Content
}

// Header is a response header.
type Header struct {
	Name, Description string
	// Required says the header is always sent with the response.
	Required bool
	Schema   Schema
}

// Content is a body in one media type.
type Content struct {
	// MediaType is e.g. "application/json" or "text/csv".
	MediaType string
	Schema    Schema
}

// JSON is a JSON body whose shape is the encoding/json form of the Go value v.
func JSON(v any) []Content {
	return []Content{{MediaType: "application/json", Schema: Schema{Go: v}}}
}

// Schema describes a JSON value. Set one of Go, Ref, OneOf or Type:
//   - Go is a value whose encoding/json form the JSON value takes: the document reflects its
//     type (exported members by their json names; pointers are nullable; omitempty members are
//     optional, the others required). Members overrides or describes members by JSON name.
//   - Ref names a schema of the document's components: a record name such as "Gradebook", or
//     "Problem".
//   - OneOf lists alternatives.
//   - Type is "string", "integer", "number", "boolean", "array" (with Items) or "object"
//     (with Properties); the zero Schema is any value.
type Schema struct {
	Go      any
	Members map[string]Schema
	// Name, when set, makes the schema a component of the document (components/schemas/Name),
	// described once and referenced wherever a route uses it, so that a generated client has
	// one type for it rather than one per operation. Every use of a Name must describe the
	// same schema.
	Name  string
	Ref   string
	OneOf []Schema

	Type        string
	Format      string
	Pattern     string
	Enum        []string
	Items       *Schema
	Properties  []Property
	Minimum     *int64
	Maximum     *int64
	MaxItems    *int64
	MaxLength   *int64
	Nullable    bool
	Description string
	Default     any
	Example     any
}

// Property is a member of an object Schema.
type Property struct {
	Name     string
	Required bool
	Schema   Schema
}

// Int returns a pointer to n, for Schema bounds.
func Int(n int64) *int64 { return &n }

// String is a string schema with a description.
func String(description string) Schema { return Schema{Type: "string", Description: description} }

// UUID is a string schema in UUID format.
func UUID(description string) Schema {
	return Schema{Type: "string", Format: "uuid", Description: description}
}

// Bool is a boolean schema.
func Bool(description string) Schema { return Schema{Type: "boolean", Description: description} }

// Integer is an integer schema.
func Integer(description string) Schema { return Schema{Type: "integer", Description: description} }

// ArrayOf is an array of items.
func ArrayOf(items Schema) Schema { return Schema{Type: "array", Items: &items} }

// OrNull returns s that also allows null.
func (s Schema) OrNull() Schema { s.Nullable = true; return s }

// Negotiates reports whether the route honours Accept through Negotiated: every answer of it
// with a body is JSON, and it is not a probe (a monitor's Accept is not a reason to fail its
// check). The document lists its 406.
func (rt Route) Negotiates() bool {
	if rt.Probe {
		return false
	}
	bodies := 0
	for _, r := range rt.Responses {
		for _, c := range r.Content {
			if c.MediaType != "application/json" {
				return false
			}
			bodies++
		}
	}
	return bodies > 0
}

// Negotiated is h behind the Accept check of a route that answers JSON (Negotiates): an
// Accept that JSON does not satisfy (text/csv, application/xml) is a 406 before h runs
// (decisions §3), as on the record groups; its answers say Vary: Accept
// (request.NegotiateFor). Other routes are h: they answer no body, or read Accept themselves
// through request.NegotiateFor (the partner callback, the downloads).
func Negotiated(rt Route, h problem.HandlerFunc) problem.HandlerFunc {
	if !rt.Negotiates() {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := request.NegotiateFor(w, r, request.JSONOffer); err != nil {
			return err
		}
		return h(w, r)
	}
}
