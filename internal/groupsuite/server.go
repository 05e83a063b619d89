package groupsuite

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"credo/engine"
)

// Server is what the suite sends its requests to.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:8080.
	URL string
	// Partition is the partition every request goes to.
	Partition string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Header is sent with every request (credentials).
	Header http.Header
	// Store writes the records of groups the API offers no create for, as credo load does.
	Store *engine.Store
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request to path (relative to /v2/{partition}/) with a JSON body when body is
// not empty and the header pairs given.
func (s *Server) Do(t testing.TB, method, path, body string, header ...string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+"/v2/"+s.Partition+"/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range s.Header {
		req.Header[k] = vs
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Expect fails the test unless the status is status.
func (r Response) Expect(t testing.TB, what string, status int) Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
	}
	return r
}

// ProblemNames asserts a problem+json document whose Errors name member.
func (r Response) ProblemNames(t testing.TB, what, member string) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	var p struct {
		Status int
		Errors map[string][]string
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("%s: problem document: %v: %s", what, err, r.Body)
	}
	if _, ok := p.Errors[member]; !ok {
		t.Errorf("%s: problem %s does not name %s", what, r.Body, member)
	}
}

// ETagOf fails the test unless the answer carries a strong, quoted ETag, and returns it.
func ETagOf(t testing.TB, what string, r Response) string {
	t.Helper()
	tag := r.Header.Get("ETag")
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		t.Fatalf("%s: ETag %q, want a strong quoted entity tag", what, tag)
	}
	return tag
}
