package engine

import (
	"context"
	"sync/atomic"
)

// Commit is a write that must commit with a request's work or not at all: the Idempotency-Key
// keeper's mark that the key's work was done (handlers/idempotency), so that "the work
// committed" and "the key was used" are one fact. The transaction that commits the work runs
// Write after the work, before its COMMIT: the outermost Store.Transaction on a context
// carrying the Commit (WithCommit), the first one to commit. A create of a record with
// neither a write check nor computed members, which otherwise inserts without a
// transaction, runs in one when its context carries a Commit.
type Commit struct {
	// Of is the resource whose new record Write is told of: the record a create of it in the
	// work's transaction stored (the first one, not counting one of a savepoint that rolled
	// back); nil for none.
	Of *Resource
	// Write writes the mark in the work's transaction tx. created is the record of Of that the
	// work created, as stored, nil when none. An error rolls the work back and is returned
	// by the transaction as it is.
	Write func(ctx context.Context, tx *Store, created Record) error

	created   Record
	committed atomic.Bool
}

// Committed reports whether a transaction committed Write, and with it the work.
func (c *Commit) Committed() bool { return c.committed.Load() }

type commitKey struct{}

// WithCommit returns a context whose first committing transaction also runs c.Write.
func WithCommit(ctx context.Context, c *Commit) context.Context {
	return context.WithValue(ctx, commitKey{}, c)
}

// commitOf returns the Commit that ctx carries and that no transaction has committed yet,
// nil when none.
func commitOf(ctx context.Context) *Commit {
	c, _ := ctx.Value(commitKey{}).(*Commit)
	if c == nil || c.committed.Load() {
		return nil
	}
	return c
}

// note tells c of a record of r that the work inserted; c keeps the first one of c.Of.
func (c *Commit) note(r *Resource, rec Record) {
	if c.Of == r && c.created == nil {
		c.created = rec
	}
}
