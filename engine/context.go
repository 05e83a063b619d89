package engine

import "context"

type storeKey struct{}

// WithStore returns a context carrying the partition's store, as the router puts it there for
// every /v2/{partition} request.
func WithStore(ctx context.Context, s *Store) context.Context {
	return context.WithValue(ctx, storeKey{}, s)
}

// StoreFrom returns the request's partition store, or nil outside a partition route.
func StoreFrom(ctx context.Context) *Store {
	s, _ := ctx.Value(storeKey{}).(*Store)
	return s
}
