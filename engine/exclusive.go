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
			key := s.lockKey(name)
			if err := tx.db.Raw("SELECT pg_try_advisory_xact_lock(?)", key).Scan(&got).Error; err != nil {
				return fmt.Errorf("engine: lock %s in %s: %w", name, s.Partition, translate(s, nil, err))
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

// Serialize makes the rest of the transaction tx runs run after, never alongside, the rest of
// any other transaction, of any process sharing the database, that serializes under the same
// name in the partition, so that what it reads no concurrent writer of that kind is changing.
// On PostgreSQL it waits for the transaction-scoped advisory lock of (partition, name), which
// Exclusive also takes, held until tx ends; on SQLite the transaction already holds the
// partition's one writer (BEGIN IMMEDIATE). Outside a transaction it is an error: the lock
// would end with its own statement.
func (s *Store) Serialize(ctx context.Context, name string) error {
	if !s.inTx {
		return fmt.Errorf("engine: serialize %s in %s: not in a transaction", name, s.Partition)
	}
	if s.dialect != Postgres {
		return nil
	}
	if err := s.db.WithContext(ctx).Exec("SELECT pg_advisory_xact_lock(?)", s.lockKey(name)).Error; err != nil {
		return fmt.Errorf("engine: serialize %s in %s: %w", name, s.Partition, translate(s, nil, err))
	}
	return nil
}

// lockKey is the advisory lock key of (partition, name).
func (s *Store) lockKey(name string) int64 {
	return int64(fnv32("credo-exclusive:" + s.schema + ":" + name))
}
