// Package openapitest checks every HTTP exchange of a test suite against credo's OpenAPI
// document: suites wrap their server's handler with a Validator, which fails the test on any
// request or answer the document does not describe, and on a suite that validated nothing.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validator validates the exchanges of the handlers it wraps against one document.
//
// A request the document accepts must get an answer the document describes for its
// operation: a documented status, with the documented headers and a body of the documented
// schema. A request the document refuses (a test of bad input) must get a documented 4xx. A
// path the document lacks must get a 404 problem; a method
// the document lacks on a known path must get a 405 problem whose Allow lists exactly the
// documented methods (none for a path item without operations).
//
// Two exchanges are not the document's to describe: a CORS preflight (OPTIONS with
// Access-Control-Request-Method), which the CORS layer answers before routing and the
// document's introduction describes, must be a 204 without a body; a request whose client left
// before anything was written has no answer to check. Paths the server serves outside the API
// (its probes) are left alone when named with Outside.
type Validator struct {
	t       testing.TB
	doc     *openapi3.T
	router  routers.Router
	count   atomic.Int64
	done    atomic.Bool
	outside map[string]bool
	added   map[string]bool // headers that something between the server and the validator adds
}

func init() {
	// kin-openapi decodes no text answers but plain text and CSV: the document's text bodies
	// (pages, scripts, XML) are strings too, and text/json is JSON.
	for _, mt := range []string{"text/html", "text/xml", "application/xml", "text/javascript"} {
		if openapi3filter.RegisteredBodyDecoder(mt) == nil {
			openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
		}
	}
	if openapi3filter.RegisteredBodyDecoder("text/json") == nil {
		openapi3filter.RegisterBodyDecoder("text/json", openapi3filter.JSONBodyDecoder)
	}
}

// docs caches loaded documents by their JSON, so that the suites of a package load each once.
var docs sync.Map // string → *loaded

type loaded struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// Load parses and validates a document (the JSON of, or a value that marshals to, an OpenAPI
// 3.1 document) with kin-openapi.
func Load(document any) (*openapi3.T, routers.Router, error) {
	b, ok := document.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(document); err != nil {
			return nil, nil, fmt.Errorf("openapitest: encode the document: %w", err)
		}
	}
	v, _ := docs.LoadOrStore(string(b), &loaded{})
	l := v.(*loaded)
	l.once.Do(func() {
		loader := openapi3.NewLoader()
		if l.doc, l.err = loader.LoadFromData(b); l.err != nil {
			l.err = fmt.Errorf("openapitest: load the document: %w", l.err)
			return
		}
		if l.err = l.doc.Validate(loader.Context); l.err != nil {
			l.err = fmt.Errorf("openapitest: the document is not valid: %w", l.err)
			return
		}
		if l.router, l.err = gorillamux.NewRouter(l.doc); l.err != nil {
			l.err = fmt.Errorf("openapitest: route the document: %w", l.err)
		}
	})
	return l.doc, l.router, l.err
}

// New returns a Validator of document for t. When t ends it fails if no exchange was
// validated, and logs how many were.
func New(t testing.TB, document any) *Validator {
	t.Helper()
	doc, router, err := Load(document)
	if err != nil {
		t.Fatal(err)
	}
	v := &Validator{t: t, doc: doc, router: router}
	t.Cleanup(func() {
		v.done.Store(true)
		n := v.count.Load()
		if n == 0 {
			t.Errorf("openapitest: no exchange was validated against the OpenAPI document")
		}
		t.Logf("openapitest: %d exchanges validated against the OpenAPI document", n)
	})
	return v
}

// perTest holds the Validator of each test that asked Of for one.
var perTest sync.Map // testing.TB → *Validator

// Of returns the Validator of t, made with document on the first call: suites that serve
// requests one handler call at a time validate them all with one Validator per test.
func Of(t testing.TB, document any) *Validator {
	t.Helper()
	if v, ok := perTest.Load(t); ok {
		return v.(*Validator)
	}
	v := New(t, document)
	perTest.Store(t, v)
	t.Cleanup(func() { perTest.Delete(t) })
	return v
}

// Outside names paths that the server serves outside the documented API (its probes): their
// exchanges are neither validated nor counted. It returns v; call it before serving.
func (v *Validator) Outside(paths ...string) *Validator {
	if v.outside == nil {
		v.outside = map[string]bool{}
	}
	for _, p := range paths {
		v.outside[p] = true
	}
	return v
}

// Added names answer headers that the suite's own machinery between the server and the
// validator adds (a test proxy's), which the document need not declare. It returns v; call it
// before serving.
func (v *Validator) Added(headers ...string) *Validator {
	if v.added == nil {
		v.added = map[string]bool{}
	}
	for _, h := range headers {
		v.added[http.CanonicalHeaderKey(h)] = true
	}
	return v
}

// Count is the number of exchanges validated so far.
func (v *Validator) Count() int64 { return v.count.Load() }

// Handler wraps next so that each exchange is validated.
func (v *Validator) Handler(next http.Handler) http.Handler { return v.handler(next, true) }

// Streaming wraps next like Handler, but keeps no answer body, so that a test of memory use
// is not disturbed: the answers' statuses and headers are validated, not their bodies.
func (v *Validator) Streaming(next http.Handler) http.Handler { return v.handler(next, false) }

func (v *Validator) handler(next http.Handler, keep bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v.outside[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		var body []byte
		var readErr error
		if r.Body != nil {
			body, readErr = io.ReadAll(r.Body)
			_ = r.Body.Close()
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{readErr}))
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK, discard: !keep}
		next.ServeHTTP(rec, r)
		if readErr != nil {
			return // a broken body: nothing the document can say about it
		}
		if !rec.wroteHeader && r.Context().Err() != nil {
			return // the client left before an answer began: there is none to check
		}
		if err := v.check(r, body, rec); err != nil && !v.done.Load() {
			v.t.Errorf("openapitest: %s %s → %d: %v\nrequest body: %s\nresponse body: %s",
				r.Method, r.URL.RequestURI(), rec.status, err, clip(body), clip(rec.body.Bytes()))
		}
		v.count.Add(1)
	})
}

// RoundTripper wraps a client's transport so that each exchange is validated.
func (v *Validator) RoundTripper(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper{v: v, next: next}
}

type roundTripper struct {
	v    *Validator
	next http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rb, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(rb))
	rec := &recorder{status: res.StatusCode, header: res.Header}
	rec.body.Write(rb)
	if err := rt.v.check(req, body, rec); err != nil && !rt.v.done.Load() {
		rt.v.t.Errorf("openapitest: %s %s → %d: %v\nrequest body: %s\nresponse body: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, err, clip(body), clip(rb))
	}
	rt.v.count.Add(1)
	return res, nil
}

// check validates one exchange.
func (v *Validator) check(r *http.Request, body []byte, rec *recorder) error {
	header := rec.Header()
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" && rec.status != http.StatusMethodNotAllowed {
		// A CORS preflight that the CORS layer answered (the introduction describes it).
		if rec.status != http.StatusNoContent || rec.body.Len() > 0 {
			return fmt.Errorf("a CORS preflight must be answered 204 without a body")
		}
		return nil
	}
	route, params, err := v.router.FindRoute(v.target(r, body))
	switch {
	case err == routers.ErrPathNotFound:
		if rec.status == http.StatusNotFound {
			return v.problem(r, rec)
		}
		return fmt.Errorf("the document has no such path, yet the answer is not a 404")
	case err == routers.ErrMethodNotAllowed:
		if rec.status != http.StatusMethodNotAllowed {
			return fmt.Errorf("the document has no %s on this path, yet the answer is not a 405", r.Method)
		}
		if want := v.methods(r, body); header.Get("Allow") != want {
			return fmt.Errorf("the answer allows %q, but the document offers %q", header.Get("Allow"), want)
		}
		return v.problem(r, rec)
	case err != nil:
		return fmt.Errorf("find the route: %w", err)
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	target := v.target(r, body)
	if rb := route.Operation.RequestBody; len(body) > 0 && target.Header.Get("Content-Type") == "" &&
		(rb == nil || rb.Value.Content["*/*"] == nil) {
		// A body without a Content-Type is read as JSON, unless the operation reads any type.
		target.Header.Set("Content-Type", "application/json")
	}
	in := &openapi3filter.RequestValidationInput{Request: target, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr != nil && (rec.status < 400 || rec.status >= 500) {
		return fmt.Errorf("the document refuses the request, yet the answer is %d: %w", rec.status, reqErr)
	}
	if r.Method == http.MethodHead {
		// kin-openapi validates no HEAD answer; its status must still be documented.
		if route.Operation.Responses.Status(rec.status) == nil {
			return fmt.Errorf("status %d is not documented", rec.status)
		}
		return v.undeclaredHeaders(route.Operation, rec.status, header)
	}
	if rec.discard {
		opts.ExcludeResponseBody = true
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.status, Header: header, Options: opts}
	out.SetBodyBytes(rec.body.Bytes())
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		if reqErr != nil {
			return fmt.Errorf("%w (the request was refused by the document too: %v)", err, reqErr)
		}
		return err
	}
	return v.undeclaredHeaders(route.Operation, rec.status, header)
}

// generalHeaders are the answer headers that describe the message, its caching or the
// browser's handling of it rather than the operation's result, and that the document therefore
// leaves to HTTP; with the CORS headers, which the introduction describes, they are the only
// ones an answer may carry without its operation declaring them. kin-openapi checks the
// declared headers only, so a header a client is never told of would otherwise pass.
var generalHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Date": true, "Connection": true, "Cache-Control": true,
	"X-Content-Type-Options": true, "Content-Security-Policy": true,
}

// undeclaredHeaders reports a header of an answer that its operation's response for status
// does not declare.
func (v *Validator) undeclaredHeaders(op *openapi3.Operation, status int, header http.Header) error {
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return nil // the status is checked elsewhere
	}
	var out []string
	for name, values := range header {
		name = http.CanonicalHeaderKey(name)
		switch {
		case generalHeaders[name], v.added[name], strings.HasPrefix(name, "Access-Control-"):
			continue
		case name == "Vary" && strings.Join(values, ", ") == "Origin":
			continue // the CORS layer's, described by the introduction
		}
		if ref.Value.Headers[name] == nil && !declaredFold(ref.Value.Headers, name) {
			out = append(out, name)
		}
	}
	if len(out) > 0 {
		slices.Sort(out)
		return fmt.Errorf("the answer carries %s, which the document does not declare for status %d", strings.Join(out, ", "), status)
	}
	return nil
}

// declaredFold reports whether headers declares name in any case.
func declaredFold(headers openapi3.Headers, name string) bool {
	for k := range headers {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// target is a copy of the request to match and validate.
func (v *Validator) target(r *http.Request, body []byte) *http.Request {
	c := r.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.ContentLength = int64(len(body))
	// The router matches the path as sent; the server under test may have been addressed by
	// its host.
	c.Host, c.URL.Host, c.URL.Scheme = "", "", ""
	return c
}

// methods lists the methods the document offers on the request's path, as Allow does.
func (v *Validator) methods(r *http.Request, body []byte) string {
	var out []string
	for _, m := range []string{http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPost, http.MethodPut} {
		c := v.target(r, body)
		c.Method = m
		if _, _, err := v.router.FindRoute(c); err == nil {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// problem checks an answer that no operation describes: a problem document.
func (v *Validator) problem(r *http.Request, rec *recorder) error {
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		return fmt.Errorf("the answer's Content-Type is %q, not application/problem+json", ct)
	}
	if r.Method == http.MethodHead || rec.discard {
		return nil
	}
	var value any
	if err := json.Unmarshal(rec.body.Bytes(), &value); err != nil {
		return fmt.Errorf("the problem document is not JSON: %w", err)
	}
	schema := v.doc.Components.Schemas["Problem"]
	if schema == nil {
		return fmt.Errorf("the document has no Problem schema")
	}
	return schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020())
}

// recorder passes an answer on and keeps its status, headers and body.
type recorder struct {
	http.ResponseWriter
	status      int
	header      http.Header // the headers as sent, once sent
	wroteHeader bool
	body        bytes.Buffer
	discard     bool // keep no body
}

func (r *recorder) Header() http.Header {
	if r.header != nil {
		return r.header
	}
	return r.ResponseWriter.Header()
}

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.wroteHeader = true
		r.status = status
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if !r.discard {
		r.body.Write(p)
	}
	return r.ResponseWriter.Write(p)
}

// Flush passes flushes on, for streamed answers.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the server's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// errReader ends a replayed body with the error reading it met, if any.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

func clip(b []byte) string {
	const max = 600
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
