package openapitest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"credo/engine"
	_ "credo/engine/validator" // the descriptors' validate tags
	"credo/internal/openapitest"
	"credo/resources"
)

// recordingT is a testing.TB that keeps what the Validator reports instead of failing.
type recordingT struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recordingT) Helper() {}
func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingT) Fatal(args ...any)   { panic(fmt.Sprint(args...)) }
func (r *recordingT) Logf(string, ...any) {}
func (r *recordingT) Cleanup(f func())    { r.cleanups = append(r.cleanups, f) }
func (r *recordingT) finish() {
	for _, f := range r.cleanups {
		f()
	}
}
func (r *recordingT) failures() []string { r.mu.Lock(); defer r.mu.Unlock(); return r.errors }

// answer is a fake server's answer.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	for k, vs := range a.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

// requestID is the X-Request-Id that every answer of the server carries.
const requestID = "0123456789abcdef0123456789abcdef"

func problem(status int, extra ...string) answer {
	h := http.Header{"Content-Type": {"application/problem+json"}, "X-Request-Id": {requestID}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return answer{status: status, header: h,
		body: fmt.Sprintf(`{"Type":"about:blank","Title":"%s","Status":%d}`, http.StatusText(status), status)}
}

func jsonAnswer(status int, body string, extra ...string) answer {
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {requestID}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return answer{status: status, header: h, body: body}
}

// TestValidatorCatchesMismatches serves fake answers to requests and checks that exactly the
// exchanges the document does not describe are reported.
func TestValidatorCatchesMismatches(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	doc := openapitest.Document(reg)
	const (
		comments = "/v2/e01/security/users-comments"
		id       = "0190a6f0-0000-7000-8000-000000000001"
		page     = `{"Page":1,"PageSize":20,"TotalCount":0}`
	)
	cases := []struct {
		name, method, target, body string
		header                     []string
		answer                     answer
		mismatch                   bool
	}{
		{name: "count", method: "GET", target: comments + "/count", answer: jsonAnswer(200, `{"Count":1}`, "Vary", "Accept")},
		{name: "count without Vary", method: "GET", target: comments + "/count", answer: jsonAnswer(200, `{"Count":1}`), mismatch: true},
		{name: "count of the wrong type", method: "GET", target: comments + "/count", answer: jsonAnswer(200, `{"Count":"1"}`), mismatch: true},
		{name: "list", method: "GET", target: comments + "?Take=5", answer: jsonAnswer(200, `[]`, "X-Query-Pagination", page, "Vary", "Accept")},
		{name: "list without X-Query-Pagination", method: "GET", target: comments, answer: jsonAnswer(200, `[]`), mismatch: true},
		{name: "list with a record of unknown members", method: "GET", target: comments, answer: jsonAnswer(200, `[{"Bogus":1}]`, "X-Query-Pagination", page), mismatch: true},
		{name: "undocumented status", method: "GET", target: comments + "/" + id, answer: problem(http.StatusTeapot), mismatch: true},
		{name: "missing record", method: "GET", target: comments + "/" + id, answer: problem(404)},
		{name: "missing record, after the negotiation", method: "GET", target: comments + "/" + id, answer: problem(404, "Vary", "Accept")},
		{name: "problem with an undeclared header", method: "GET", target: comments + "/" + id, answer: problem(404, "Warning", "199 - x"), mismatch: true},
		{name: "count with an undeclared header", method: "GET", target: comments + "/count",
			answer: jsonAnswer(200, `{"Count":1}`, "Vary", "Accept", "Last-Modified", "Wed, 25 Nov 2026 07:49:26 GMT"), mismatch: true},
		{name: "count with CORS headers", method: "GET", target: comments + "/count",
			answer: jsonAnswer(200, `{"Count":1}`, "Vary", "Origin, Accept", "Access-Control-Allow-Origin", "https://app.example")},
		{name: "problem with CORS's Vary", method: "GET", target: comments + "/" + id, answer: problem(404, "Vary", "Origin")},
		{name: "HEAD with an undocumented status", method: "HEAD", target: comments + "/" + id, answer: answer{status: 201}, mismatch: true},
		{name: "refused body answered 201", method: "POST", target: comments, body: `{"Bogus":1}`,
			answer: jsonAnswer(201, `{}`, "Location", comments+"/"+id), mismatch: true},
		{name: "refused body answered 400", method: "POST", target: comments, body: `{"Bogus":1}`, answer: problem(400)},
		{name: "create without Location", method: "POST", target: comments,
			body:   `{"CommentCreatedBy":"` + id + `","OrganizationIdentifier":"` + id + `","UserIdentifier":"` + id + `"}`,
			answer: jsonAnswer(201, `{"CommentIdentifier":"`+id+`"}`), mismatch: true},
		{name: "405 with the documented Allow", method: "DELETE", target: comments, answer: problem(405, "Allow", "GET, POST")},
		{name: "405 with another Allow", method: "DELETE", target: comments, answer: problem(405, "Allow", "GET"), mismatch: true},
		{name: "405 on a path without operations", method: "GET", target: "/v2/e01/directory/people-fields/search", answer: problem(405, "Allow", "")},
		{name: "unknown path", method: "GET", target: "/v2/e01/nowhere", answer: problem(404)},
		{name: "unknown path answered 200", method: "GET", target: "/v2/e01/nowhere", answer: jsonAnswer(200, `{}`), mismatch: true},
		{name: "401 without WWW-Authenticate", method: "GET", target: comments + "/count", answer: problem(401), mismatch: true},
		{name: "401 with WWW-Authenticate", method: "GET", target: comments + "/count", answer: problem(401, "WWW-Authenticate", `Bearer realm="credo"`)},
		{name: "problem that is not one", method: "GET", target: comments + "/count", answer: jsonAnswer(503, `{"x":1}`), mismatch: true},
		{name: "answer without X-Request-Id", method: "GET", target: comments + "/count",
			answer: answer{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: `{"Count":1}`}, mismatch: true},
		{name: "problem without X-Request-Id", method: "GET", target: comments + "/" + id,
			answer: answer{status: 404, header: http.Header{"Content-Type": {"application/problem+json"}}, body: `{"Type":"about:blank","Title":"Not Found","Status":404}`}, mismatch: true},
		{name: "503 with Retry-After", method: "GET", target: comments + "/count", answer: problem(503, "Retry-After", "2")},
		{name: "503 without Retry-After", method: "GET", target: comments + "/count", answer: problem(503), mismatch: true},
		{name: "CORS preflight", method: "OPTIONS", target: comments, header: []string{"Origin", "https://app.example", "Access-Control-Request-Method", "GET"},
			answer: answer{status: 204, header: http.Header{"Access-Control-Allow-Origin": {"https://app.example"}}}},
		{name: "CORS preflight with a body", method: "OPTIONS", target: comments, header: []string{"Origin", "https://app.example", "Access-Control-Request-Method", "GET"},
			answer: jsonAnswer(200, `{}`), mismatch: true},
		{name: "CORS preflight without CORS", method: "OPTIONS", target: comments, header: []string{"Origin", "https://app.example", "Access-Control-Request-Method", "GET"},
			answer: problem(405, "Allow", "GET, POST")},
		{name: "OPTIONS that is no preflight", method: "OPTIONS", target: comments, answer: answer{status: 204}, mismatch: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := &recordingT{}
			v := openapitest.New(rt, doc)
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest(tc.method, tc.target, nil)
			if body != nil {
				req = httptest.NewRequest(tc.method, tc.target, body)
				req.Header.Set("Content-Type", "application/json")
			}
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			v.Handler(tc.answer).ServeHTTP(httptest.NewRecorder(), req)
			rt.finish()
			if got := len(rt.failures()) > 0; got != tc.mismatch {
				t.Errorf("mismatch reported: %v, want %v: %q", got, tc.mismatch, rt.failures())
			}
			if v.Count() != 1 {
				t.Errorf("validated %d exchanges, want 1", v.Count())
			}
		})
	}
}

// TestValidatorFailsWhenNothingIsValidated checks that a suite whose exchanges never reach
// the Validator fails.
func TestValidatorFailsWhenNothingIsValidated(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	rt := &recordingT{}
	openapitest.New(rt, openapitest.Document(reg))
	rt.finish()
	if len(rt.failures()) != 1 || !strings.Contains(rt.failures()[0], "no exchange") {
		t.Errorf("failures %q, want one saying no exchange was validated", rt.failures())
	}
}

// TestValidatorLeavesAlone: a request whose client left before any answer began, and a path
// named with Outside (the probes), are neither checked nor counted; an answer that began
// before the client left is checked.
func TestValidatorLeavesAlone(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	doc := openapitest.Document(reg)
	rt := &recordingT{}
	v := openapitest.New(rt, doc).Outside("/livez")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	left := httptest.NewRequest("GET", "/v2/e01/security/users-comments/count", nil).WithContext(ctx)
	v.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), left)
	v.Handler(answer{status: 200, body: "ok\n"}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/livez", nil))
	if v.Count() != 0 || len(rt.failures()) != 0 {
		t.Errorf("validated %d exchanges, failures %q; want none", v.Count(), rt.failures())
	}
	left = httptest.NewRequest("GET", "/v2/e01/security/users-comments/count", nil).WithContext(ctx)
	v.Handler(jsonAnswer(200, `{"Count":"x"}`)).ServeHTTP(httptest.NewRecorder(), left)
	rt.finish()
	if v.Count() != 1 || len(rt.failures()) != 1 {
		t.Errorf("an answer written before the client left: %d validated, failures %q; want 1 and 1", v.Count(), rt.failures())
	}
}

// TestValidatorAdded: a header named with Added (a test proxy's) passes undeclared; without
// it the same answer is reported.
func TestValidatorAdded(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	doc := openapitest.Document(reg)
	answer := jsonAnswer(200, `{"Count":1}`, "Vary", "Accept", "X-Proxy-Backend", "1")
	for _, added := range []bool{true, false} {
		rt := &recordingT{}
		v := openapitest.New(rt, doc)
		if added {
			v.Added("x-proxy-backend")
		}
		v.Handler(answer).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v2/e01/security/users-comments/count", nil))
		rt.finish()
		if got := len(rt.failures()) > 0; got == added {
			t.Errorf("Added %v: mismatch reported %v: %q", added, got, rt.failures())
		}
	}
}
