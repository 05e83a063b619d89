package engine

import (
	"context"
	"fmt"
)

// Exclusive runs fn in a transaction that no other process sharing the database runs under
// the same name at the same time, and reports whether it ran. On PostgreSQL it takes the
// transaction-scoped advisory lock of (partition, name) without waiting: when another process
// holds it, fn does not run and Exclusive returns false, so periodic housekeeping runs on one
// replica at a time. On SQLite the partition's file has one writer at a time anyway: the
// transaction starts with the write lock (BEGIN IMMEDIATE), so fn always runs, after any
// other writer.
func (s *Store) Exclusive(ctx context.Context, name string, fn func(tx *Store) error) (bool, error) {
	ran := false
	err := s.Transaction(ctx, func(tx *Store) error {
		if s.dialect == Postgres {
			var got bool
			key := int64(fnv32("credo-exclusive:" + s.schema + ":" + name))
			if err := tx.db.Raw("SELECT pg_try_advisory_xact_lock(?)", key).Scan(&got).Error; err != nil {
				return fmt.Errorf("engine: lock %s in %s: %w", name, s.Partition, translate(nil, err))
			}
			if !got {
				return nil
			}
		}
		ran = true
		return fn(tx)
	})
	return ran, err
}
