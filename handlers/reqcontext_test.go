package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/observe"
	"credo/handlers/route"
	"credo/internal/reqctx"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// TestRequestContextIsTheObservers: behind the observer, a v2 request is not copied again for
// what the middleware learns. A protected module route's handler gets the observer's request
// context itself (a reqctx.Context, not contexts wrapped around it), in which mux.Vars finds
// the route variables, engine.StoreFrom the partition's store, auth.FromContext the caller
// and observe.From the entry. A principal the handler derives for itself does not change the
// request's.
func TestRequestContextIsTheObservers(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := registry(t)
			p := testenv.Partition(t)
			db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			caller := testauth.Operator()
			other := &auth.Principal{UserIdentifier: "someone else"}
			var seen struct {
				isRequestContext bool
				vars             map[string]string
				store            *engine.Store
				principal        *auth.Principal
				entry            *observe.Entry
				derived          *auth.Principal
				after            *auth.Principal
			}
			thing := route.Route{Method: http.MethodGet, Path: "test/things/{Thing}", Access: route.Protected,
				Object: "test/things", Need: "Read", Tag: "platform", Summary: "A test route.",
				Handler: func(w http.ResponseWriter, r *http.Request) error {
					ctx := r.Context()
					_, seen.isRequestContext = ctx.(*reqctx.Context)
					seen.vars = mux.Vars(r)
					seen.store = engine.StoreFrom(ctx)
					seen.principal = auth.FromContext(ctx)
					seen.entry = observe.From(ctx)
					seen.derived = auth.FromContext(auth.WithPrincipal(ctx, other))
					seen.after = auth.FromContext(r.Context())
					w.WriteHeader(http.StatusNoContent)
					return nil
				}}
			srv := &handlers.Server{Registry: reg, Database: db, Auth: caller, Authz: testauth.AllowAll{},
				Modules: []route.Route{thing}, Observer: observe.New(observe.Options{Logger: slog.New(slog.DiscardHandler)})}
			h, err := srv.Handler()
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v2/"+p+"/test/things/a-thing", nil))
			if w.Code != http.StatusNoContent {
				t.Fatalf("status %d, want 204: %s", w.Code, w.Body)
			}
			if !seen.isRequestContext {
				t.Error("the handler's context is not the observer's reqctx.Context: the request was copied behind the observer")
			}
			if seen.vars["partition"] != p || seen.vars["Thing"] != "a-thing" || len(seen.vars) != 2 {
				t.Errorf("mux.Vars = %v, want partition %s and Thing a-thing", seen.vars, p)
			}
			if store, _ := db.Store(p); seen.store != store {
				t.Errorf("engine.StoreFrom = %v, want the partition's store", seen.store)
			}
			if seen.principal == nil || seen.principal.UserIdentifier != caller.Principal.UserIdentifier {
				t.Errorf("auth.FromContext = %+v, want the authenticated caller", seen.principal)
			}
			if seen.entry == nil || seen.entry.Partition != p || seen.entry.User != caller.Principal.UserIdentifier ||
				seen.entry.Route() != "/v2/{partition}/test/things/{Thing}" {
				t.Errorf("observe.From = %+v, want the entry of the request", seen.entry)
			}
			if seen.derived != other {
				t.Errorf("a principal derived in the handler is %+v, want %+v", seen.derived, other)
			}
			if seen.after != seen.principal {
				t.Errorf("after the handler derived a principal, the request's is %+v, want %+v", seen.after, seen.principal)
			}
		})
	}
}
