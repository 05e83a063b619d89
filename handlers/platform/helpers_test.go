package platform_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/platform"
	"credo/handlers/route"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
	"credo/resources"
)

// openStore opens a fresh partition on the backend at url and removes it when the test ends.
func openStore(t *testing.T, url string) *engine.Store {
	t.Helper()
	_, store := openDatabase(t, url)
	return store
}

// openDatabase is openStore that also returns the database, for mounting on a handlers.Server.
func openDatabase(t *testing.T, url string) (*engine.Database, *engine.Store) {
	t.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatalf("load descriptors: %v", err)
	}
	part := testenv.Partition(t)
	ctx := context.Background()
	db, err := engine.Open(ctx, url, []string{part}, reg)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	store, _ := db.Store(part)
	t.Cleanup(func() {
		if db.Dialect == engine.Postgres {
			if err := store.DB(context.Background()).Exec(`DROP SCHEMA IF EXISTS "` + part + `" CASCADE`).Error; err != nil {
				t.Logf("drop schema %s: %v", part, err)
			}
		}
		_ = db.Close()
	})
	return db, store
}

// call serves one request to the platform route whose path the target starts with, as the router
// would: the store in the context and, when p is not nil, the caller.
func call(t *testing.T, routes []route.Route, store *engine.Store, p *auth.Principal, target string) *httptest.ResponseRecorder {
	t.Helper()
	path, _, _ := strings.Cut(target, "?")
	for _, rt := range routes {
		if rt.Path != path {
			continue
		}
		ctx := engine.WithStore(context.Background(), store)
		if p != nil {
			ctx = auth.WithPrincipal(ctx, p)
		}
		req := httptest.NewRequest(rt.Method, "/v2/"+store.Partition+"/"+target, nil).WithContext(ctx)
		w := httptest.NewRecorder()
		openapitest.Of(t, openapitest.Document(store.Registry(), routes...)).Handler(openapitest.Served(openapitest.Resolved(t, store.Registry(), rt))).ServeHTTP(w, req)
		return w
	}
	t.Fatalf("no platform route %s", path)
	return nil
}

// decode reads a JSON response body into v, failing on unknown members.
func decode(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	dec := json.NewDecoder(w.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
}

func TestRoutesAccess(t *testing.T) {
	want := map[string]route.Route{
		"platform/health":          {Method: http.MethodGet, Access: route.Public},
		"platform/version":         {Method: http.MethodGet, Access: route.Public},
		"platform/formats/time":    {Method: http.MethodGet, Access: route.Public},
		"platform/routes/settings": {Method: http.MethodGet, Access: route.Protected, Object: "platform/actions", Need: "Read"},
	}
	routes := platform.Routes(platform.Config{})
	if len(routes) != len(want) {
		t.Errorf("got %d routes, want %d", len(routes), len(want))
	}
	for _, rt := range routes {
		w, ok := want[rt.Path]
		switch {
		case !ok:
			t.Errorf("unexpected route %s", rt.Path)
		case rt.Method != w.Method || rt.Access != w.Access || rt.Object != w.Object || rt.Need != w.Need:
			t.Errorf("%s: got %s access %d object %q need %q, want %s %d %q %q",
				rt.Path, rt.Method, rt.Access, rt.Object, rt.Need, w.Method, w.Access, w.Object, w.Need)
		case rt.Summary == "" || rt.Handler == nil:
			t.Errorf("%s: summary and handler are required", rt.Path)
		}
	}
}

// TestMountedOnServer checks that the routes mount on the real router: public ones answer
// without a credential, under /v2/{partition}/.
func TestMountedOnServer(t *testing.T) {
	db, store := openDatabase(t, testenv.Backends(t)[0].URL)
	srv := &handlers.Server{Registry: store.Registry(), Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{},
		Modules: platform.Routes(platform.Config{Version: "v25.2"})}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	h = openapitest.New(t, srv.OpenAPI()).Handler(h)
	for target, want := range map[string]int{
		"platform/health":                                  http.StatusOK,
		"platform/version":                                 http.StatusOK,
		"platform/formats/time?value=2024-03-10Z":          http.StatusBadRequest,
		"platform/formats/time?value=2024-03-10T14:30:00Z": http.StatusOK,
		"platform/routes/settings?url=x":                   http.StatusOK,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v2/"+store.Partition+"/"+target, nil))
		if w.Code != want {
			t.Errorf("GET %s: status %d, want %d: %s", target, w.Code, want, w.Body)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v2/"+store.Partition+"/platform/health", nil))
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET" {
		t.Errorf("POST platform/health: status %d Allow %q, want 405 GET", w.Code, w.Header().Get("Allow"))
	}
}
