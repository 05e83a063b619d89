package handlers

import (
	"net/http"
	"runtime/debug"

	"credo/handlers/observe"
	"credo/handlers/problem"
)

// recoverPanics turns a panic in any handler behind it into a 500 problem document, logged
// with its stack and request id and counted, so that one bad request costs neither the
// connection nor the process. A handler that panics with http.ErrAbortHandler breaks its
// response on purpose and is let through; so is a panic after the response began, which can
// no longer become a problem document and is ended the same way.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				observe.Abort(r)
				panic(v)
			}
			observe.Panic(r, v, debug.Stack())
			if e := observe.From(r.Context()); e != nil && e.Status() != 0 {
				observe.Abort(r)
				panic(http.ErrAbortHandler)
			}
			problem.Write(w, r, problem.New(http.StatusInternalServerError, "An unexpected error occurred."))
		}()
		next.ServeHTTP(w, r)
	})
}
