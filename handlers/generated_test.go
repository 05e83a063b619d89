package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"credo/engine"
	"credo/handlers"
	"credo/internal/groupsuite"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
	"credo/resources"
)

// The suite (internal/groupsuite) is generated from the descriptors: every public group,
// including the 16th group of testdata/descriptors/extra that exists only as YAML, is
// exercised through HTTP for every offered operation, every filter and sort field, and every
// operation it does not offer.

func registry(t testing.TB) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, os.DirFS("../testdata/descriptors/extra"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// testServer serves a fresh partition of a backend without authentication (the security suite
// covers authentication and scope).
type testServer struct {
	*httptest.Server
	store     *engine.Store
	partition string
}

func newTestServer(t *testing.T, b testenv.Backend, reg *engine.Registry, partitions ...string) *testServer {
	t.Helper()
	return startTestServer(t, b, reg, true, partitions)
}

// newUnvalidatedTestServer serves without the OpenAPI validator, for tests that send what no
// HTTP client would (broken bodies over a raw socket), which the validator would read first.
func newUnvalidatedTestServer(t *testing.T, b testenv.Backend, reg *engine.Registry) *testServer {
	t.Helper()
	return startTestServer(t, b, reg, false, nil)
}

func startTestServer(t *testing.T, b testenv.Backend, reg *engine.Registry, validate bool, partitions []string) *testServer {
	t.Helper()
	if len(partitions) == 0 {
		partitions = []string{testenv.Partition(t)}
	}
	db, err := engine.Open(context.Background(), b.URL, partitions, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	if validate {
		h = openapitest.New(t, srv.OpenAPI()).Handler(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	s, _ := db.Store(partitions[0])
	return &testServer{Server: ts, store: s, partition: partitions[0]}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// suite returns the server as the generated suite drives it.
func (ts *testServer) suite() *groupsuite.Server {
	return &groupsuite.Server{URL: ts.URL, Partition: ts.partition, Client: ts.Client(), Store: ts.store}
}

func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	r := ts.suite().Do(t, method, path, body, header...)
	return response{status: r.Status, header: r.Header, body: r.Body}
}

func (r response) suite() groupsuite.Response {
	return groupsuite.Response{Status: r.status, Header: r.header, Body: r.body}
}

func (r response) expect(t *testing.T, what string, status int) response {
	t.Helper()
	r.suite().Expect(t, what, status)
	return r
}

// problemNames asserts a problem+json document whose Errors name member.
func (r response) problemNames(t *testing.T, what, member string) {
	t.Helper()
	r.suite().ProblemNames(t, what, member)
}

// The generated suite's record helpers, for the other tests of this package.
var (
	sample   = groupsuite.Sample
	itemPath = groupsuite.ItemPath
	mustJSON = groupsuite.MustJSON
)

func put(t *testing.T, ts *testServer, r *engine.Resource, members map[string]any) map[string]any {
	t.Helper()
	return groupsuite.Put(t, ts.suite(), r, members)
}

func TestGeneratedGroups(t *testing.T) {
	reg := registry(t)
	if _, ok := reg.ByName("UserNote"); !ok {
		t.Fatal("the 16th group of testdata/descriptors/extra did not load")
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			for _, r := range reg.Public() {
				t.Run(r.Path, func(t *testing.T) { groupsuite.Exercise(t, ts.suite(), r) })
			}
		})
	}
}
