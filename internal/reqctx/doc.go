// Package reqctx gives each request one context for the values its middleware learns while
// serving it (the observer's entry, the route variables, the partition's store, the caller),
// so that adding them copies neither the context nor the *http.Request.
package reqctx
