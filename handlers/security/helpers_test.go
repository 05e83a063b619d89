package security_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/compliance"
	"credo/handlers/gradebook"
	"credo/handlers/limit"
	"credo/handlers/observe"
	"credo/handlers/people"
	"credo/handlers/platform"
	"credo/handlers/route"
	"credo/handlers/security"
	"credo/internal/openapitest"
	"credo/internal/testenv"
	"credo/legacy"
	"credo/resources"
)

// testKey is the configured signing key of the tests (CREDO_SIGNING_KEY); forged tokens are
// signed with the partition key derived from it.
var testKey = []byte("credo security tests: a signing key of 32+ bytes")

// clock is the settable clock of a test server; it starts at the real time so that records
// stamped by the database's own clock agree with it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a test server over two partitions of one backend with the security module.
type env struct {
	reg   *engine.Registry
	db    *engine.Database
	clock *clock
	cfg   security.Config
	sec   *security.Security
	srv   *handlers.Server
	ts    *httptest.Server
	// handler is ts's handler without the OpenAPI validator (see unvalidated).
	handler    http.Handler
	partition  string // the partition requests go to
	other      string // a second partition of the same database
	store      *engine.Store
	otherStore *engine.Store
	// log receives every server's log (JSON, debug level); metrics their metrics.
	log     *syncBuffer
	metrics *prometheus.Registry
	obs     *observe.Observer
}

// syncBuffer is a log destination shared by the servers' goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type option func(*security.Config)

func withStoredKeys(c *security.Config) { c.SigningKey = nil }

// withLimits replaces the default abuse limits (limit.NewSet's spec and trusted proxies).
func withLimits(spec, proxies string) option {
	return func(c *security.Config) {
		s, err := limit.NewSet(spec, proxies, c.Now)
		if err != nil {
			panic(err)
		}
		c.Limits = s
	}
}
func withEncryptedCookies(c *security.Config) {
	c.CookieEncryptionKey = []byte("0123456789abcdef0123456789abcdef")
}

func newEnv(t *testing.T, b testenv.Backend, opts ...option) *env {
	t.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{reg: reg, partition: testenv.Partition(t), other: testenv.Partition(t), clock: &clock{now: time.Now().UTC()},
		log: &syncBuffer{}, metrics: prometheus.NewRegistry()}
	e.obs = observe.New(observe.Options{Registerer: e.metrics,
		Logger: slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.db, err = engine.Open(context.Background(), b.URL, []string{e.partition, e.other}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	e.store, _ = e.db.Store(e.partition)
	e.otherStore, _ = e.db.Store(e.other)
	e.cfg = security.Config{SigningKey: testKey, Now: e.clock.Now}
	for _, o := range opts {
		o(&e.cfg)
	}
	e.sec, e.srv, e.handler = e.build(t)
	e.ts = httptest.NewServer(openapitest.New(t, e.srv.OpenAPI()).Handler(e.handler))
	t.Cleanup(e.ts.Close)
	return e
}

// serve starts another server (another "process") over the env's database.
func (e *env) serve(t *testing.T) (*security.Security, *handlers.Server, *httptest.Server) {
	t.Helper()
	sec, srv, h := e.build(t)
	ts := httptest.NewServer(openapitest.New(t, srv.OpenAPI()).Handler(h))
	t.Cleanup(ts.Close)
	return sec, srv, ts
}

// unvalidated serves the env's server without the OpenAPI validator, for requests that no
// client following the document sends (a body echoing read-only members back), which the
// validator would fail however the server answers them.
func (e *env) unvalidated(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(e.handler)
	t.Cleanup(ts.Close)
	return ts
}

// build makes a server over the env's database: its security module, router and handler.
func (e *env) build(t *testing.T) (*security.Security, *handlers.Server, http.Handler) {
	t.Helper()
	sec, err := security.New(context.Background(), e.db, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &handlers.Server{Registry: e.reg, Database: e.db, Auth: sec.Authenticator(), Authz: sec.Authorizer(), Observer: e.obs}
	srv.Modules = append(moduleRoutes(t, e.cfg.Limits), sec.Routes(srv.Endpoints)...)
	srv.Mounted = legacy.Describe()
	srv.Root = func(r *mux.Router) error {
		return legacy.Routes(r, legacy.Deps{Store: e.store, Authenticate: sec.LegacyAuthenticator(e.partition), Authz: srv.Authz,
			Now: e.clock.Now, Limits: e.cfg.Limits})
	}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	return sec, srv, h
}

// moduleRoutes are the other modules' routes, which the suites guard like the generated ones.
func moduleRoutes(t *testing.T, limits *limit.Set) []route.Route {
	var out []route.Route
	out = append(out, platform.Routes(platform.Config{Version: "v25.2.0"})...)
	out = append(out, compliance.Routes()...)
	out = append(out, people.Routes()...)
	gcfg := gradebook.Config{}
	if limits != nil {
		gcfg.Limit = limits.Export
	}
	return append(out, gradebook.Routes(gcfg)...)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request to a path of the env's partition; header alternates names and values.
func (e *env) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	return e.doAt(t, e.ts, e.partition, method, path, body, header...)
}

func (e *env) doAt(t *testing.T, ts *httptest.Server, partition, method, path, body string, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	target := ts.URL + "/v2/" + partition + "/" + path
	if strings.HasPrefix(path, "/") {
		target = ts.URL + path // version 1 (/api/…) and other absolute paths
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (r response) expect(t *testing.T, what string, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
	return r
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// detail returns a problem document's Detail.
func (r response) detail(t *testing.T) string {
	t.Helper()
	var p struct{ Detail string }
	r.json(t, &p)
	return p.Detail
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// secret creates a client secret in the env's partition.
func (e *env) secret(t *testing.T, opts security.SecretOptions) security.SecretResult {
	t.Helper()
	return secretIn(t, e.store, opts)
}

func secretIn(t *testing.T, st *engine.Store, opts security.SecretOptions) security.SecretResult {
	t.Helper()
	res, err := security.CreateSecret(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// token generates an access token with a secret through tokens/generate.
func (e *env) token(t *testing.T, secret string) string {
	t.Helper()
	return e.tokenAt(t, e.ts, e.partition, secret)
}

func (e *env) tokenAt(t *testing.T, ts *httptest.Server, partition, secret string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"Secret": secret})
	var out struct{ AccessToken string }
	e.doAt(t, ts, partition, "POST", "security/tokens/generate", string(body)).expect(t, "generate", http.StatusOK).json(t, &out)
	return out.AccessToken
}

// user creates a non-operator (or operator) user with a secret in an organization and
// returns its secret result and a token.
func (e *env) user(t *testing.T, org string, operator bool) (security.SecretResult, string) {
	t.Helper()
	res := e.secret(t, security.SecretOptions{Email: uuid.NewString()[:8] + "@example.com", Organization: org, Operator: operator})
	return res, e.token(t, res.Secret)
}

// create stores a record through the engine (as credo load does) and returns its members.
func (e *env) create(t *testing.T, name string, members map[string]any) map[string]any {
	t.Helper()
	r := e.reg.MustByName(name)
	body, _ := json.Marshal(members)
	rec, err := testenv.CreateJSON(context.Background(), e.store, r, body, engine.AllOrganizations())
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// group creates a group in an organization and returns its identifier.
func (e *env) group(t *testing.T, org, name string) string {
	t.Helper()
	g := e.create(t, "Group", map[string]any{"OrganizationIdentifier": org, "GroupName": name})
	return g["GroupIdentifier"].(string)
}

// member puts a user in a group from an hour ago, without expiry.
func (e *env) member(t *testing.T, user, group, org string) {
	t.Helper()
	e.create(t, "Membership", map[string]any{
		"UserIdentifier": user, "GroupIdentifier": group, "OrganizationIdentifier": org,
		"MembershipEffective": e.clock.Now().Add(-time.Hour).Format(time.RFC3339),
	})
}

// grant gives a group the flags on every object.
func (e *env) grant(t *testing.T, group string, objects []string, flags ...auth.Flag) {
	t.Helper()
	for _, o := range objects {
		m := map[string]any{"GroupIdentifier": group, "ObjectIdentifier": auth.ObjectID(o).String(), "ObjectType": "Resource"}
		for _, f := range flags {
			m["Allow"+string(f)] = true
		}
		e.create(t, "Permission", m)
	}
}

// revokeGrants removes every permission of a group.
func (e *env) revokeGrants(t *testing.T, group string) {
	t.Helper()
	if _, err := e.store.DeleteWhere(context.Background(), e.reg.MustByName("Permission"), "GroupIdentifier", group); err != nil {
		t.Fatal(err)
	}
}

// objects lists the permission objects of the protected endpoints.
func objects(eps []handlers.Endpoint) []string {
	seen := map[string]bool{}
	var out []string
	for _, ep := range eps {
		if ep.Access == route.Protected && !seen[ep.Object] {
			seen[ep.Object] = true
			out = append(out, ep.Object)
		}
	}
	return out
}

var pathVar = regexp.MustCompile(`\{[^}]+\}`)

// concrete fills an endpoint's path variables with fresh UUIDs.
func concrete(path string) string {
	return pathVar.ReplaceAllStringFunc(path, func(string) string { return uuid.NewString() })
}

func epName(ep handlers.Endpoint) string { return fmt.Sprintf("%s %s", ep.Method, ep.Path) }

func newOrg(t *testing.T, e *env) string {
	t.Helper()
	o := e.create(t, "Organization", map[string]any{"OrganizationName": "Org " + uuid.NewString()[:6]})
	return o["OrganizationIdentifier"].(string)
}

// decodeSegment decodes one base64url segment of a JWT.
func decodeSegment(seg string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(seg) }

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// authFailures sums credo_auth_failures_total of the env's servers by its credential label.
func (e *env) authFailures(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for labels, n := range e.authFailureSeries(t) {
		out[labels.credential] += n
	}
	return out
}

// authFailuresBy returns credo_auth_failures_total of the env's servers for a reason and a kind
// of credential.
func (e *env) authFailuresBy(t *testing.T, reason, credential string) float64 {
	t.Helper()
	return e.authFailureSeries(t)[failureLabels{reason: reason, credential: credential}]
}

// failureLabels are the labels of a credo_auth_failures_total series.
type failureLabels struct{ reason, credential string }

// authFailureSeries returns credo_auth_failures_total of the env's servers by its labels.
func (e *env) authFailureSeries(t *testing.T) map[failureLabels]float64 {
	t.Helper()
	families, err := e.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[failureLabels]float64{}
	for _, f := range families {
		if f.GetName() != observe.MetricAuthFailures {
			continue
		}
		for _, m := range f.GetMetric() {
			var l failureLabels
			for _, p := range m.GetLabel() {
				switch p.GetName() {
				case "reason":
					l.reason = p.GetValue()
				case "credential":
					l.credential = p.GetValue()
				}
			}
			out[l] += m.GetCounter().GetValue()
		}
	}
	return out
}
