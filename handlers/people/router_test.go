package people_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestImportRefusesIdempotencyKey (both stores, through the router): the import does not take
// Idempotency-Key, so a request that sends it (any value) is a 400 problem naming the header
// and writes nothing, rather than the header being ignored while the client believes its
// retry safe; the document does not declare it on the import. Without the key, a retry of an
// import that was done is refused (each Identifier is already a person's) and creates no one
// twice: the import needs no key to be retried.
func TestImportRefusesIdempotencyKey(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db *engine.Database, st *engine.Store) {
		reg, p := st.Registry(), st.Partition
		srv := &handlers.Server{Registry: reg, Database: db, Auth: fixedCaller{callerA}, Authz: testauth.AllowAll{}, Modules: people.Routes()}
		h, err := srv.Handler()
		if err != nil {
			t.Fatal(err)
		}
		doc := srv.OpenAPI()
		h = openapitest.New(t, doc).Handler(h)
		var rows []row
		for i := range 3 {
			rows = append(rows, row{"Identifier": pid(i), "Email": fmt.Sprintf("retry%d@example.com", i), "FirstName": "R", "LastName": "Etry"})
		}
		body := string(encode(t, rows))
		send := func(key ...string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/v2/"+p+"/"+people.Path, strings.NewReader(body))
			for _, k := range key {
				req.Header.Add("Idempotency-Key", k)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		before := count(t, st)
		for _, key := range [][]string{{"import-1"}, {""}, {"a", "b"}} {
			rec := send(key...)
			if errs := problemOf(t, rec, http.StatusBadRequest); len(errs["Idempotency-Key"]) == 0 || len(errs) != 1 ||
				!strings.Contains(errs["Idempotency-Key"][0], "not taken by this operation") {
				t.Errorf("key %q: %s, want a 400 naming only Idempotency-Key", key, rec.Body)
			}
		}
		if after := count(t, st); after != before {
			t.Errorf("refused imports wrote: %+v, then %+v", before, after)
		}
		if rec := send(); rec.Code != http.StatusOK {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		done := count(t, st)
		if done.persons != before.persons+3 {
			t.Errorf("import made %d persons, want 3", done.persons-before.persons)
		}
		errs := problemOf(t, send(), http.StatusBadRequest)
		if n := len(errs["Identifier"]); n != 3 {
			t.Errorf("retry: Identifier problems %v, want one a row", errs)
		}
		if again := count(t, st); again != done {
			t.Errorf("the retry wrote: %+v, then %+v", done, again)
		}
		// The document declares no Idempotency-Key on the import, and says why it is refused.
		op := openAPIOperation(t, doc, "/v2/{partition}/"+people.Path, "post")
		if strings.Contains(op, `"name":"Idempotency-Key"`) || strings.Contains(op, "IdempotencyKey") ||
			!strings.Contains(op, "`Idempotency-Key` is refused") {
			t.Errorf("the import's operation: %s", op)
		}
	})
}

// openAPIOperation returns the JSON of one operation of an OpenAPI document.
func openAPIOperation(t *testing.T, doc any, path, method string) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	op, ok := d.Paths[path][method]
	if !ok {
		t.Fatalf("no %s %s in the document", method, path)
	}
	return string(op)
}
