package gradebook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/gradebook"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// fixedCaller authenticates every request as one principal.
type fixedCaller struct{ p *auth.Principal }

func (f fixedCaller) Authenticate(*http.Request, string) (*auth.Principal, error) { return f.p, nil }

// TestRoutesBesideGeneratedOnes mounts the routes in the v2 router: export is not taken for a
// gradebook id, download is reachable, and other methods are 405.
func TestRoutesBesideGeneratedOnes(t *testing.T) {
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
	srv := &handlers.Server{Registry: reg, Database: db, Auth: fixedCaller{callerA}, Authz: testauth.AllowAll{},
		Modules: gradebook.Routes(gradebook.Config{})}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	h = openapitest.New(t, srv.OpenAPI()).Handler(h)
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	rec := serve(http.MethodGet, "/v2/"+p+"/progress/gradebooks/export?Format=csv")
	var x gradebook.Export
	if err := json.Unmarshal(rec.Body.Bytes(), &x); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("export: %d %s", rec.Code, rec.Body)
	}
	if rec := serve(http.MethodGet, x.DownloadUrl); rec.Code != http.StatusOK || rec.Body.String() != "GradebookIdentifier,AchievementIdentifier,EventIdentifier,FrameworkIdentifier,OrganizationIdentifier,PeriodIdentifier,IsLocked,GradebookTitle,GradebookType,LastChangeType,LastChangeUser,Reference,GradebookCreated,LastChangeTime\r\n" {
		t.Errorf("download: %d %q", rec.Code, rec.Body)
	}
	for _, c := range []struct{ method, target string }{
		{http.MethodPost, "/v2/" + p + "/progress/gradebooks/export"},
		{http.MethodDelete, x.DownloadUrl},
	} {
		if rec := serve(c.method, c.target); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow GET", c.method, c.target, rec.Code, rec.Header().Get("Allow"))
		}
	}
}
