package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/observe"
	"credo/handlers/security"
	"credo/internal/testauth"
	"credo/internal/testenv"
	"credo/resources"
)

// The request path through the router and the verb handlers, in process (httptest, no
// network), for the verbs of the harness's cases. Run with
//
//	go test -run '^$' -bench . -benchmem ./handlers/
//
// (CREDO_TEST_POSTGRES adds the PostgreSQL cases). They never run in the normal test suite.
// Authentication is off in all but W1-get-token, a get with an operator's bearer token through
// the security module as cmd/credo wires it (what the harness sends).

const (
	benchRows  = 10_000
	benchUsers = 100
)

type benchEnv struct {
	h         http.Handler
	partition string
	ids       []string
	pairs     [][2]string
	reg       *engine.Registry
	db        *engine.Database
	obs       *observe.Observer
}

// newBenchEnv serves a fresh partition of backend holding benchRows comments.
func newBenchEnv(b *testing.B, be testenv.Backend) *benchEnv {
	b.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		b.Fatal(err)
	}
	p := testenv.Partition(b)
	db, err := engine.Open(context.Background(), be.URL, []string{p}, reg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	c := testenv.SeedComments(b, s, benchRows, benchUsers)
	// The access lines are formatted as in production (cmd/credo's serve) and thrown away, so
	// that the benchmark counts the observer's cost without writing to the terminal.
	obs := observe.New(observe.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Access: &observe.AccessOutput{W: io.Discard}})
	srv := &handlers.Server{Registry: reg, Database: db, Observer: obs, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}
	h, err := srv.Handler()
	if err != nil {
		b.Fatal(err)
	}
	return &benchEnv{h: h, partition: p, ids: c.IDs, pairs: c.Pairs, reg: reg, db: db, obs: obs}
}

// secured returns a handler of the same partition that authenticates and authorizes with the
// security module, as cmd/credo's serve does, and a bearer token of an operator for it, made
// as the harness makes it (a client secret, then security/tokens/generate).
func (e *benchEnv) secured(b *testing.B) (http.Handler, string) {
	b.Helper()
	ctx := context.Background()
	sec, err := security.New(ctx, e.db, security.Config{SigningKey: []byte("credo request benchmark: a signing key of 32+ bytes")})
	if err != nil {
		b.Fatal(err)
	}
	srv := &handlers.Server{Registry: e.reg, Database: e.db, Observer: e.obs, Continuation: sec}
	srv.Auth, srv.Authz = sec.Authenticator(), sec.Authorizer()
	srv.Modules = sec.Routes(srv.Endpoints)
	h, err := srv.Handler()
	if err != nil {
		b.Fatal(err)
	}
	st, _ := e.db.Store(e.partition)
	res, err := security.CreateSecret(ctx, st, security.SecretOptions{Email: "bench@example.com", Operator: true})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v2/"+e.partition+"/security/tokens/generate",
		strings.NewReader(fmt.Sprintf(`{"Secret":%q,"Lifetime":3600}`, res.Secret)))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var tok struct{ AccessToken string }
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &tok) != nil || tok.AccessToken == "" {
		b.Fatalf("tokens/generate answered %d: %s", w.Code, w.Body)
	}
	return h, tok.AccessToken
}

// serve runs one request through the handler and checks its status.
func (e *benchEnv) serve(b *testing.B, method, target string, body []byte, want int) {
	serve(b, e.h, method, target, body, want)
}

// serve runs one request through h and checks its status; header adds header fields, name
// then value.
func serve(b *testing.B, h http.Handler, method, target string, body []byte, want int, header ...string) {
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("%s %s: %d, want %d: %s", method, target, w.Code, want, w.Body)
	}
}

// BenchmarkRequest runs W1–W4 of the harness through the router: get by id, list with two
// filters sorted by a datetime, count for an organization, create; and "route", a request
// that the router dispatches and the handler refuses before the database (the cost of routing
// and writing a problem document).
func BenchmarkRequest(b *testing.B) {
	defer handlers.PoisonReleased(handlers.PoisonReleased(false))
	for _, be := range testenv.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			e := newBenchEnv(b, be)
			base := "/v2/" + e.partition + "/security/users-comments"
			rng := rand.New(rand.NewPCG(3, 4))
			b.Run("route", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.serve(b, "GET", base+"/not-a-uuid", nil, http.StatusNotFound)
				}
			})
			b.Run("W1-get", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.serve(b, "GET", base+"/"+e.ids[rng.IntN(len(e.ids))], nil, http.StatusOK)
				}
			})
			b.Run("W1-get-token", func(b *testing.B) {
				h, tok := e.secured(b)
				b.ReportAllocs()
				for b.Loop() {
					serve(b, h, "GET", base+"/"+e.ids[rng.IntN(len(e.ids))], nil, http.StatusOK, "Authorization", "Bearer "+tok)
				}
			})
			b.Run("W2-list", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					pair := e.pairs[rng.IntN(len(e.pairs))]
					e.serve(b, "GET", base+"?OrganizationIdentifier="+pair[0]+"&UserIdentifier="+pair[1]+"&Take=20&Sort="+url.QueryEscape("CommentCreated desc"), nil, http.StatusOK)
				}
			})
			b.Run("W3-count", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.serve(b, "GET", base+"/count?OrganizationIdentifier="+e.pairs[rng.IntN(len(e.pairs))][0], nil, http.StatusOK)
				}
			})
			b.Run("W4-create", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					pair := e.pairs[rng.IntN(len(e.pairs))]
					body := fmt.Appendf(nil, `{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"bench create"}`, pair[1], pair[0], pair[1])
					e.serve(b, "POST", base, body, http.StatusCreated)
				}
			})
		})
	}
}
