package gradebook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/gradebook"
	"credo/handlers/limit"
	"credo/internal/openapitest"
	"credo/internal/testenv"
	"credo/resources"
)

const (
	orgA  = "0190a6f0-0000-7000-8000-00000000000a"
	orgB  = "0190a6f0-0000-7000-8000-00000000000b"
	userA = "0190a6f0-0000-7000-8000-0000000000a1"
	userB = "0190a6f0-0000-7000-8000-0000000000b1"
	userO = "0190a6f0-0000-7000-8000-0000000000f1"
)

var (
	callerA  = &auth.Principal{UserIdentifier: userA, OrganizationIdentifier: orgA}
	callerB  = &auth.Principal{UserIdentifier: userB, OrganizationIdentifier: orgB}
	operator = &auth.Principal{UserIdentifier: userO, OrganizationIdentifier: orgB, Operator: true}
)

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// env is one backend's partitions with the gradebook routes mounted as the router mounts them.
type env struct {
	url    string
	parts  []string
	stores map[string]*engine.Store
	st     *engine.Store // the first partition
	cfg    gradebook.Config
	clock  *clock
	router *mux.Router
	// api validates every exchange against the OpenAPI document.
	api *openapitest.Validator
}

var registry = sync.OnceValues(func() (*engine.Registry, error) { return engine.Load(resources.FS) })

// eachBackend runs fn on fresh partitions (two) of every backend.
func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			parts := []string{testenv.Partition(t), testenv.Partition(t)}
			clk := &clock{t: time.Date(2024, 3, 10, 14, 7, 30, 0, time.UTC)}
			fn(t, openEnv(t, b.URL, parts, clk))
		})
	}
}

// openEnv opens the partitions at url with a pool and routes of their own, as one credo
// process would; two envs on one url are two processes sharing the database.
func openEnv(t *testing.T, url string, parts []string, clk *clock) *env {
	t.Helper()
	reg, err := registry()
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(context.Background(), url, parts, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{stores: map[string]*engine.Store{}, url: url, parts: parts, clock: clk}
	for _, p := range parts {
		e.stores[p], _ = db.Store(p)
	}
	e.st = e.stores[parts[0]]
	// No export limit here: the security suite tests it, and these tests export at will.
	e.cfg = gradebook.Config{Now: e.clock.Now, Limit: limit.New("exports", limit.Rule{}, nil)}
	e.router = mux.NewRouter()
	for _, rt := range gradebook.Routes(e.cfg) {
		e.router.Handle("/v2/{partition}/"+rt.Path, openapitest.Resolved(t, reg, rt)).Methods(rt.Method)
	}
	e.api = openapitest.Of(t, openapitest.Document(reg, gradebook.Routes(e.cfg)...)) // one per test: replicas share it
	return e
}

// replica returns another process on the same database and partitions, with the same clock.
func (e *env) replica(t *testing.T) *env { return openEnv(t, e.url, e.parts, e.clock) }

// stored reports whether the first partition records the export with key, and counts the
// content rows (chunks) the key has there.
func (e *env) stored(t *testing.T, key string) (recorded bool, chunks int64) {
	t.Helper()
	reg, _ := registry()
	files := reg.MustByName("GradebookExportFile")
	recorded, err := e.st.Exists(context.Background(), files, []any{key}, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return recorded, e.chunks(t, key)
}

// chunks counts the content rows of the first partition's exports, of key only unless "".
func (e *env) chunks(t *testing.T, key string) int64 {
	t.Helper()
	table := `"gradebook_export_chunks"`
	if e.st.Dialect() == engine.Postgres {
		table = `"` + e.st.Partition + `".` + table
	}
	q, args := "SELECT count(*) FROM "+table, []any{}
	if key != "" {
		q, args = q+` WHERE "export_key" = ?`, append(args, key)
	}
	var n int64
	if err := e.st.DB(context.Background()).Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// do serves one request as caller in the partition the path names.
func (e *env) do(t *testing.T, caller *auth.Principal, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	var match mux.RouteMatch
	if !e.router.Match(req, &match) {
		t.Fatalf("no route for %s %s", method, target)
	}
	ctx := engine.WithStore(req.Context(), e.stores[match.Vars["partition"]])
	if caller != nil {
		ctx = auth.WithPrincipal(ctx, caller)
	}
	rec := httptest.NewRecorder()
	e.api.Handler(openapitest.Served(e.router)).ServeHTTP(rec, req.WithContext(ctx))
	return rec
}

// export runs an export in the first partition and decodes its answer.
func (e *env) export(t *testing.T, caller *auth.Principal, query string) gradebook.Export {
	t.Helper()
	rec := e.do(t, caller, http.MethodGet, "/v2/"+e.st.Partition+"/progress/gradebooks/export?"+query, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("export %s: %d %s", query, rec.Code, rec.Body)
	}
	var out gradebook.Export
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("export answer %s: %v", rec.Body, err)
	}
	return out
}

// download fetches an export's file and checks its headers.
func (e *env) download(t *testing.T, caller *auth.Principal, x gradebook.Export) string {
	t.Helper()
	rec := e.do(t, caller, http.MethodGet, x.DownloadUrl, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("download %s: %d %s", x.DownloadUrl, rec.Code, rec.Body)
	}
	wantType := map[engine.Format]string{engine.FormatJSON: "application/json; charset=utf-8", engine.FormatCSV: "text/csv; charset=utf-8"}[x.ExportFormat]
	if got := rec.Header().Get("Content-Type"); got != wantType {
		t.Errorf("Content-Type %q, want %q", got, wantType)
	}
	if got, want := rec.Header().Get("Content-Disposition"), "attachment; filename=gradebook."+string(x.ExportFormat); got != want {
		t.Errorf("Content-Disposition %q, want %q", got, want)
	}
	return rec.Body.String()
}

// gradebooks inserts gradebooks (JSON bodies) in one call.
func insertGradebooks(t testing.TB, st *engine.Store, bodies ...string) {
	t.Helper()
	reg, _ := registry()
	r := reg.MustByName("Gradebook")
	drafts := make([]engine.Draft, len(bodies))
	for i, b := range bodies {
		var err error
		if drafts[i], err = r.DecodeDraft([]byte(b)); err != nil {
			t.Fatalf("gradebook %s: %v", b, err)
		}
	}
	if err := st.InsertAll(context.Background(), r, drafts, engine.AllOrganizations()); err != nil {
		t.Fatal(err)
	}
}

func gradebookJSON(id, org, title string) string {
	b, _ := json.Marshal(map[string]any{
		"GradebookIdentifier": id, "OrganizationIdentifier": org, "GradebookTitle": title,
		"GradebookType": "Scores", "IsLocked": false, "GradebookCreated": "2024-01-02T03:04:05-06:00",
	})
	return string(b)
}

func gid(n int) string { return fmt.Sprintf("0190a6f0-0000-7000-9000-%012d", n) }
