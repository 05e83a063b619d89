package engine

import (
	"context"

	"credo/internal/reqctx"
)

type storeKey struct{}

// WithStore returns a context carrying the partition's store, as the router puts it there for
// every /v2/{partition} request. On a request's own context (reqctx) that carries no store yet,
// the store is added to that context, which is returned (see reqctx.With).
func WithStore(ctx context.Context, s *Store) context.Context {
	return reqctx.With(ctx, storeKey{}, s)
}

// StoreFrom returns the request's partition store, or nil outside a partition route.
func StoreFrom(ctx context.Context) *Store {
	s, _ := ctx.Value(storeKey{}).(*Store)
	return s
}
