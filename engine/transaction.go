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
// failure of theirs is translated into its category.
func (s *Store) Transaction(ctx context.Context, fn func(tx *Store) error) error {
	return translate(nil, s.transaction(s.detach(ctx), fn))
}

// transaction runs fn in a transaction on ctx as it is: start-up's, which a signal cancels.
func (s *Store) transaction(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error { return fn(s.withDB(db)) })
}
