package idempotency

import (
	"context"
	"fmt"
	"time"

	"credo/engine"
)

// PurgeEvery is how often credo serve runs Purge (handlers/housekeeping).
const PurgeEvery = 10 * time.Minute

// purgeLock names the purge for engine.Store.Exclusive.
const purgeLock = "idempotency-purge"

// Purge removes, in every partition of db, the keys past their Expires: answers kept longer
// than Retention, and the leases of processes that died while answering. A key is honoured
// only until its Expires whether or not the purge has run (a claim removes an expired row
// first); the purge keeps the table from growing with every key ever sent. On PostgreSQL a
// partition is skipped when another process is purging it (engine.Store.Exclusive). It
// returns how many keys it removed.
func (k *Keeper) Purge(ctx context.Context, db *engine.Database) (int64, error) {
	before := dateTime(k.now())
	var total int64
	for _, p := range db.Partitions() {
		st, ok := db.Store(p)
		if !ok {
			continue
		}
		t := k.t
		_, err := st.Exclusive(ctx, purgeLock, func(tx *engine.Store) error {
			n, err := tx.DeleteMatching(ctx, t.r, engine.Query{Conds: []engine.Cond{
				{Field: t.expiresBefore.Field, Op: t.expiresBefore.Op, Value: before}}}, engine.AllOrganizations())
			total += n
			return err
		})
		if err != nil {
			return total, fmt.Errorf("idempotency: purge %s: %w", p, err)
		}
	}
	return total, nil
}
