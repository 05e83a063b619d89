package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"credo/handlers"
	"credo/handlers/observe"
	"credo/internal/testenv"
)

// FuzzHTTP sends random requests — method, target (path and query), body, with or without an
// operator's bearer token, with or without an Idempotency-Key — to the server as credo serve
// wires it (v2, its modules and version 1). A request that net/http itself reads is answered
// below 500, and every 4xx answer is a problem document (decisions §3) whose Status is the
// response's. A request with a key is sent twice, as a client's retry: the retry is answered
// so too, and when it is a replay (Idempotent-Replayed), it is the first answer, a success,
// again (docs/design.md, Retries).
func FuzzHTTP(f *testing.F) {
	var servers []fuzzServer
	for _, b := range testenv.FuzzBackends(f) {
		servers = append(servers, newFuzzServer(f, b, nil))
	}
	seeds := []struct{ method, target, body string }{
		{"GET", "/v2/{p}/security/users-comments?Take=5&Sort=CommentText+desc&Format=csv", ""},
		{"POST", "/v2/{p}/security/users-comments", `{"CommentCreatedBy":"{user}","OrganizationIdentifier":"{org}","UserIdentifier":"{user}","CommentText":"x","CommentCreated":"2024-03-10T14:30:00-06:00"}`},
		{"PATCH", "/v2/{p}/security/users-comments/0190a6f0-0000-7000-8000-00000000000a", `{"CommentText":null}`},
		{"PUT", "/v2/{p}/directory/people-fields/0190a6f0-0000-7000-8000-00000000000a", `{"UserIdentifier":"{user}","FieldSequence":1}`},
		{"DELETE", "/v2/{p}/security/permissions/0190a6f0-0000-7000-8000-00000000000a", ""},
		{"HEAD", "/v2/{p}/security/users/{user}", ""},
		{"GET", "/v2/{p}/directory/people/count?Filter.Take=5&Origin.When=2024-03-10T14:30:00Z", ""},
		{"GET", "/v2/{p}/progress/gradebooks/search?GradebookCreatedSince=2024-03-10T14:30:00Z&Includes=GradebookTitle", ""},
		{"GET", "/v2/{p}/progress/gradebooks/export?Format=csv", ""},
		{"GET", "/v2/{p}/progress/gradebooks/download/0190a6f0-0000-7000-8000-00000000000a", ""},
		{"POST", "/v2/{p}/contact/persons/import", `[{"Identifier":"0190a6f0-0000-7000-8000-0000000000f1","Email":"a@example.com","FirstName":"A","LastName":"B","EmployeeType":"Employee","Manager":""}]`},
		{"POST", "/v2/{p}/api/plugin/cmds/compliance-summaries", `{"Departments":[],"Measurements":[1,18],"ProfileCondition":2,"DataAccess":null}`},
		{"POST", "/v2/{p}/security/tokens/generate", `{"Secret":"x","Lifetime":59}`},
		{"POST", "/v2/{p}/security/tokens/validate", `eyJhbGciOiJIUzI1NiJ9.e30.x`},
		{"POST", "/v2/{p}/security/cookies/decode?decode=true&decrypt=false", `abc`},
		{"GET", "/v2/{p}/platform/formats/time?value=2024-03-10T14:30:00-05:00", ""},
		{"GET", "/v2/{p}/platform/routes/settings?url=/a/b", ""},
		{"GET", "/api/events/list-events?date=2024-03-10", ""},
		{"POST", "/api/events/0190a6f0-0000-7000-8000-00000000000a", `{"EventVenue":"0190a6f0-0000-7000-8000-00000000000a","EventStart":"2030-03-10T14:30:00Z","RegistrationLimit":5}`},
		{"POST", "/api/registrations/search", `{"Name":"a","LastChangeTimeSince":"2024-03-10T14:30:00Z"}`},
		{"POST", "/api/registrations/0190a6f0-0000-7000-8000-00000000000a/commands/register-lax", `{"EventVenue":"0190a6f0-0000-7000-8000-00000000000a","EventStart":"2030-03-10T14:30:00Z","Learner":"{user}","Assessment":"X","Accommodations":[{"Type":"T","TimeExtension":5}]}`},
		{"POST", "/api/registrations/0190a6f0-0000-7000-8000-00000000000a/commands/grant-accommodation", `{"Type":"T","Name":"n","TimeExtension":2147483647}`},
		{"POST", "/api/integration/partner/callback/0190a6f0-0000-7000-8000-00000000000a/0190a6f0-0000-7000-8000-00000000000b", `{"cmi.core.lesson_status":"passed"}`},
		{"GET", "/api/events/classes?organization={org}", ""},
		{"GET", "/api/events/scrap-paper?id=x", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, []byte(s.body), true, "")
		f.Add(s.method, s.target, []byte(s.body), false, "")
		if s.method == "POST" {
			f.Add(s.method, s.target, []byte(s.body), true, "k-"+s.target)
		}
	}
	// Idempotency-Key values on a v2 create and a version-1 command: net/http trims a value's
	// ends (" " is sent empty), 255 and 256 characters, a control character, text that is not
	// ASCII, the draft's structured form.
	for _, key := range []string{" ", "a", strings.Repeat("k", 255), strings.Repeat("k", 256), "a\tb", "a\x7fb", "é",
		"\xff", `"0190a6f0"`, "a, b", "a\x00b"} {
		for _, s := range seeds {
			if s.method == "POST" && (strings.HasSuffix(s.target, "/users-comments") || strings.HasSuffix(s.target, "/register-lax")) {
				f.Add(s.method, s.target, []byte(s.body), true, key)
			}
		}
	}
	f.Fuzz(func(t *testing.T, method, target string, body []byte, authed bool, key string) {
		for _, srv := range servers {
			bearer := ""
			if authed {
				bearer = srv.token
			}
			fill := strings.NewReplacer("{p}", srv.partition, "{user}", srv.user, "{org}", srv.org)
			req := rawRequest{method: method, target: fill.Replace(target), body: fill.Replace(string(body)), bearer: bearer, key: key}
			rec := req.serve(srv.h)
			if rec == nil {
				return // net/http refuses the request itself
			}
			answered(t, srv.name, req, rec)
			if key == "" {
				continue
			}
			retry := req.serve(srv.h)
			answered(t, srv.name, req, retry)
			if retry.Header().Get("Idempotent-Replayed") == "true" && (rec.Code >= 300 || retry.Code != rec.Code || retry.Body.String() != rec.Body.String()) {
				t.Fatalf("%s: %s %s %q key %q: the retry replays %d %s, the first answer was %d %s", srv.name, method, target, body, key, retry.Code, retry.Body, rec.Code, rec.Body)
			}
		}
	})
}

// answered checks an answer to req: below 500, and a problem document whose Status is the
// response's when it is a 4xx (a HEAD's has no body).
func answered(t *testing.T, store string, req rawRequest, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s: %s %s %q key %q: %d %s", store, req.method, req.target, req.body, req.key, rec.Code, rec.Body)
	}
	if rec.Code < 400 || req.method == "HEAD" {
		return
	}
	ct, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	var doc struct {
		Status int
		Title  string
	}
	if ct != "application/problem+json" || json.Unmarshal(rec.Body.Bytes(), &doc) != nil || doc.Status != rec.Code || doc.Title == "" {
		t.Fatalf("%s: %s %s %q key %q: %d %s %s, not a problem document", store, req.method, req.target, req.body, req.key, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// fuzzServer is FuzzHTTP's server on one store, with an operator's token and who it is.
type fuzzServer struct {
	name, partition, token, org, user string
	h                                 http.Handler
}

// newFuzzServer wires a server as credo serve does on b, in a fresh partition, with an
// operator and a bearer token of the operator's. Its log goes to log at debug level, or, when
// log is nil, only its errors to standard error.
func newFuzzServer(f testing.TB, b testenv.Backend, log io.Writer) fuzzServer {
	url, p := b.URL, "e01"
	if b.Name == "postgres" {
		p = testenv.Partition(f)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"secret", "create", "--database", url, "--partition", p, "--operator", "--email", "fuzz@example.com", "--json"},
		strings.NewReader(""), &out, &errb); code != 0 {
		f.Fatalf("secret create: %d %s", code, errb.String())
	}
	var secret struct{ Secret, OrganizationIdentifier, UserIdentifier string }
	if err := json.Unmarshal(out.Bytes(), &secret); err != nil {
		f.Fatal(err)
	}
	cfg := newConfig()
	cfg.Database, cfg.partitions = url, p
	if err := cfg.finish(); err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	reg, db, err := cfg.open(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	// Failures only: an access line per input would be most of the fuzzer's work.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if log != nil {
		logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv := &handlers.Server{Registry: reg, Database: db, Observer: observe.New(observe.Options{Logger: logger})}
	if err := wire(ctx, cfg, srv); err != nil {
		f.Fatal(err)
	}
	h, err := srv.Handler()
	if err != nil {
		f.Fatal(err)
	}
	rec := rawRequest{method: "POST", target: "/v2/" + p + "/security/tokens/generate", body: fmt.Sprintf(`{"Secret":%q,"Lifetime":31536000}`, secret.Secret)}.serve(h)
	var tok struct{ AccessToken string }
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		f.Fatalf("generate a token: %d %s", rec.Code, rec.Body)
	}

	return fuzzServer{name: b.Name, partition: p, token: tok.AccessToken, org: secret.OrganizationIdentifier, user: secret.UserIdentifier, h: h}
}

// rawRequest is a request as FuzzHTTP sends it: an operator's bearer token and an
// Idempotency-Key when not "".
type rawRequest struct{ method, target, body, bearer, key string }

// serve writes the request as a client would send it, reads it back as net/http's server does
// (nil when that refuses it) and serves it with h.
func (q rawRequest) serve(h http.Handler) *httptest.ResponseRecorder {
	method, target, body := q.method, q.target, q.body
	var raw strings.Builder
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: credo.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, target, len(body))
	if q.bearer != "" {
		fmt.Fprintf(&raw, "Authorization: Bearer %s\r\n", q.bearer)
	}
	if q.key != "" {
		fmt.Fprintf(&raw, "Idempotency-Key: %s\r\n", q.key)
	}
	raw.WriteString("\r\n" + body)
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw.String())))
	if err != nil || !strings.HasPrefix(req.URL.Path, "/") && req.Method != "OPTIONS" {
		return nil
	}
	req.RemoteAddr = "127.0.0.1:40000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
