package engine

import (
	"context"

	"gorm.io/gorm"
)

// withDB returns a copy of the store bound to a transaction.
func (s *Store) withDB(db *gorm.DB) *Store {
	c := *s
	c.db, c.pool = db, nil // a transaction runs everything on its own connection
	c.inTx = true
	return &c
}

// Transaction runs fn with a store bound to one database transaction. Like every statement,
// its BEGIN, COMMIT and ROLLBACK do not see ctx's cancellation on PostgreSQL (see detach); a
// failure of theirs is translated into its category. When ctx carries a Commit that no
// transaction has committed (WithCommit), an outermost transaction runs its Write after fn,
// before COMMIT; a nested one (a savepoint) that rolls back forgets the record it told the
// Commit of, which did not commit.
func (s *Store) Transaction(ctx context.Context, fn func(tx *Store) error) error {
	c := commitOf(ctx)
	if c == nil {
		return translate(s, nil, s.transaction(s.detach(ctx), fn))
	}
	if s.inTx {
		before := c.created
		err := s.transaction(s.detach(ctx), fn)
		if err != nil {
			c.created = before
		}
		return translate(s, nil, err)
	}
	c.created = nil
	err := s.transaction(s.detach(ctx), func(tx *Store) error {
		if err := fn(tx); err != nil {
			return err
		}
		return c.Write(ctx, tx, c.created)
	})
	if err == nil {
		c.committed.Store(true)
	}
	return translate(s, nil, err)
}

// transaction runs fn in a transaction on ctx as it is: start-up's, which a signal cancels.
func (s *Store) transaction(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error { return fn(s.withDB(db)) })
}
