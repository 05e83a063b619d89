package people_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/people"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

type fixedCaller struct{ p *auth.Principal }

func (f fixedCaller) Authenticate(*http.Request, string) (*auth.Principal, error) { return f.p, nil }

// TestRouteInRouter mounts the import in the v2 router: POST imports, GET is a 405.
func TestRouteInRouter(t *testing.T) {
	reg, err := registry()
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.Partition(t)
	db, err := engine.Open(context.Background(), "sqlite:"+t.TempDir(), []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := &handlers.Server{Registry: reg, Database: db, Auth: fixedCaller{callerA}, Authz: testauth.AllowAll{}, Modules: people.Routes()}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	h = openapitest.New(t, srv.OpenAPI()).Handler(h)
	body := `[{"Identifier":"` + pid(1) + `","Email":"new@example.com","FirstName":"N","LastName":"Ew"}]`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v2/"+p+"/"+people.Path, strings.NewReader(body)))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("import: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v2/"+p+"/"+people.Path, nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow %q, want 405 Allow POST", rec.Code, rec.Header().Get("Allow"))
	}
}
