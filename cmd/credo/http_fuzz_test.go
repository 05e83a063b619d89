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
// operator's bearer token — to the server as credo serve wires it (v2, its modules and version
// 1). A request that net/http itself reads is answered below 500, and every 4xx
// answer is a problem document (decisions §3) whose Status is the response's.
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
		f.Add(s.method, s.target, []byte(s.body), true)
		f.Add(s.method, s.target, []byte(s.body), false)
	}
	f.Fuzz(func(t *testing.T, method, target string, body []byte, authed bool) {
		for _, srv := range servers {
			bearer := ""
			if authed {
				bearer = srv.token
			}
			fill := strings.NewReplacer("{p}", srv.partition, "{user}", srv.user, "{org}", srv.org)
			rec := serveRaw(srv.h, method, fill.Replace(target), fill.Replace(string(body)), bearer)
			if rec == nil {
				return // net/http refuses the request itself
			}
			if rec.Code >= 500 {
				t.Fatalf("%s: %s %s %q: %d %s", srv.name, method, target, body, rec.Code, rec.Body)
			}
			if rec.Code < 400 || method == "HEAD" {
				continue
			}
			ct, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
			var doc struct {
				Status int
				Title  string
			}
			if ct != "application/problem+json" || json.Unmarshal(rec.Body.Bytes(), &doc) != nil || doc.Status != rec.Code || doc.Title == "" {
				t.Fatalf("%s: %s %s %q: %d %s %s, not a problem document", srv.name, method, target, body, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
		}
	})
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
	rec := serveRaw(h, "POST", "/v2/"+p+"/security/tokens/generate", fmt.Sprintf(`{"Secret":%q,"Lifetime":31536000}`, secret.Secret), "")
	var tok struct{ AccessToken string }
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		f.Fatalf("generate a token: %d %s", rec.Code, rec.Body)
	}

	return fuzzServer{name: b.Name, partition: p, token: tok.AccessToken, org: secret.OrganizationIdentifier, user: secret.UserIdentifier, h: h}
}

// serveRaw writes a request as a client would send it, reads it back as net/http's server does
// (nil when that refuses it) and serves it with h.
func serveRaw(h http.Handler, method, target, body, bearer string) *httptest.ResponseRecorder {
	var raw strings.Builder
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: credo.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, target, len(body))
	if bearer != "" {
		fmt.Fprintf(&raw, "Authorization: Bearer %s\r\n", bearer)
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
