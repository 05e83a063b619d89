package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/idempotency"
	"credo/handlers/observe"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
	"credo/resources"
)

var (
	registryOnce sync.Once
	registry     *engine.Registry
	registryErr  error
)

func loadRegistry(t *testing.T) *engine.Registry {
	t.Helper()
	registryOnce.Do(func() { registry, registryErr = engine.Load(resources.FS) })
	if registryErr != nil {
		t.Fatal(registryErr)
	}
	return registry
}

// defaultUser is the caller of requests without X-Test-User.
const defaultUser = "0190a6f0-0000-7000-8000-0000000000ff"

// callers authenticates each request as the operator X-Test-User names (defaultUser when
// none), so that a test can send one key as two callers.
type callers struct{}

func (callers) Authenticate(r *http.Request, partition string) (*auth.Principal, error) {
	user := r.Header.Get("X-Test-User")
	if user == "" {
		user = defaultUser
	}
	return &auth.Principal{UserIdentifier: user, Operator: true, Partition: partition}, nil
}

// createOnlyUser is a caller that may create records and not read them (readers).
const createOnlyUser = "0190a6f0-0000-7000-8000-0000000000c0"

// readers permits everything, except Read to createOnlyUser: permissions are per operation
// (docs/security.md), and a caller may hold Create on a group without Read.
type readers struct{ testauth.AllowAll }

func (readers) Allow(_ context.Context, p *auth.Principal, object, need string) error {
	if p.UserIdentifier == createOnlyUser && need == "Read" {
		return fmt.Errorf("%w: the Read permission on %q is not granted to the caller", auth.ErrForbidden, object)
	}
	return nil
}

// server is the v2 API on a fresh partition of one database, behind the OpenAPI validator,
// with its keeper on a test clock.
type server struct {
	*httptest.Server
	partition string
	store     *engine.Store
	db        *engine.Database
	keeper    *idempotency.Keeper
	clock     *idempotency.Clock
	metrics   *prometheus.Registry
	// stop makes the keeper abandon each request after its work (idempotency.Config.Stop),
	// as a process killed then would.
	stop *atomic.Bool
}

// serve runs the v2 API of reg on db with keeper k and authorizer authz, behind the OpenAPI
// validator, and returns it with its metrics.
func serve(t *testing.T, reg *engine.Registry, db *engine.Database, authz handlers.Authorizer, k *idempotency.Keeper) (*httptest.Server, *prometheus.Registry) {
	t.Helper()
	metrics := prometheus.NewRegistry()
	srv := &handlers.Server{Registry: reg, Database: db, Auth: callers{}, Authz: authz, Idempotency: k,
		Observer: observe.New(observe.Options{Registerer: metrics, Logger: slog.New(slog.DiscardHandler)})}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(openapitest.New(t, srv.OpenAPI()).Handler(h))
	t.Cleanup(ts.Close)
	return ts, metrics
}

func newServer(t *testing.T, b testenv.Backend) *server {
	t.Helper()
	reg := loadRegistry(t)
	db, st := idempotency.OpenPartition(t, b, reg)
	c, stop := idempotency.NewClock(), new(atomic.Bool)
	k, err := idempotency.New(reg, idempotency.Config{Now: c.Now, Stop: func(*http.Request) bool { return stop.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	ts, metrics := serve(t, reg, db, readers{}, k)
	return &server{Server: ts, partition: st.Partition, store: st, db: db, keeper: k, clock: c, metrics: metrics, stop: stop}
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

// post sends a JSON body to path (under the partition) with header pairs; a pair whose name
// repeats adds a second value.
func (s *server) post(t *testing.T, path, body string, header ...string) answer {
	t.Helper()
	a, err := s.send(path, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// send is post for goroutines: it returns its error.
func (s *server) send(path, body string, header ...string) (answer, error) {
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v2/"+s.partition+"/"+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	res, err := s.Client().Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}, nil
}

// count returns how many records of a group the partition holds.
func (s *server) count(t *testing.T, name string) int64 {
	t.Helper()
	r := loadRegistry(t).MustByName(name)
	n, err := s.store.Count(context.Background(), r, engine.Query{}, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sameAnswer fails unless b is a's answer replayed: the same status, body and kept headers,
// marked Idempotent-Replayed.
func sameAnswer(t *testing.T, what string, first, again answer) {
	t.Helper()
	if again.status != first.status || again.body != first.body {
		t.Fatalf("%s: %d %s, want the first answer %d %s", what, again.status, again.body, first.status, first.body)
	}
	for _, h := range []string{"Location", "Content-Type"} {
		if again.header.Get(h) != first.header.Get(h) {
			t.Errorf("%s: %s %q, first %q", what, h, again.header.Get(h), first.header.Get(h))
		}
	}
	if first.header.Get(idempotency.ReplayedHeader) != "" {
		t.Errorf("%s: the first answer is marked %s", what, idempotency.ReplayedHeader)
	}
	if again.header.Get(idempotency.ReplayedHeader) != "true" {
		t.Errorf("%s: the replay is not marked %s: %v", what, idempotency.ReplayedHeader, again.header)
	}
}

// counted returns credo_idempotency_requests_total per outcome.
func (s *server) counted(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := s.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != observe.MetricIdempotency {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// get reads the absolute path loc (a Location) as the default caller.
func (s *server) get(t *testing.T, loc string) answer {
	t.Helper()
	res, err := s.Client().Get(s.URL + loc)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}
