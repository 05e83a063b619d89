package gradebook

import (
	"context"
	"errors"
	"fmt"

	"credo/engine"
)

// cleanupLock names the clean-up for engine.Store.Exclusive.
const cleanupLock = "gradebook-export-cleanup"

// Cleanup removes the partition's expired exports, records and content, and the content that
// no export owns (a write that failed or whose process died, engine.ContentOrphanAge after
// it began), in one transaction. It returns how many exports it removed. Every process runs
// it; on PostgreSQL one at a time per partition (an advisory lock: a process that finds
// another one cleaning skips its turn), and on SQLite the partition's one writer at a time.
// Each statement is a DELETE of what has expired, so a second run finds nothing to do.
func Cleanup(ctx context.Context, st *engine.Store, cfg Config) (int, error) {
	_, files, err := resourcesOf(st.Registry())
	if err != nil {
		return 0, err
	}
	before, ok := files.Filter("ExpiryBefore")
	if !ok {
		return 0, fmt.Errorf("gradebook: %s has no ExpiryBefore filter", files.Name)
	}
	now := cfg.now()
	q := engine.Query{Conds: []engine.Cond{{Field: before.Field, Op: before.Op, Value: engine.DateTime{Time: now.UTC()}}}}
	var removed int64
	_, err = st.Exclusive(ctx, cleanupLock, func(tx *engine.Store) error {
		var err error
		if removed, err = tx.DeleteMatching(ctx, files, q, engine.AllOrganizations()); err != nil {
			return err
		}
		_, err = tx.PurgeContent(ctx, files, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("gradebook: clean-up of %s: %w", st.Partition, err)
	}
	return int(removed), nil
}

// CleanupAll runs Cleanup on every partition of db and returns how many exports it removed; a
// partition that fails does not stop the others, and its error is returned with theirs.
func CleanupAll(ctx context.Context, db *engine.Database, cfg Config) (int64, error) {
	var total int64
	var errs []error
	for _, p := range db.Partitions() {
		st, ok := db.Store(p)
		if !ok {
			continue
		}
		n, err := Cleanup(ctx, st, cfg)
		total += int64(n)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}
