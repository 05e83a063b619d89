package handlers

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"credo/internal/reqctx"
)

// muxVarsKey is the context key under which mux.Vars looks for a request's route variables
// (nil if it could not be learned and confirmed: withVars then copies the request as
// mux.SetURLVars does). gorilla/mux keeps the key unexported; it is learned once
// by asking mux.Vars of a context that notes the key it is asked for, so that the v2 router
// can add the variables to the request's reqctx.Context, where every mux.Vars reader finds
// them, instead of copying the request as mux.SetURLVars does.
var muxVarsKey = varsKeyOfMux()

// keyProbe is a context that notes the last key it was asked for and answers none.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

func varsKeyOfMux() any {
	p := &keyProbe{Context: context.Background()}
	mux.Vars((&http.Request{}).WithContext(p))
	if p.key == nil {
		return nil
	}
	// Confirm that mux.Vars answers what is stored under the key learned: a gorilla/mux that
	// asked another key last would otherwise lose every v2 route's variables.
	want := map[string]string{"probe": "1"}
	got := mux.Vars((&http.Request{}).WithContext(context.WithValue(context.Background(), p.key, want)))
	if got["probe"] != "1" {
		return nil
	}
	return p.key
}

// withVars returns r with its route variables for mux.Vars: r itself when they fit in its
// request context.
func withVars(r *http.Request, vars map[string]string) *http.Request {
	if muxVarsKey == nil {
		return mux.SetURLVars(r, vars)
	}
	return withContext(r, reqctx.With(r.Context(), muxVarsKey, vars))
}

// withContext returns r with ctx as its context: r itself when ctx is its context already
// (reqctx.With added the value to it), a copy otherwise.
func withContext(r *http.Request, ctx context.Context) *http.Request {
	if ctx == r.Context() {
		return r
	}
	return r.WithContext(ctx)
}
