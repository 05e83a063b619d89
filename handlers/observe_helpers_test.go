package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/observe"
	"credo/handlers/platform"
	"credo/handlers/route"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// syncBuffer is a log destination shared by the server's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// records parses the JSON log lines.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// lines returns the log records with a message (and, when id is not empty, a request id).
func (s *syncBuffer) lines(t *testing.T, msg, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range s.records(t) {
		if m["msg"] == msg && (id == "" || m["request_id"] == id) {
			out = append(out, m)
		}
	}
	return out
}

// waitLine waits for the access line of a request, which is written after the response.
func (s *syncBuffer) waitLine(t *testing.T, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ls := s.lines(t, "request", id); len(ls) > 0 {
			if len(ls) > 1 {
				t.Fatalf("request %s has %d access lines", id, len(ls))
			}
			return ls[0]
		}
	}
	t.Fatalf("no access line for request %s in\n%s", id, s.String())
	return nil
}

// testAuth accepts "Bearer good" as an operator and refuses an expired token by reason.
type testAuth struct{}

func (testAuth) Authenticate(r *http.Request, partition string) (*auth.Principal, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer good":
		return &auth.Principal{UserIdentifier: "0190a6f0-0000-7000-8000-0000000000aa", Partition: partition, Operator: true}, nil
	case "":
		return nil, auth.Unauthenticated(auth.ReasonMissing, "no credential")
	}
	return nil, auth.Unauthenticated(auth.ReasonExpired, "token expired")
}

// observed is a server with an observer logging JSON at debug level and its metrics.
type observed struct {
	*httptest.Server
	srv       *handlers.Server
	db        *engine.Database
	store     *engine.Store
	partition string
	log       *syncBuffer
	errorLog  *syncBuffer // net/http's own error lines
	metrics   *prometheus.Registry
	started   chan struct{} // test/wait has begun
}

// corsOrigin is the origin the observed server allows.
const corsOrigin = "https://app.example.com"

// errUnavailable is the error the engine returns when the database does not answer.
var errUnavailable = fmt.Errorf("engine: get users: %w: dial tcp 127.0.0.1:5432: connect: connection refused", engine.ErrUnavailable)

func newObserved(t *testing.T, url string) *observed {
	t.Helper()
	return newObservedWithin(t, url, engine.Limits{})
}

// newObservedWithin is newObserved with the database's limits (its timeout).
func newObservedWithin(t *testing.T, url string, limits engine.Limits) *observed {
	t.Helper()
	reg := registry(t)
	p := testenv.Partition(t)
	db, err := limits.Open(context.Background(), url, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	o := &observed{db: db, partition: p, log: &syncBuffer{}, errorLog: &syncBuffer{}, metrics: prometheus.NewRegistry(),
		started: make(chan struct{}, 1)}
	o.store, _ = db.Store(p)
	t.Cleanup(func() {
		if db.Dialect == engine.Postgres {
			o.store.DB(context.Background()).Exec(`DROP SCHEMA IF EXISTS "` + p + `" CASCADE`)
		}
		db.Close()
	})
	o.metrics.MustRegister(observe.NewPoolCollector(db.Stats))
	logger := slog.New(slog.NewJSONHandler(o.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	panics := func(w http.ResponseWriter, r *http.Request) error { panic("test: a bug") }
	// The test routes are described like real ones, so that the OpenAPI validator checks
	// their answers too.
	public := func(path string, h problem, errs ...int) route.Route {
		return route.Route{Method: http.MethodGet, Path: path, Access: route.Public, Tag: "platform",
			Summary: "A test route.", Errors: errs, Handler: h}
	}
	text := []route.Response{{Status: http.StatusOK, Description: "Text.",
		Content: []route.Content{{MediaType: "text/plain", Schema: route.String("")}}}}
	lateError := public("test/late-error", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("partial"))
		return errors.New("test: late failure")
	})
	lateError.Responses = text
	o.srv = &handlers.Server{Registry: reg, Database: db, Auth: testAuth{}, Authz: testauth.AllowAll{}, CORSOrigins: []string{corsOrigin},
		Observer: observe.New(observe.Options{Logger: logger, Registerer: o.metrics}),
		Modules: append(platform.Routes(platform.Config{}),
			public("test/panic", panics),
			lateError,
			public("test/wait", func(w http.ResponseWriter, r *http.Request) error {
				o.started <- struct{}{}
				<-r.Context().Done()
				return fmt.Errorf("test: query: %w", errors.New("conn closed"))
			}),
			public("test/unavailable", func(w http.ResponseWriter, r *http.Request) error { return errUnavailable }, http.StatusServiceUnavailable),
			public("test/fail", func(w http.ResponseWriter, r *http.Request) error { return errors.New("test: boom") }),
		),
		Mounted: []route.Route{
			{Method: http.MethodGet, Path: "/api/test/panic", Access: route.Public, Tag: "events", Summary: "A test route."},
			{Method: http.MethodGet, Path: "/api/test/{id}", Access: route.Public, Tag: "events", Summary: "A test route.",
				Params:    []route.Param{{Name: "id", In: route.InPath, Schema: route.Schema{Type: "string", Pattern: "^[0-9a-f]{8}$"}}},
				Responses: text},
		},
		Root: func(r *mux.Router) error {
			r.HandleFunc("/api/test/panic", func(w http.ResponseWriter, r *http.Request) { panic("test: a v1 bug") })
			r.HandleFunc("/api/test/{id:[0-9a-f]{8}}", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Write([]byte("v1"))
			})
			return nil
		},
	}
	h, err := o.srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	v := openapitest.New(t, o.srv.OpenAPI()).Outside(handlers.LivezPath, handlers.ReadyzPath)
	o.Server = httptest.NewUnstartedServer(v.Handler(h))
	o.Config.ErrorLog = slog.NewLogLogger(slog.NewTextHandler(o.errorLog, nil), slog.LevelWarn)
	o.Start()
	t.Cleanup(o.Close)
	return o
}

type problem = func(w http.ResponseWriter, r *http.Request) error

// get sends a GET with headers (names and values alternating) to a path of the server.
func (o *observed) get(t *testing.T, path string, header ...string) response {
	t.Helper()
	return o.send(t, http.MethodGet, path, header...)
}

func (o *observed) send(t *testing.T, method, path string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, o.URL+strings.ReplaceAll(path, "{p}", o.partition), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := o.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b.Bytes()}
}

// scrape returns the metrics in the Prometheus text format, as the admin listener serves them.
func (o *observed) scrape(t *testing.T) string {
	t.Helper()
	w := httptest.NewRecorder()
	observe.AdminHandler(o.metrics).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", w.Code, w.Body)
	}
	return w.Body.String()
}

// user stores a user and returns its identifier.
func (o *observed) user(t *testing.T) string {
	t.Helper()
	users := o.store.Registry().MustByName("User")
	rec, err := testenv.CreateJSON(context.Background(), o.store, users, []byte(`{"Email":"a@example.com","FullName":"A"}`), engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rec.Get(users, "UserIdentifier"))
}

// scrapePath serves one GET of the admin handler.
func (o *observed) scrapePath(t *testing.T, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	observe.AdminHandler(o.metrics).ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Body.String()
}
