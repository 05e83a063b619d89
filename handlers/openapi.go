package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"credo/auth"
	"credo/engine"
	"credo/handlers/apidocs"
	"credo/handlers/idempotency"
	"credo/handlers/observe"
	"credo/handlers/request"
	"credo/handlers/route"
)

// Version is the build's version, set at link time (-ldflags "-X credo/handlers.Version=v1.2.3").
var Version = "v0.1.0-dev"

// obj is a JSON object under construction.
type obj = map[string]any

// v2Prefix is the path of every version-2 operation before its own path.
const v2Prefix = "/v2/{partition}/"

// OpenAPI returns the OpenAPI 3.1 document of every route the server serves: the record
// groups (from their descriptors), the modules and the Mounted routes (from their route
// descriptions), this document and the reference page. It is built once per Server.
func (s *Server) OpenAPI() obj {
	d := &document{reg: s.Registry, paths: obj{}, schemas: obj{"Problem": problemSchema(), "Count": countSchema()}}
	for _, r := range s.Registry.Public() {
		d.group(r)
	}
	for _, m := range s.documentRoutes() {
		d.route(m)
	}
	responses := problemResponses()
	responses[notModifiedName] = notModified()
	markRequestID(responses)
	for _, item := range d.paths {
		for _, v := range item.(obj) {
			if op, ok := v.(obj); ok { // an operation, not the item's summary
				markRequestID(op["responses"].(obj))
			}
		}
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":       "credo",
			"version":     Version,
			"summary":     "Learning, assessment and credentialing platform API.",
			"description": apiDescription,
		},
		"servers": []obj{{"url": "/", "description": "The server that serves this document: version 2 under /v2/{partition}, version 1 under /api."}},
		"tags":    d.tags,
		"paths":   d.paths,
		"components": obj{
			"schemas":    d.schemas,
			"parameters": sharedParams(),
			"responses":  responses,
			"headers": obj{"X-Query-Pagination": paginationHeader(), requestIDHeader: requestIDHeaderJSON(),
				idempotency.ReplayedHeader: replayedHeader(), etagHeaderName: etagHeader()},
			"securitySchemes": obj{
				"bearer": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
					"description": "An access token from security/tokens/generate. Version-1 routes also take a client secret here."},
				// An apiKey names one cookie; each partition's has its own name, so the name
				// shows the partition as the path template does.
				"sessionCookie": obj{"type": "apiKey", "in": "cookie", "name": auth.SessionCookieName(auth.DefaultCookieName, "{partition}"),
					"description": "A session cookie from security/cookies/generate (version 2 only), named for its partition: " +
						auth.SessionCookieName(auth.DefaultCookieName, "e01") + " in /v2/e01. Each partition reads only its own; the name without the __Host- prefix (credo_session, of earlier releases) is refused."},
			},
		},
		"security":    []obj{{"bearer": []string{}}, {"sessionCookie": []string{}}},
		"x-tagGroups": d.tagGroups(),
	}
}

// documentRoutes are the routes the document describes beyond the record groups.
func (s *Server) documentRoutes() []route.Route {
	out := append([]route.Route(nil), s.ownRoutes()...)
	out = append(out, s.Modules...)
	return append(out, s.Mounted...)
}

// ownRoutes are the routes of the document itself: the OpenAPI document, built once when
// first asked for, and the reference page that renders it.
func (s *Server) ownRoutes() []route.Route {
	doc := sync.OnceValues(func() ([]byte, error) { return json.Marshal(s.OpenAPI()) })
	serveDoc := func(w http.ResponseWriter, r *http.Request) error {
		b, err := doc()
		if err != nil {
			return fmt.Errorf("handlers: encode the OpenAPI document: %w", err)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, err = w.Write(b)
		return err
	}
	text := func(mediaType, desc string) []route.Response {
		return []route.Response{{Status: http.StatusOK, Description: desc,
			Content: []route.Content{{MediaType: mediaType, Schema: route.String("")}}}}
	}
	return []route.Route{
		{Method: http.MethodGet, Path: "openapi.json", Access: route.Public, Tag: "document", OperationID: "getOpenAPI",
			Summary:   "This OpenAPI 3.1 document: every route of version 2 and version 1.",
			Responses: []route.Response{{Status: http.StatusOK, Description: "The document.", Content: route.JSON(map[string]any{})}},
			Handler:   serveDoc},
		{Method: http.MethodGet, Path: "docs", Access: route.Public, Tag: "document", OperationID: "getReferencePage",
			Summary:   "The API reference page: this document rendered by Redoc, which is bundled into credo (no network needed).",
			Responses: text("text/html", "The page; it loads docs/redoc.standalone.js and openapi.json."),
			Handler:   apidocs.ServePage},
		{Method: http.MethodGet, Path: "docs/redoc.standalone.js", Access: route.Public, Tag: "document", OperationID: "getReferenceViewer",
			Summary:   "The script of the reference page: Redoc " + apidocs.RedocVersion + " (MIT licence).",
			Responses: text("text/javascript", "The script."),
			Handler:   apidocs.ServeViewer},
	}
}

// document collects the paths, schemas and tags of the document being built.
type document struct {
	reg     *engine.Registry
	paths   obj
	schemas obj
	tags    []obj
	tagSeen map[string]bool
	groups  [3][]string // record groups, v2 modules, version 1
}

// Tag groups, for viewers that group tags (x-tagGroups).
const (
	tagGroupRecords = iota
	tagGroupModules
	tagGroupV1
)

func (d *document) tag(name, description string, group int) {
	if d.tagSeen == nil {
		d.tagSeen = map[string]bool{}
	}
	if d.tagSeen[name] {
		return
	}
	d.tagSeen[name] = true
	d.tags = append(d.tags, obj{"name": name, "description": description})
	d.groups[group] = append(d.groups[group], name)
}

func (d *document) tagGroups() []obj {
	names := [3]string{"Version 2 record groups", "Version 2 operations", "Version 1"}
	var out []obj
	for i, tags := range d.groups {
		if len(tags) > 0 {
			out = append(out, obj{"name": names[i], "tags": tags})
		}
	}
	return out
}

// add puts an operation on a path.
func (d *document) add(path, method string, op obj) {
	varyOnAccept(op)
	item, _ := d.paths[path].(obj)
	if item == nil {
		item = obj{}
		d.paths[path] = item
	}
	item[strings.ToLower(method)] = op
}

// varyHeader is the Vary header of the answers of an operation that reads Accept.
var varyHeader = obj{"required": true, "description": "`Accept`: the answer depends on it, so a cache keeps one per `Accept`.",
	"schema": obj{"type": "string", "examples": []string{"Accept", "Origin, Accept"}}}

// problemVary is the Vary header of a shared problem answer: an operation that reads Accept
// negotiates before it reads anything else, so its problems say Vary: Accept (a cache must not
// hand one client's 400 to a client that would get a 406), while those of an operation that
// does not, or that fail before the negotiation (a 401 of the authentication), do not.
var problemVary = obj{"description": "`Accept` on the problems of an operation that reads `Accept` (one that lists a 406), " +
	"as on its other answers; absent on the others.", "schema": obj{"type": "string", "examples": []string{"Accept", "Origin, Accept"}}}

// varyOnAccept documents Vary on the answers of an operation that reads Accept — one that
// lists a 406, the mark of every negotiation (request.NegotiateFor) — other than its shared
// answers that are components: its successes here, its 406 and 304 in their components.
func varyOnAccept(op obj) {
	resp, _ := op["responses"].(obj)
	if _, ok := resp[strconv.Itoa(http.StatusNotAcceptable)]; !ok {
		return
	}
	for status, r := range resp {
		out, ok := r.(obj)
		if !ok || out["$ref"] != nil {
			continue
		}
		hs := obj{"Vary": varyHeader}
		if old, ok := out["headers"].(obj); ok {
			for k, v := range old {
				hs[k] = v
			}
		}
		cp := obj{}
		for k, v := range out {
			cp[k] = v
		}
		cp["headers"] = hs
		resp[status] = cp
	}
}

// moduleTags describes the module tags; a route's Tag must be one of them.
var moduleTags = map[string]string{
	"platform":   "Health, version, route settings and date/time formats of the platform.",
	"security":   "Access tokens, session cookies and the permission settings.",
	"compliance": "The compliance plugin: status counts and scores per department, learner and measurement.",
	"gradebook":  "Gradebook export files and their download.",
	"people":     "People import into the caller's organization.",
	"document":   "This OpenAPI document and its browsable reference page.",
	"events":     "Version 1: exam events and classes.",
	"registrations": "Version 1: registrations of learners on exam events, their assessment forms and " +
		"accommodations.",
	"integration": "Version 1: callbacks from learning-activity partners.",
}

// route adds a described route.
func (d *document) route(m route.Route) {
	path, v1 := v2Prefix+m.Path, strings.HasPrefix(m.Path, "/")
	if v1 {
		path = m.Path
	}
	group := tagGroupModules
	if v1 {
		group = tagGroupV1
	}
	desc, ok := moduleTags[m.Tag]
	if !ok {
		panic("handlers: openapi: route " + m.Method + " " + m.Path + " has no known Tag: " + m.Tag)
	}
	d.tag(m.Tag, desc, group)
	var params []any
	if !v1 {
		params = append(params, obj{"$ref": "#/components/parameters/partition"})
	}
	described := map[string]bool{}
	for _, p := range m.Params {
		described[p.Name] = true
		params = append(params, paramJSON(p))
	}
	if m.QueryOf != "" {
		r, ok := d.reg.ByName(m.QueryOf)
		if !ok {
			panic("handlers: openapi: route " + m.Method + " " + m.Path + " takes the query of " + m.QueryOf + ", which is not a record group")
		}
		params = append(params, filterParams(r)...)
		params = append(params, listParams(r)...)
	}
	for _, v := range pathVar.FindAllStringSubmatch(m.Path, -1) {
		if !described[v[1]] {
			params = append(params, obj{"name": v[1], "in": "path", "required": true, "schema": obj{"type": "string"}})
		}
	}
	op := obj{"summary": m.Summary, "operationId": m.OperationID, "tags": []string{m.Tag}}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if m.OperationID == "" {
		op["operationId"] = operationID(m.Method, m.Path)
	}
	desc = m.Description
	if m.RefusesIdempotencyKey != "" {
		// Not a parameter of the operation: a client that sends it gets a 400 naming it.
		desc = strings.TrimSpace(desc + "\n\n`" + idempotency.KeyHeader + "` is refused (a 400 naming it): " + m.RefusesIdempotencyKey)
	}
	if desc != "" {
		op["description"] = desc
	}
	if m.Body != nil {
		rb := obj{"required": m.Body.Required, "content": contentJSON(d.named(m.Body.Content, true), true)}
		if m.Body.Description != "" {
			rb["description"] = m.Body.Description
		}
		op["requestBody"] = rb
	}
	resp := obj{}
	for _, r := range m.Responses {
		out := obj{"description": r.Description}
		if len(r.Headers) > 0 {
			hs := obj{}
			for _, h := range r.Headers {
				hs[h.Name] = obj{"description": h.Description, "required": h.Required, "schema": schemaJSON(h.Schema, false)}
			}
			out["headers"] = hs
		}
		if len(r.Content) > 0 {
			out["content"] = contentJSON(d.named(r.Content, false), false)
		}
		resp[strconv.Itoa(r.Status)] = out
	}
	// Every route reads its query string and path through handlers/request, which refuses a
	// malformed one (400); every route with a body reads it there too (413, 415).
	errs := append([]int{http.StatusBadRequest, http.StatusInternalServerError}, m.Errors...)
	if m.Body != nil {
		errs = append(errs, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	if m.Negotiates() {
		errs = append(errs, http.StatusNotAcceptable) // route.Negotiated
	}
	if m.Idempotent {
		errs = append(errs, markIdempotent(op, resp)...)
	}
	if !v1 {
		errs = append(errs, http.StatusNotFound)
	}
	switch m.Access {
	case route.Public:
		op["security"] = []obj{}
	case route.Authenticated:
		errs = append(errs, http.StatusUnauthorized)
		if unsafeMethod(m.Method) {
			errs = append(errs, http.StatusForbidden) // a session cookie on a write from another origin
		}
	case route.Protected:
		errs = append(errs, http.StatusUnauthorized, http.StatusForbidden)
		op["description"] = strings.TrimSpace(desc + "\n\nNeeds the permission " + m.Need + " on `" + m.Object + "`.")
	}
	if v1 && m.Access != route.Public {
		op["security"] = []obj{{"bearer": []string{}}}
	}
	addProblems(resp, errs)
	op["responses"] = resp
	d.add(path, m.Method, op)
}

// named returns cs with each schema that has a Name (at any depth: items, properties,
// alternatives) replaced by a reference to its component, which it adds to the document the
// first time; a Name described twice differently panics, as the document would lie.
func (d *document) named(cs []route.Content, decoded bool) []route.Content {
	out := make([]route.Content, len(cs))
	for i, c := range cs {
		out[i] = route.Content{MediaType: c.MediaType, Schema: d.namedSchema(c.Schema, decoded)}
	}
	return out
}

func (d *document) namedSchema(s route.Schema, decoded bool) route.Schema {
	if s.Items != nil {
		items := d.namedSchema(*s.Items, decoded)
		s.Items = &items
	}
	if len(s.Properties) > 0 {
		props := make([]route.Property, len(s.Properties))
		for i, p := range s.Properties {
			p.Schema = d.namedSchema(p.Schema, decoded)
			props[i] = p
		}
		s.Properties = props
	}
	if len(s.OneOf) > 0 {
		alts := make([]route.Schema, len(s.OneOf))
		for i, a := range s.OneOf {
			alts[i] = d.namedSchema(a, decoded)
		}
		s.OneOf = alts
	}
	if s.Name == "" {
		return s
	}
	name := s.Name
	s.Name = ""
	js := schemaJSON(s, decoded)
	if prev, ok := d.schemas[name]; ok {
		a, _ := json.Marshal(prev)
		b, _ := json.Marshal(js)
		if string(a) != string(b) {
			panic("handlers: openapi: schema " + name + " is described twice, differently")
		}
	}
	d.schemas[name] = js
	return route.Schema{Ref: name}
}

// addProblems adds the problem responses of statuses that resp does not describe otherwise.
func addProblems(resp obj, statuses []int) {
	for _, st := range statuses {
		key := strconv.Itoa(st)
		if _, ok := resp[key]; ok {
			continue
		}
		if _, ok := problemNames[st]; !ok {
			panic("handlers: openapi: no problem response for status " + key)
		}
		resp[key] = obj{"$ref": "#/components/responses/" + problemNames[st]}
	}
}

// contentJSON is a body per media type; in a request (decoded) the members of reflected Go
// structs are optional, as a JSON decoder leaves an absent member at its zero value.
func contentJSON(cs []route.Content, request bool) obj {
	out := obj{}
	for _, c := range cs {
		out[c.MediaType] = obj{"schema": schemaJSON(c.Schema, request)}
	}
	return out
}

func paramJSON(p route.Param) obj {
	out := obj{"name": p.Name, "in": string(p.In), "schema": schemaJSON(p.Schema, false)}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.Required || p.In == route.InPath {
		out["required"] = true
	}
	return out
}

// operationID derives an operation's name from its method and path: "get" and
// "/api/events/{event}/cancel" give "postApiEventsEventCancel".
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '-' || r == '{' || r == '}' || r == '.' }) {
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}

// problemNames names the component response of each problem status.
var problemNames = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusNotAcceptable:         "NotAcceptable",
	http.StatusConflict:              "IdempotencyKeyInFlight",
	http.StatusPreconditionFailed:    "PreconditionFailed",
	http.StatusUnprocessableEntity:   "IdempotencyKeyReused",
	http.StatusRequestEntityTooLarge: "ContentTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusTooManyRequests:       "TooManyRequests",
	http.StatusInternalServerError:   "InternalServerError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
}

func problemResponses() obj {
	problem := obj{"application/problem+json": obj{"schema": obj{"$ref": "#/components/schemas/Problem"}}}
	desc := map[int]string{
		http.StatusBadRequest:   "The request is not valid; `Errors` names each parameter or member that is wrong and why.",
		http.StatusUnauthorized: "No credential, or one that is not valid here (unknown, expired, revoked, of another partition).",
		http.StatusForbidden: "The credential is valid but does not carry the permission the operation needs; or it is a " +
			"session cookie on a write (POST, PUT, PATCH, DELETE) that the browser marked as sent by a page of another origin.",
		http.StatusNotFound: "No such partition, record or resource (a malformed identifier in the path is a 404 too). " +
			"To the retry of a create whose answer was lost (see `Idempotency-Key`): the record it created has since been deleted, or is no longer visible to the caller.",
		http.StatusNotAcceptable: "`Accept` names no media type the operation answers in.",
		http.StatusConflict: "With `Retry-After`: a request with the same `Idempotency-Key` is still being answered; retry " +
			"after `Retry-After` seconds to get its answer. Without it: that request was done, but its answer was lost " +
			"before it could be kept (its server stopped in between); it is not done again, and a retry gets this again. " +
			"Read the current state of what it changed.",
		http.StatusUnprocessableEntity: "The `Idempotency-Key` was first used with another request (method, path or body); " +
			"a new request needs a new key.",
		http.StatusPreconditionFailed: "The record changed since the ETag that `If-Match` names; it is left as it is. " +
			"GET it again and retry with its current `ETag`. (A download's preconditions are in its description.)",
		http.StatusRequestEntityTooLarge: "The body is larger than the operation takes (1 MiB; people import 32 MiB; security operations 64 KiB).",
		http.StatusUnsupportedMediaType:  "`Content-Type` is not JSON.",
		http.StatusTooManyRequests:       "Too many attempts from this client or with this credential; retry later.",
		http.StatusInternalServerError:   "An unexpected error; it is logged.",
		http.StatusServiceUnavailable: "The partition's database cannot serve the request now: it cannot be reached, did not answer " +
			"within the server's database timeout, refuses connections (too many clients), has no space left for a write " +
			"(nothing of it was written), or another transaction held a lock the request needed past that timeout; or the " +
			"partition's tables lack what its descriptors need and must be migrated again. `Detail` says which. Retry after `Retry-After` seconds.",
	}
	out := obj{}
	for st, name := range problemNames {
		r := obj{"description": desc[st], "content": problem, "headers": obj{"Vary": problemVary}}
		headers := r["headers"].(obj)
		switch st {
		case http.StatusUnauthorized:
			headers["WWW-Authenticate"] = obj{"required": true, "description": "The scheme to authenticate with.",
				"schema": obj{"type": "string", "examples": []string{`Bearer realm="credo"`}}}
		case http.StatusTooManyRequests:
			headers["Retry-After"] = obj{"description": "Seconds to wait before the next attempt.",
				"schema": obj{"type": "integer", "minimum": 0}}
		case http.StatusNotAcceptable:
			headers["Vary"] = varyHeader
		case http.StatusServiceUnavailable:
			headers["Retry-After"] = obj{"required": true, "description": "Seconds to wait before retrying.",
				"schema": obj{"type": "integer", "minimum": 0}}
		case http.StatusConflict:
			headers["Retry-After"] = obj{"description": "Seconds to wait before retrying; absent when a retry " +
				"would get the same answer.", "schema": obj{"type": "integer", "minimum": 0}}
			headers["Location"] = obj{"description": "The record a create made, when its answer was lost and the caller may " +
				"create records of the group but not read them; absent otherwise.", "schema": obj{"type": "string", "format": "uri-reference"}}
		}
		out[name] = r
	}
	return out
}

// unsupportedPatch is the 415 of a group's PATCH: the shared one, with the Accept-Patch header
// (RFC 5789 §2.2) that names the patch formats taken.
func unsupportedPatch() obj {
	return obj{"description": "`Content-Type` is not a JSON merge patch (`" + request.MergePatchType + "`) or `application/json`.",
		"content": obj{"application/problem+json": obj{"schema": obj{"$ref": "#/components/schemas/Problem"}}},
		"headers": obj{"Accept-Patch": obj{"required": true, "description": "The patch formats PATCH takes.",
			"schema": obj{"type": "string", "enum": []string{request.AcceptPatch}}}}}
}

// requestIDHeader names the request id's header (observe.RequestIDHeader) in the document.
const requestIDHeader = observe.RequestIDHeader

// requestIDHeaderJSON describes X-Request-Id, which every answer carries (the observer sets it
// before any handler runs).
func requestIDHeaderJSON() obj {
	return obj{"required": true,
		"description": "The request's id: the client's own `X-Request-Id` when it sent one of 1 to " +
			strconv.Itoa(observe.MaxRequestIDLen) + " printable ASCII characters without spaces, else one credo made " +
			"(32 hexadecimal digits). Problem documents repeat it as `RequestId`; the server's log lines carry it.",
		"schema": obj{"type": "string", "minLength": 1, "maxLength": observe.MaxRequestIDLen, "pattern": `^[!-~]+$`}}
}

// markRequestID adds X-Request-Id to each answer of responses that is not a reference to a
// shared answer (those carry it themselves).
func markRequestID(responses obj) {
	for _, v := range responses {
		r := v.(obj)
		if _, ref := r["$ref"]; ref {
			continue
		}
		hs, _ := r["headers"].(obj)
		if hs == nil {
			hs = obj{}
			r["headers"] = hs
		}
		hs[requestIDHeader] = obj{"$ref": "#/components/headers/" + requestIDHeader}
	}
}

func problemSchema() obj {
	return obj{"type": "object", "description": "An RFC 9457 problem document with PascalCase members.",
		"properties": obj{
			"Type":     obj{"type": "string", "description": "A URI naming the problem type; `about:blank` for the plain status."},
			"Title":    obj{"type": "string", "description": "The status text."},
			"Status":   obj{"type": "integer", "description": "The HTTP status."},
			"Detail":   obj{"type": "string", "description": "What is wrong, for a person."},
			"Instance": obj{"type": "string", "description": "The request path."},
			"Errors": obj{"type": "object", "description": "The messages per parameter or member that is wrong.",
				"additionalProperties": obj{"type": "array", "items": obj{"type": "string"}}},
			"RequestId": obj{"type": "string", "description": "The request's id, as in its X-Request-Id header: quote it when reporting the problem."},
		},
		"required": []string{"Type", "Title", "Status"},
	}
}

func countSchema() obj {
	return obj{"type": "object", "properties": obj{"Count": obj{"type": "integer", "minimum": 0}},
		"required": []string{"Count"}, "additionalProperties": false}
}

// paginationHeader is X-Query-Pagination of list and search. It is a string holding JSON
// rather than a header with content, which generated clients (oapi-codegen) cannot read.
func paginationHeader() obj {
	return obj{"required": true,
		"description": "The page as a JSON object: `Page`, `PageSize` (the Take), `TotalCount` (all matching records) " +
			"and, when another page follows, `Continuation`: the token that `Continue` takes to read it.",
		"schema": obj{"type": "string",
			"pattern": `^\{"Page":[0-9]+,"PageSize":[0-9]+,"TotalCount":[0-9]+(,"Continuation":"[A-Za-z0-9_-]+")?\}$`,
			"examples": []string{`{"Page":1,"PageSize":20,"TotalCount":57}`,
				`{"Page":1,"PageSize":20,"TotalCount":57,"Continuation":"AXsiUGFnZSI6MiwiQWZ0ZXIiOlsiMDE5MGE2ZjAtMDAwMC03MDAwLTgwMDAtMDAwMDAwMDAwMDE0Il19i1q2hZ8cJm3yXyqkQhB0K8bG1gBzU0mE8Y2zH7C6b3w"}`}}}
}

// unsafeMethod reports whether a method writes (RFC 9110 §9.2.1): the ones a session cookie
// authenticates only from the API's own origin (auth's cross-origin check).
func unsafeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}
